#ifndef MOAT_TEST_SDP_OFFERS_H
#define MOAT_TEST_SDP_OFFERS_H

extern const char moat_test_offer_chromium[];
extern const char moat_test_offer_firefox[];
extern const char moat_test_offer_aiortc[];
extern const char moat_test_fragment_whip[];

#endif

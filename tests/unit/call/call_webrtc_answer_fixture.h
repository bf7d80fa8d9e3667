/* Test fixture shared by test_call_webrtc_offer.c and the fuzz target
 * fuzz_call_webrtc_offer.c: the answer Moat writes to the WebRTC offer it
 * made for a call party (its offer to the WebRTC client), from fixed ICE
 * credentials, one host candidate and a fixed fingerprint. Header-only so
 * the fuzz build, which compiles the SDP sources alone, can use it. */
#ifndef MOAT_TEST_CALL_WEBRTC_ANSWER_FIXTURE_H
#define MOAT_TEST_CALL_WEBRTC_ANSWER_FIXTURE_H

#include "sdp/sdp.h"

#include <glib.h>

#define CALL_TEST_FINGERPRINT                                                                      \
    "96:9C:61:6F:9B:31:80:AD:E5:9E:BA:46:9E:68:A5:DA:02:17:7C:02:81:D9:DA:01:42:F4:94:C4:7D:E3:"   \
    "2B:45"

/* Writes Moat's answer to `offer` into *answer (g_free) with the negotiation
 * in *negotiation (g_free); returns moat_sdp_answer_create's result. The
 * candidate is host `address`:40000. */
static inline int call_test_answer_self_offer(const moat_sdp *offer, const char *address,
                                              moat_sdp_negotiation **negotiation, char **answer,
                                              char *error, size_t error_size)
{
    moat_sdp_candidate candidate = {.foundation = "1",
                                    .component = 1,
                                    .transport = "udp",
                                    .priority = 2130706431,
                                    .port = 40000,
                                    .type = "host"};
    g_strlcpy(candidate.address, address, sizeof candidate.address);
    moat_sdp_answer_params params = {.ice_ufrag = "abcdefgh",
                                     .ice_pwd = "abcdefghijklmnopqrstuvwx",
                                     .fingerprint_sha256 = CALL_TEST_FINGERPRINT,
                                     .setup = MOAT_SDP_SETUP_PASSIVE,
                                     .candidates = &candidate,
                                     .n_candidates = 1,
                                     .session_id = 1,
                                     .cname = "moat"};
    *negotiation = g_new0(moat_sdp_negotiation, 1);
    *answer = NULL;
    return moat_sdp_answer_create(offer, &params, *negotiation, answer, error, error_size);
}

#endif

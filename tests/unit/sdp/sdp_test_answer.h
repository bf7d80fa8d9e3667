/* Shared pieces of the answer tests: the gateway's parameters, and checks
 * every produced answer must pass. */
#ifndef MOAT_TEST_SDP_ANSWER_H
#define MOAT_TEST_SDP_ANSWER_H

#include <stddef.h>

#include "sdp/sdp.h"

#define LOCAL_FP                                                                                   \
    "0F:1E:2D:3C:4B:5A:69:78:87:96:A5:B4:C3:D2:E1:F0:0F:1E:2D:3C:4B:5A:69:78:87:96:A5:B4:C3:D2:"   \
    "E1:F0"
#define LOCAL_PWD "moatmoatmoatmoatmoatmoat"
/* What a remote m-line outside the BUNDLE group needs to be parsed. */
#define REMOTE_TRANSPORT                                                                           \
    "a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuv\r\n"                                     \
    "a=fingerprint:sha-256 " LOCAL_FP "\r\na=setup:actpass\r\n"

extern const moat_sdp_candidate moat_test_local_candidates[2];

moat_sdp_answer_params moat_test_answer_params(void);
/* Parses or fails the test. */
moat_sdp *moat_test_parse(const char *text);
/* Answers `offer_text` or fails the test; also checks that the answer parses
 * and agrees with the negotiation. Returns the g_malloc'd answer. */
char *moat_test_answer_ok(const char *offer_text, const moat_sdp_answer_params *params,
                          moat_sdp_negotiation *n);
/* Expects the answer to fail with `expected` in the message; frees offer_text. */
void moat_test_answer_fails(char *offer_text, const moat_sdp_answer_params *params,
                            const char *expected);
/* The text of the index-th (0-based) m= section, g_malloc'd. */
char *moat_test_section(const char *answer, size_t index);

#endif

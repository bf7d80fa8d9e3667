/* Running moat_ice_checker_handle_request in tests and judging its output. */
#ifndef MOAT_TEST_ICE_CHECK_HARNESS_H
#define MOAT_TEST_ICE_CHECK_HARNESS_H

#include "ice/ice_checker.h"

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include <stun/stunagent.h>

#define PRIORITY    0x6E7F1EFFu
#define TIE_BREAKER 0x0123456789ABCDEFull

typedef struct {
    moat_ice_check_result result;
    uint8_t reply[MOAT_ICE_REPLY_CAPACITY];
    size_t reply_length;
    moat_ice_check_info info;
} outcome;

struct sockaddr_in test_v4_sender(void); /* 198.51.100.7:40000 */
struct sockaddr_in6 test_v6_sender(const char *text, uint16_t port);

/* The checker with TEST_LOCAL_UFRAG/TEST_LOCAL_PWD and remote_ufrag; the
 * reply and info are pre-filled with a pattern first. */
moat_ice_check_result test_check_with(moat_ice_checker *c, const uint8_t *request, size_t length,
                                      const char *remote_ufrag, const struct sockaddr *from,
                                      socklen_t from_length, outcome *out);
/* The same with TEST_REMOTE_UFRAG and test_v4_sender(). */
moat_ice_check_result test_check(moat_ice_checker *c, const uint8_t *request, size_t length,
                                 outcome *out);

/* reply_length 0, the reply pattern untouched, info zeroed. */
void test_assert_nothing_written(const outcome *out);

/* The reply validates on the client that sent request and its
 * XOR-MAPPED-ADDRESS decodes to expected. */
void test_assert_reply_maps_to(StunAgent *client, const uint8_t *request, const outcome *out,
                               const struct sockaddr *expected);

/* A fresh client and its Binding request with USE-CANDIDATE, ICE-CONTROLLING
 * (TIE_BREAKER), PRIORITY, USERNAME, MESSAGE-INTEGRITY and FINGERPRINT. */
size_t test_valid_request(StunAgent *client, uint8_t *buffer, size_t capacity);

#endif

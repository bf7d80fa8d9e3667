/* The peer's side of a connectivity check, built with libnice's own client
 * code so the tests check interoperability rather than our reading of the
 * RFC against itself. */
#ifndef MOAT_TEST_STUN_TEST_CLIENT_H
#define MOAT_TEST_STUN_TEST_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stun/stunagent.h>

#define TEST_LOCAL_UFRAG  "Lk9fQm2x"
#define TEST_LOCAL_PWD    "p4ssw0rdP4SSW0RDpassw0rd"
#define TEST_REMOTE_UFRAG "rEmO"
#define TEST_USERNAME     TEST_LOCAL_UFRAG ":" TEST_REMOTE_UFRAG

/* An RFC 5389 short-term-credential agent as a full ICE peer runs it. */
void test_client_init(StunAgent *agent, bool fingerprint);

/* A Binding request from stun_usage_ice_conncheck_create. username or
 * password NULL leaves USERNAME or MESSAGE-INTEGRITY out. Returns its length
 * (aborts the test if libnice refused). */
size_t test_client_request(StunAgent *agent, uint8_t *buffer, size_t capacity, const char *username,
                           const char *password, bool use_candidate, bool controlling,
                           uint32_t priority, uint64_t tie_breaker);

#endif

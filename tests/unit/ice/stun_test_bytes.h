/* Hand-made STUN bytes for the malformed cases libnice would never build. */
#ifndef MOAT_TEST_STUN_TEST_BYTES_H
#define MOAT_TEST_STUN_TEST_BYTES_H

#include <stddef.h>
#include <stdint.h>

void test_put16(uint8_t *p, uint16_t v);

/* 20-byte header: type, body_length, magic cookie, a fixed transaction id. */
void test_put_stun_header(uint8_t *p, uint16_t type, uint16_t body_length);

/* RFC 8489 §14.7 FINGERPRINT value over the first length bytes. */
uint32_t test_stun_fingerprint(const uint8_t *data, size_t length);

#endif

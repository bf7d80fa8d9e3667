/* Scheme prn tags (SRTPPLUS.md section 3): the first 4 octets of AES-128-ECB(K_prn, B)
 * with B = ssrc || kind || 0x00 || index (48 bits) || 0x00000000. The context holds one
 * OpenSSL cipher context created once, so computing tags never sets up a key schedule. */
#ifndef SRTPPLUS_PRN_H
#define SRTPPLUS_PRN_H

#include "srtpplus_kdf.h"

#include <stddef.h>
#include <stdint.h>

/* A tag is handled as the 32-bit big-endian value of its 4 wire octets. */
struct srtpplus_prn;

int srtpplus_prn_new(const uint8_t key[SRTPPLUS_PRN_KEY_LEN], struct srtpplus_prn **out);
void srtpplus_prn_free(struct srtpplus_prn *prn);

int srtpplus_prn_tag(struct srtpplus_prn *prn, uint8_t kind, uint32_t ssrc, uint64_t index,
                     uint32_t *tag);

/* Tags of indexes first_index .. first_index + count - 1 into out[0 .. count - 1]; one
 * cipher call per internal batch, which is what makes window refills cheap. */
int srtpplus_prn_tags(struct srtpplus_prn *prn, uint8_t kind, uint32_t ssrc, uint64_t first_index,
                      size_t count, uint32_t *out);

#endif

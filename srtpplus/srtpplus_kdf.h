/* K_prn from a direction's SRTP master key and salt (SRTPPLUS.md section 2). */
#ifndef SRTPPLUS_KDF_H
#define SRTPPLUS_KDF_H

#include <stddef.h>
#include <stdint.h>

#define SRTPPLUS_PRN_KEY_LEN 16

/* HKDF-SHA256 (RFC 5869) with salt = master_salt, IKM = master_key,
 * info = "SRTP+ v1 prn", L = 16. The salt is used at its own length (14 for the
 * AES-CM profiles, 12 for AEAD-AES-128-GCM). Returns an srtpplus_status. */
int srtpplus_derive_prn_key(const uint8_t *master_key, size_t key_len, const uint8_t *master_salt,
                            size_t salt_len, uint8_t out[SRTPPLUS_PRN_KEY_LEN]);

#endif

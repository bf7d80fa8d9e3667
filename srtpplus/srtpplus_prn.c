/* Scheme prn tags (SRTPPLUS.md section 3): the first 4 octets of AES-128-ECB(K_prn, B),
 * one at a time or a run of indexes in batched cipher calls on one EVP context. */
#include "srtpplus_prn.h"
#include "srtpplus_byteorder.h"
#include "srtpplus_status.h"

#include <endian.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

enum {
    BLOCK_LEN = 16,
    /* 256 blocks (4 KiB in, 4 KiB out) keep the buffers in L1 while amortising the
     * EVP call over many blocks. */
    BATCH_BLOCKS = 256,
};

struct srtpplus_prn {
    EVP_CIPHER_CTX *ctx;
    uint8_t in[BATCH_BLOCKS * BLOCK_LEN];
    uint8_t out[BATCH_BLOCKS * BLOCK_LEN];
};

int srtpplus_prn_new(const uint8_t key[SRTPPLUS_PRN_KEY_LEN], struct srtpplus_prn **out)
{
    if (!key || !out)
        return SRTPPLUS_ERR_PARAM;
    *out = NULL;
    struct srtpplus_prn *prn = calloc(1, sizeof(*prn));
    if (!prn)
        return SRTPPLUS_ERR_NOMEM;
    prn->ctx = EVP_CIPHER_CTX_new();
    if (!prn->ctx || EVP_EncryptInit_ex(prn->ctx, EVP_aes_128_ecb(), NULL, key, NULL) != 1 ||
        EVP_CIPHER_CTX_set_padding(prn->ctx, 0) != 1) {
        srtpplus_prn_free(prn);
        return SRTPPLUS_ERR_CRYPTO;
    }
    *out = prn;
    return SRTPPLUS_OK;
}

void srtpplus_prn_free(struct srtpplus_prn *prn)
{
    if (!prn)
        return;
    EVP_CIPHER_CTX_free(prn->ctx);
    /* The buffers held tags, which are secrets until their packets are sent. */
    OPENSSL_cleanse(prn, sizeof(*prn));
    free(prn);
}

int srtpplus_prn_tags(struct srtpplus_prn *prn, uint8_t kind, uint32_t ssrc, uint64_t first_index,
                      size_t count, uint32_t *out)
{
    if (!prn || (!out && count > 0))
        return SRTPPLUS_ERR_PARAM;
    /* Octets 12..15 of every block stay zero from calloc; per block only the SSRC and
     * kind || 0x00 || index (one 64-bit big-endian store) are written. The index field
     * is 48 bits; higher bits are outside the spec's domain and are cut off. */
    uint32_t ssrc_be = htobe32(ssrc);
    uint64_t kind_field = (uint64_t)kind << 56;
    while (count > 0) {
        size_t n = count < BATCH_BLOCKS ? count : BATCH_BLOCKS;
        for (size_t i = 0; i < n; i++) {
            uint8_t *block = prn->in + i * BLOCK_LEN;
            uint64_t field = htobe64(kind_field | ((first_index + i) & 0xffffffffffffull));
            memcpy(block, &ssrc_be, 4);
            memcpy(block + 4, &field, 8);
        }
        int out_len = 0;
        if (EVP_EncryptUpdate(prn->ctx, prn->out, &out_len, prn->in, (int)(n * BLOCK_LEN)) != 1 ||
            out_len != (int)(n * BLOCK_LEN))
            return SRTPPLUS_ERR_CRYPTO;
        for (size_t i = 0; i < n; i++)
            out[i] = srtpplus_load_be32(prn->out + i * BLOCK_LEN);
        out += n;
        first_index += n;
        count -= n;
    }
    return SRTPPLUS_OK;
}

int srtpplus_prn_tag(struct srtpplus_prn *prn, uint8_t kind, uint32_t ssrc, uint64_t index,
                     uint32_t *tag)
{
    if (!tag)
        return SRTPPLUS_ERR_PARAM;
    return srtpplus_prn_tags(prn, kind, ssrc, index, 1, tag);
}

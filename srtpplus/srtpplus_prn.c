#include "srtpplus_prn.h"
#include "srtpplus_byteorder.h"
#include "srtpplus_status.h"

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

static void write_index48(uint8_t *p, uint64_t index)
{
    p[0] = (uint8_t)(index >> 40);
    p[1] = (uint8_t)(index >> 32);
    p[2] = (uint8_t)(index >> 24);
    p[3] = (uint8_t)(index >> 16);
    p[4] = (uint8_t)(index >> 8);
    p[5] = (uint8_t)index;
}

int srtpplus_prn_tags(struct srtpplus_prn *prn, uint8_t kind, uint32_t ssrc,
                      uint64_t first_index, size_t count, uint32_t *out)
{
    if (!prn || (!out && count > 0))
        return SRTPPLUS_ERR_PARAM;
    while (count > 0) {
        size_t n = count < BATCH_BLOCKS ? count : BATCH_BLOCKS;
        for (size_t i = 0; i < n; i++) {
            uint8_t *block = prn->in + i * BLOCK_LEN;
            srtpplus_store_be32(block, ssrc);
            block[4] = kind;
            block[5] = 0;
            /* The index field is 48 bits; higher bits are outside the spec's domain. */
            write_index48(block + 6, first_index + i);
            memset(block + 12, 0, 4);
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

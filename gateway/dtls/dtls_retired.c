/* The post-handshake state of a retired DTLS 1.2 association: record key
 * derivation from public OpenSSL API (RFC 5246 §6.3 key block through the
 * TLS1-PRF KDF) and authentication of the peer's alert records (AES-GCM per
 * RFC 5288/6347, ChaCha20-Poly1305 per RFC 7905). No I/O, no allocation
 * beyond OpenSSL's per-call cipher context. */
#include "dtls_retired.h"

#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/objects.h>

#include "dtls_record.h"

#define RANDOM_LENGTH        32
#define MASTER_SECRET_LENGTH 48
#define TAG_LENGTH           16
#define GCM_EXPLICIT_NONCE   8
#define NONCE_LENGTH         12
#define CONTENT_TYPE_ALERT   21
#define ALERT_LEVEL_FATAL    2
#define ALERT_CLOSE_NOTIFY   0
#define RETIRED_EPOCH        1
#define KEY_EXPANSION        "key expansion"

typedef struct {
    const char *prf_digest;
    size_t key_length;
    size_t iv_length;
} aead_shape;

static aead_shape shape_of(moat_dtls_aead aead)
{
    switch (aead) {
    case MOAT_DTLS_AEAD_AES_256_GCM:
        return (aead_shape){"SHA384", 32, 4};
    case MOAT_DTLS_AEAD_CHACHA20_POLY1305:
        return (aead_shape){"SHA256", 32, 12};
    case MOAT_DTLS_AEAD_AES_128_GCM:
    default:
        return (aead_shape){"SHA256", 16, 4};
    }
}

static const EVP_CIPHER *evp_cipher_of(moat_dtls_aead aead)
{
    switch (aead) {
    case MOAT_DTLS_AEAD_AES_256_GCM:
        return EVP_aes_256_gcm();
    case MOAT_DTLS_AEAD_CHACHA20_POLY1305:
        return EVP_chacha20_poly1305();
    case MOAT_DTLS_AEAD_AES_128_GCM:
    default:
        return EVP_aes_128_gcm();
    }
}

size_t moat_dtls_retired_overhead(moat_dtls_aead aead)
{
    return aead == MOAT_DTLS_AEAD_CHACHA20_POLY1305 ? TAG_LENGTH : GCM_EXPLICIT_NONCE + TAG_LENGTH;
}

static int aead_of_ssl(SSL *ssl, moat_dtls_aead *out)
{
    const SSL_CIPHER *cipher = SSL_get_current_cipher(ssl);
    if (cipher == NULL)
        return -1;
    switch (SSL_CIPHER_get_cipher_nid(cipher)) {
    case NID_aes_128_gcm:
        *out = MOAT_DTLS_AEAD_AES_128_GCM;
        return 0;
    case NID_aes_256_gcm:
        *out = MOAT_DTLS_AEAD_AES_256_GCM;
        return 0;
    case NID_chacha20_poly1305:
        *out = MOAT_DTLS_AEAD_CHACHA20_POLY1305;
        return 0;
    default:
        return -1;
    }
}

/* RFC 5246 §5: PRF(secret, label, seed) through OpenSSL's TLS1-PRF KDF. */
static int tls_prf(const char *digest, const uint8_t *secret, size_t secret_length,
                   const uint8_t *seed, size_t seed_length, uint8_t *out, size_t out_length)
{
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "TLS1-PRF", NULL);
    EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    EVP_KDF_free(kdf);
    if (ctx == NULL)
        return -1;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)digest, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SECRET, (void *)secret, secret_length),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SEED, (void *)seed, seed_length),
        OSSL_PARAM_construct_end(),
    };
    int ok = EVP_KDF_derive(ctx, out, out_length, params);
    EVP_KDF_CTX_free(ctx);
    return ok == 1 ? 0 : -1;
}

/* The key block of RFC 5246 §6.3 for an AEAD suite (no MAC keys):
 * client_write_key, server_write_key, client_write_IV, server_write_IV. */
static int key_block(SSL *ssl, const aead_shape *shape, uint8_t *block, size_t block_length)
{
    uint8_t master[MASTER_SECRET_LENGTH];
    uint8_t seed[sizeof KEY_EXPANSION - 1 + 2 * RANDOM_LENGTH];
    SSL_SESSION *session = SSL_get_session(ssl);
    if (session == NULL ||
        SSL_SESSION_get_master_key(session, master, sizeof master) != sizeof master)
        return -1;
    size_t label = sizeof KEY_EXPANSION - 1;
    memcpy(seed, KEY_EXPANSION, label);
    if (SSL_get_server_random(ssl, seed + label, RANDOM_LENGTH) != RANDOM_LENGTH ||
        SSL_get_client_random(ssl, seed + label + RANDOM_LENGTH, RANDOM_LENGTH) != RANDOM_LENGTH) {
        OPENSSL_cleanse(master, sizeof master);
        return -1;
    }
    int r =
        tls_prf(shape->prf_digest, master, sizeof master, seed, sizeof seed, block, block_length);
    OPENSSL_cleanse(master, sizeof master);
    return r;
}

int moat_dtls_retired_derive(SSL *ssl, bool we_are_client, moat_dtls_retired *peer,
                             moat_dtls_retired *own, char *error, size_t error_size)
{
    moat_dtls_aead aead;
    if (ssl == NULL || aead_of_ssl(ssl, &aead) != 0) {
        snprintf(error, error_size, "the negotiated cipher is not an AEAD suite we retire");
        return -1;
    }
    aead_shape shape = shape_of(aead);
    uint8_t block[2 * MOAT_DTLS_RETIRED_KEY_MAX + 2 * MOAT_DTLS_RETIRED_IV_MAX];
    size_t block_length = 2 * shape.key_length + 2 * shape.iv_length;
    if (key_block(ssl, &shape, block, block_length) != 0) {
        snprintf(error, error_size, "cannot derive the DTLS record keys");
        return -1;
    }
    const uint8_t *client_key = block, *server_key = block + shape.key_length;
    const uint8_t *client_iv = block + 2 * shape.key_length;
    const uint8_t *server_iv = client_iv + shape.iv_length;
    memset(peer, 0, sizeof *peer);
    memset(own, 0, sizeof *own);
    peer->aead = own->aead = aead;
    memcpy(peer->peer_key, we_are_client ? server_key : client_key, shape.key_length);
    memcpy(peer->peer_iv, we_are_client ? server_iv : client_iv, shape.iv_length);
    memcpy(own->peer_key, we_are_client ? client_key : server_key, shape.key_length);
    memcpy(own->peer_iv, we_are_client ? client_iv : server_iv, shape.iv_length);
    OPENSSL_cleanse(block, sizeof block);
    return 0;
}

/* The per-record nonce: GCM salt || explicit nonce, or the ChaCha20 IV
 * XORed with the 64-bit epoch || sequence number. */
static void record_nonce(const moat_dtls_retired *r, const uint8_t *header, const uint8_t *fragment,
                         uint8_t nonce[NONCE_LENGTH])
{
    if (r->aead != MOAT_DTLS_AEAD_CHACHA20_POLY1305) {
        memcpy(nonce, r->peer_iv, 4);
        memcpy(nonce + 4, fragment, GCM_EXPLICIT_NONCE);
        return;
    }
    memcpy(nonce, r->peer_iv, NONCE_LENGTH);
    for (int i = 0; i < 8; i++)
        nonce[4 + i] ^= header[3 + i]; /* epoch (2) and sequence number (6) */
}

/* AEAD-opens a two-byte alert whose fragment length was checked. */
static bool open_alert(const moat_dtls_retired *r, const uint8_t *header, const uint8_t *fragment,
                       uint8_t alert[2])
{
    size_t explicit_nonce = moat_dtls_retired_overhead(r->aead) - TAG_LENGTH;
    const uint8_t *ciphertext = fragment + explicit_nonce;
    uint8_t nonce[NONCE_LENGTH];
    record_nonce(r, header, fragment, nonce);
    /* RFC 5246 §6.2.3.3: seq_num (epoch || sequence), type, version, length. */
    uint8_t aad[13];
    memcpy(aad, header + 3, 8);
    memcpy(aad + 8, header, 3);
    aad[11] = 0;
    aad[12] = 2;

    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n = 0;
    bool ok =
        ctx != NULL && EVP_DecryptInit_ex(ctx, evp_cipher_of(r->aead), NULL, NULL, NULL) &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, NONCE_LENGTH, NULL) &&
        EVP_DecryptInit_ex(ctx, NULL, NULL, r->peer_key, nonce) &&
        EVP_DecryptUpdate(ctx, NULL, &n, aad, sizeof aad) &&
        EVP_DecryptUpdate(ctx, alert, &n, ciphertext, 2) && n == 2 &&
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG_LENGTH, (void *)(ciphertext + 2)) &&
        EVP_DecryptFinal_ex(ctx, alert + 2, &n) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* One record: DROPPED with *drop set, or the verdict of its alert. */
static moat_dtls_retired_verdict judge_record(const moat_dtls_retired *r, const uint8_t *header,
                                              const moat_dtls_record *record, unsigned *opens,
                                              moat_dtls_retired_drop *drop, uint8_t *description)
{
    if (record->content_type != CONTENT_TYPE_ALERT) {
        *drop = MOAT_DTLS_RETIRED_DROP_NOT_ALERT;
        return MOAT_DTLS_RETIRED_DROPPED;
    }
    if (record->epoch != RETIRED_EPOCH) {
        *drop = MOAT_DTLS_RETIRED_DROP_WRONG_EPOCH;
        return MOAT_DTLS_RETIRED_DROPPED;
    }
    if (record->length != moat_dtls_retired_overhead(r->aead) + 2) {
        *drop = MOAT_DTLS_RETIRED_DROP_BAD_LENGTH;
        return MOAT_DTLS_RETIRED_DROPPED;
    }
    if (*opens >= MOAT_DTLS_RETIRED_OPENS_PER_DATAGRAM) {
        *drop = MOAT_DTLS_RETIRED_DROP_OVER_BUDGET;
        return MOAT_DTLS_RETIRED_DROPPED;
    }
    (*opens)++;
    uint8_t alert[2 + 16]; /* room for a final block, though AEAD writes none */
    if (!open_alert(r, header, record->fragment, alert)) {
        *drop = MOAT_DTLS_RETIRED_DROP_BAD_TAG;
        return MOAT_DTLS_RETIRED_DROPPED;
    }
    *description = alert[1];
    if (alert[1] == ALERT_CLOSE_NOTIFY)
        return MOAT_DTLS_RETIRED_CLOSE_NOTIFY;
    if (alert[0] == ALERT_LEVEL_FATAL)
        return MOAT_DTLS_RETIRED_FATAL_ALERT;
    *drop = MOAT_DTLS_RETIRED_DROP_WARNING;
    return MOAT_DTLS_RETIRED_DROPPED;
}

moat_dtls_retired_verdict moat_dtls_retired_receive(const moat_dtls_retired *r,
                                                    const uint8_t *datagram, size_t length,
                                                    uint64_t dropped[MOAT_DTLS_RETIRED_DROP_COUNT],
                                                    uint8_t *description)
{
    size_t offset = 0;
    unsigned opens = 0;
    while (datagram != NULL && offset < length) {
        size_t at = offset;
        moat_dtls_record record;
        if (moat_dtls_record_next(datagram, length, &offset, &record) != MOAT_DTLS_RECORD_OK) {
            /* The rest of the datagram is no record. */
            dropped[MOAT_DTLS_RETIRED_DROP_BAD_LENGTH]++;
            return MOAT_DTLS_RETIRED_DROPPED;
        }
        moat_dtls_retired_drop drop = MOAT_DTLS_RETIRED_DROP_NOT_ALERT;
        moat_dtls_retired_verdict v =
            judge_record(r, datagram + at, &record, &opens, &drop, description);
        if (v != MOAT_DTLS_RETIRED_DROPPED)
            return v;
        dropped[drop]++;
    }
    return MOAT_DTLS_RETIRED_DROPPED;
}

const char *moat_dtls_retired_drop_name(moat_dtls_retired_drop reason)
{
    switch (reason) {
    case MOAT_DTLS_RETIRED_DROP_NOT_ALERT:
        return "not_alert";
    case MOAT_DTLS_RETIRED_DROP_WRONG_EPOCH:
        return "wrong_epoch";
    case MOAT_DTLS_RETIRED_DROP_BAD_LENGTH:
        return "bad_length";
    case MOAT_DTLS_RETIRED_DROP_BAD_TAG:
        return "bad_tag";
    case MOAT_DTLS_RETIRED_DROP_WARNING:
        return "warning_alert";
    case MOAT_DTLS_RETIRED_DROP_OVER_BUDGET:
        return "over_budget";
    case MOAT_DTLS_RETIRED_DROP_COUNT:
        break;
    }
    return "unknown";
}

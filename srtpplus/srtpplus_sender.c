/* The SRTP+ sender of one transport direction (SRTPPLUS.md sections 1, 3, 4): per-SSRC
 * streams made on our own first packet, the chain block added before srtp_protect and
 * the 4-octet tag appended after it, for RTP and RTCP. */
#include "srtpplus_sender.h"
#include "srtpplus_byteorder.h"
#include "srtpplus_chain.h"
#include "srtpplus_kdf.h"
#include "srtpplus_rtp.h"
#include "srtpplus_status.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdlib.h>

struct srtpplus_sender {
    struct srtpplus_sender_shared shared;
    struct srtpplus_profile_sizes sizes;
    uint32_t count;
    uint32_t capacity;
    uint32_t last_hit;
    uint32_t *ssrcs;                         /* compact, scanned per packet */
    struct srtpplus_sender_stream **streams; /* streams[i] belongs to ssrcs[i] */
};

static int openssl_random(void *arg, uint8_t *out, size_t len)
{
    return RAND_bytes(out, (int)len) == 1 ? 0 : -1;
}

void srtpplus_sender_config_init(struct srtpplus_sender_config *config, enum srtpplus_scheme scheme,
                                 enum srtpplus_profile profile)
{
    *config = (struct srtpplus_sender_config){
        .scheme = scheme,
        .profile = profile,
        .chain = {.depth = SRTPPLUS_CHAIN_DEFAULT_DEPTH, .copies = SRTPPLUS_CHAIN_DEFAULT_COPIES},
    };
}

int srtpplus_sender_new(const struct srtpplus_sender_config *config, const uint8_t *master_key,
                        size_t key_len, const uint8_t *master_salt, size_t salt_len,
                        struct srtpplus_sender **out)
{
    if (!config || !out)
        return SRTPPLUS_ERR_PARAM;
    *out = NULL;
    struct srtpplus_profile_sizes sizes;
    if (srtpplus_profile_sizes(config->profile, &sizes) != SRTPPLUS_OK ||
        key_len != sizes.master_key_len || salt_len != sizes.master_salt_len)
        return SRTPPLUS_ERR_PARAM;
    if (config->scheme != SRTPPLUS_SCHEME_PRN && config->scheme != SRTPPLUS_SCHEME_CHAIN)
        return SRTPPLUS_ERR_PARAM;
    if (config->scheme == SRTPPLUS_SCHEME_CHAIN && !srtpplus_chain_params_valid(&config->chain))
        return SRTPPLUS_ERR_PARAM;

    struct srtpplus_sender *sender = calloc(1, sizeof(*sender));
    if (!sender)
        return SRTPPLUS_ERR_NOMEM;
    sender->sizes = sizes;
    sender->capacity = config->max_ssrcs ? config->max_ssrcs : SRTPPLUS_SENDER_DEFAULT_MAX_SSRCS;
    sender->shared.scheme = config->scheme;
    sender->shared.chain = config->chain;
    sender->shared.random = config->random ? config->random : openssl_random;
    sender->shared.random_arg = config->random_arg;
    sender->ssrcs = calloc(sender->capacity, sizeof(*sender->ssrcs));
    sender->streams = calloc(sender->capacity, sizeof(*sender->streams));
    if (!sender->ssrcs || !sender->streams) {
        srtpplus_sender_free(sender);
        return SRTPPLUS_ERR_NOMEM;
    }
    uint8_t key[SRTPPLUS_PRN_KEY_LEN];
    int rc = srtpplus_derive_prn_key(master_key, key_len, master_salt, salt_len, key);
    if (rc == SRTPPLUS_OK)
        rc = srtpplus_prn_new(key, &sender->shared.prn);
    OPENSSL_cleanse(key, sizeof(key));
    if (rc != SRTPPLUS_OK) {
        srtpplus_sender_free(sender);
        return rc;
    }
    *out = sender;
    return SRTPPLUS_OK;
}

void srtpplus_sender_free(struct srtpplus_sender *sender)
{
    if (!sender)
        return;
    for (uint32_t i = 0; i < sender->count; i++) {
        srtpplus_sender_stream_release(sender->streams[i]);
        free(sender->streams[i]);
    }
    free(sender->streams);
    free(sender->ssrcs);
    srtpplus_prn_free(sender->shared.prn);
    OPENSSL_cleanse(&sender->shared, sizeof(sender->shared));
    free(sender);
}

/* Most packets belong to the SSRC of the one before. */
static inline struct srtpplus_sender_stream *find_stream(struct srtpplus_sender *sender,
                                                         uint32_t ssrc)
{
    if (sender->last_hit < sender->count && sender->ssrcs[sender->last_hit] == ssrc)
        return sender->streams[sender->last_hit];
    for (uint32_t i = 0; i < sender->count; i++) {
        if (sender->ssrcs[i] == ssrc) {
            sender->last_hit = i;
            return sender->streams[i];
        }
    }
    return NULL;
}

static int create_stream(struct srtpplus_sender *sender, uint32_t ssrc, uint32_t roc,
                         struct srtpplus_sender_stream **out)
{
    if (sender->count == sender->capacity)
        return SRTPPLUS_ERR_FULL;
    struct srtpplus_sender_stream *stream = malloc(sizeof(*stream));
    if (!stream)
        return SRTPPLUS_ERR_NOMEM;
    srtpplus_sender_stream_init(stream, ssrc, roc);
    sender->ssrcs[sender->count] = ssrc;
    sender->streams[sender->count] = stream;
    sender->last_hit = sender->count;
    sender->count++;
    *out = stream;
    return SRTPPLUS_OK;
}

int srtpplus_sender_add_ssrc(struct srtpplus_sender *sender, uint32_t ssrc, uint32_t roc)
{
    if (!sender)
        return SRTPPLUS_ERR_PARAM;
    if (find_stream(sender, ssrc))
        return SRTPPLUS_ERR_EXISTS;
    struct srtpplus_sender_stream *stream;
    return create_stream(sender, ssrc, roc, &stream);
}

size_t srtpplus_sender_rtp_overhead(const struct srtpplus_sender *sender)
{
    size_t n = SRTPPLUS_TAG_LEN;
    if (sender->shared.scheme == SRTPPLUS_SCHEME_CHAIN)
        n += srtpplus_chain_block_len(sender->shared.chain.copies);
    return n;
}

/* Index of an RTP packet from its (clear) header, making the stream if it is new. */
static inline int packet_index(struct srtpplus_sender *sender, const uint8_t *packet, size_t len,
                               struct srtpplus_sender_stream **stream, uint64_t *index)
{
    if (len < SRTPPLUS_RTP_FIXED_HEADER_LEN)
        return SRTPPLUS_ERR_MALFORMED;
    uint32_t ssrc = srtpplus_load_be32(packet + 8);
    *stream = find_stream(sender, ssrc);
    if (!*stream) {
        int rc = create_stream(sender, ssrc, 0, stream);
        if (rc != SRTPPLUS_OK)
            return rc;
    }
    return srtpplus_sender_stream_index(*stream, &sender->shared, srtpplus_load_be16(packet + 2),
                                        index);
}

int srtpplus_sender_prepare_rtp(struct srtpplus_sender *sender, uint8_t *rtp, size_t *len,
                                size_t capacity)
{
    if (!sender || !rtp || !len)
        return SRTPPLUS_ERR_PARAM;
    /* Only the fixed header matters here; chain's append checks the rest. */
    if (*len < SRTPPLUS_RTP_FIXED_HEADER_LEN || (rtp[0] >> 6) != 2)
        return SRTPPLUS_ERR_MALFORMED;
    struct srtpplus_sender_stream *stream;
    uint64_t index;
    int rc = packet_index(sender, rtp, *len, &stream, &index);
    if (rc != SRTPPLUS_OK)
        return rc;
    uint32_t tag;
    rc = srtpplus_sender_stream_tag(stream, &sender->shared, index, &tag);
    if (rc != SRTPPLUS_OK)
        return rc;
    stream->tag_pending = true;
    stream->pending_seq = (uint16_t)index;
    stream->pending_tag = tag;
    if (sender->shared.scheme != SRTPPLUS_SCHEME_CHAIN)
        return SRTPPLUS_OK;
    uint32_t tags[SRTPPLUS_CHAIN_MAX_COPIES];
    rc = srtpplus_sender_stream_chain_tags(stream, &sender->shared, index, tags);
    if (rc != SRTPPLUS_OK)
        return rc;
    return srtpplus_chain_append(rtp, len, capacity, &sender->shared.chain, tags);
}

int srtpplus_sender_append_tag_rtp(struct srtpplus_sender *sender, uint8_t *srtp, size_t *len,
                                   size_t capacity)
{
    if (!sender || !srtp || !len)
        return SRTPPLUS_ERR_PARAM;
    if (*len < sender->sizes.min_srtp_len)
        return SRTPPLUS_ERR_MALFORMED;
    if (capacity < *len || capacity - *len < SRTPPLUS_TAG_LEN)
        return SRTPPLUS_ERR_CAPACITY;
    uint32_t tag;
    struct srtpplus_sender_stream *stream = find_stream(sender, srtpplus_load_be32(srtp + 8));
    if (stream && stream->tag_pending && stream->pending_seq == srtpplus_load_be16(srtp + 2)) {
        tag = stream->pending_tag;
    } else {
        uint64_t index;
        int rc = packet_index(sender, srtp, *len, &stream, &index);
        if (rc == SRTPPLUS_OK)
            rc = srtpplus_sender_stream_tag(stream, &sender->shared, index, &tag);
        if (rc != SRTPPLUS_OK)
            return rc;
    }
    stream->tag_pending = false;
    srtpplus_store_be32(srtp + *len, tag);
    *len += SRTPPLUS_TAG_LEN;
    return SRTPPLUS_OK;
}

int srtpplus_sender_append_tag_rtcp(struct srtpplus_sender *sender, uint8_t *srtcp, size_t *len,
                                    size_t capacity)
{
    if (!sender || !srtcp || !len)
        return SRTPPLUS_ERR_PARAM;
    if (*len < sender->sizes.min_srtcp_len)
        return SRTPPLUS_ERR_MALFORMED;
    if (capacity < *len || capacity - *len < SRTPPLUS_TAG_LEN)
        return SRTPPLUS_ERR_CAPACITY;
    uint32_t ssrc = srtpplus_load_be32(srtcp + 4);
    const uint8_t *index_field = srtcp + *len - sender->sizes.srtcp_auth_len - 4;
    uint32_t index = srtpplus_load_be32(index_field) & 0x7fffffff;
    uint32_t tag;
    int rc = srtpplus_prn_tag(sender->shared.prn, SRTPPLUS_KIND_RTCP, ssrc, index, &tag);
    if (rc != SRTPPLUS_OK)
        return rc;
    srtpplus_store_be32(srtcp + *len, tag);
    *len += SRTPPLUS_TAG_LEN;
    return SRTPPLUS_OK;
}

/* The sender's state of one SSRC: the 48-bit index of each packet (ROC from the sequence
 * numbers), prn tags computed ahead in batches, and for scheme chain the future tags T[m]
 * drawn from a shared pool of random bytes. */
#include "srtpplus_sender_stream.h"
#include "srtpplus_byteorder.h"
#include "srtpplus_index.h"
#include "srtpplus_status.h"

#include <openssl/crypto.h>
#include <string.h>

#define SLOT_MASK (SRTPPLUS_SENDER_CHAIN_SLOTS - 1)

void srtpplus_sender_stream_init(struct srtpplus_sender_stream *stream, uint32_t ssrc,
                                 uint32_t initial_roc)
{
    memset(stream, 0, sizeof(*stream));
    stream->ssrc = ssrc;
    stream->initial_roc = initial_roc;
}

void srtpplus_sender_stream_release(struct srtpplus_sender_stream *stream)
{
    /* Unused future tags are what keeps an on-path attacker out; do not leave them. */
    OPENSSL_cleanse(stream, sizeof(*stream));
}

static int prn_tag(struct srtpplus_sender_stream *stream, struct srtpplus_sender_shared *shared,
                   uint64_t index, uint32_t *tag)
{
    if (index - stream->prn_lo >= stream->prn_count) {
        /* Batches keep AES calls off most packets; the count stops at the index limit. */
        uint64_t count = SRTPPLUS_RTP_INDEX_LIMIT - index;
        if (count > SRTPPLUS_SENDER_PRN_BATCH)
            count = SRTPPLUS_SENDER_PRN_BATCH;
        stream->prn_count = 0;
        int rc = srtpplus_prn_tags(shared->prn, SRTPPLUS_KIND_RTP, stream->ssrc, index,
                                   (size_t)count, stream->prn_tags);
        if (rc != SRTPPLUS_OK)
            return rc;
        stream->prn_lo = index;
        stream->prn_count = (uint32_t)count;
    }
    *tag = stream->prn_tags[index - stream->prn_lo];
    return SRTPPLUS_OK;
}

/* The chain bootstrap: T[m] = tag_prn for m < i0 + D. */
static int start_chain(struct srtpplus_sender_stream *stream, struct srtpplus_sender_shared *shared)
{
    uint32_t tags[255];
    uint64_t count = shared->chain.depth;
    if (count > SRTPPLUS_RTP_INDEX_LIMIT - stream->first)
        count = SRTPPLUS_RTP_INDEX_LIMIT - stream->first;
    int rc = srtpplus_prn_tags(shared->prn, SRTPPLUS_KIND_RTP, stream->ssrc, stream->first,
                               (size_t)count, tags);
    if (rc != SRTPPLUS_OK)
        return rc;
    for (uint64_t i = 0; i < count; i++)
        stream->future[(stream->first + i) & SLOT_MASK] = tags[i];
    stream->future_lo = stream->first;
    stream->future_hi = stream->first + count;
    return SRTPPLUS_OK;
}

int srtpplus_sender_stream_index_general(struct srtpplus_sender_stream *stream,
                                         struct srtpplus_sender_shared *shared, uint16_t seq,
                                         uint64_t *index)
{
    if (!stream->started) {
        uint64_t first = (uint64_t)stream->initial_roc << 16 | seq;
        if (first >= SRTPPLUS_RTP_INDEX_LIMIT)
            return SRTPPLUS_ERR_PARAM;
        stream->first = first;
        stream->highest = first;
        if (shared->scheme == SRTPPLUS_SCHEME_CHAIN) {
            int rc = start_chain(stream, shared);
            if (rc != SRTPPLUS_OK)
                return rc;
        }
        stream->started = true;
        *index = first;
        return SRTPPLUS_OK;
    }
    uint64_t i;
    if (!srtpplus_index_estimate(stream->highest, seq, &i))
        return SRTPPLUS_ERR_STALE;
    if (i > stream->highest)
        stream->highest = i;
    *index = i;
    return SRTPPLUS_OK;
}

static int next_random_tag(struct srtpplus_sender_shared *shared, uint32_t *tag)
{
    if (shared->random_left == 0) {
        /* Drawn straight into the pool; a tag is its 4 octets read big-endian. */
        uint8_t *bytes = (uint8_t *)shared->random_tags;
        if (shared->random(shared->random_arg, bytes, sizeof(shared->random_tags)) != 0)
            return SRTPPLUS_ERR_RANDOM;
        for (size_t i = 0; i < SRTPPLUS_SENDER_RANDOM_BATCH; i++)
            shared->random_tags[i] = srtpplus_load_be32(bytes + 4 * i);
        shared->random_left = SRTPPLUS_SENDER_RANDOM_BATCH;
    }
    *tag = shared->random_tags[SRTPPLUS_SENDER_RANDOM_BATCH - shared->random_left];
    shared->random_left--;
    return SRTPPLUS_OK;
}

/* Draws T[m] for every m up to last, in index order (tests rely on that order to
 * replay a known random sequence). */
static int draw_future(struct srtpplus_sender_stream *stream, struct srtpplus_sender_shared *shared,
                       uint64_t last)
{
    if (last - stream->future_hi >= SRTPPLUS_SENDER_CHAIN_SLOTS) {
        /* A jump past the whole ring: earlier tags would be overwritten unused. */
        stream->future_hi = last + 1 - SRTPPLUS_SENDER_CHAIN_SLOTS;
        stream->future_lo = stream->future_hi;
    }
    while (stream->future_hi <= last) {
        uint32_t tag;
        int rc = next_random_tag(shared, &tag);
        if (rc != SRTPPLUS_OK)
            return rc;
        stream->future[stream->future_hi & SLOT_MASK] = tag;
        stream->future_hi++;
    }
    if (stream->future_hi - stream->future_lo > SRTPPLUS_SENDER_CHAIN_SLOTS)
        stream->future_lo = stream->future_hi - SRTPPLUS_SENDER_CHAIN_SLOTS;
    return SRTPPLUS_OK;
}

static int chain_tag(struct srtpplus_sender_stream *stream, struct srtpplus_sender_shared *shared,
                     uint64_t m, uint32_t *tag)
{
    if (m >= SRTPPLUS_RTP_INDEX_LIMIT)
        return SRTPPLUS_ERR_STALE;
    if (m >= stream->future_hi) {
        int rc = draw_future(stream, shared, m);
        if (rc != SRTPPLUS_OK)
            return rc;
    }
    if (m >= stream->future_lo) {
        *tag = stream->future[m & SLOT_MASK];
        return SRTPPLUS_OK;
    }
    /* Below i0 + D the tag is tag_prn whether or not the ring still holds it. */
    if (m < stream->first + shared->chain.depth)
        return srtpplus_prn_tag(shared->prn, SRTPPLUS_KIND_RTP, stream->ssrc, m, tag);
    return SRTPPLUS_ERR_STALE;
}

int srtpplus_sender_stream_tag_general(struct srtpplus_sender_stream *stream,
                                       struct srtpplus_sender_shared *shared, uint64_t index,
                                       uint32_t *tag)
{
    if (shared->scheme == SRTPPLUS_SCHEME_CHAIN)
        return chain_tag(stream, shared, index, tag);
    return prn_tag(stream, shared, index, tag);
}

int srtpplus_sender_stream_chain_tags_general(struct srtpplus_sender_stream *stream,
                                              struct srtpplus_sender_shared *shared, uint64_t index,
                                              uint32_t *tags)
{
    uint64_t newest = index + shared->chain.depth;
    for (unsigned j = 0; j < shared->chain.copies; j++) {
        int rc = chain_tag(stream, shared, newest - j, &tags[j]);
        if (rc != SRTPPLUS_OK)
            return rc;
    }
    return SRTPPLUS_OK;
}

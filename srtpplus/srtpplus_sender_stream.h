/* Sender state of one SSRC: the 48-bit index of each packet it sends (ROC tracked from
 * the sequence numbers, as libsrtp does), prn tags computed ahead in batches, and for
 * scheme chain the table of future tags T[m] (SRTPPLUS.md section 4). */
#ifndef SRTPPLUS_SENDER_STREAM_H
#define SRTPPLUS_SENDER_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "srtpplus_prn.h"
#include "srtpplus_scheme.h"

#define SRTPPLUS_SENDER_PRN_BATCH 256
/* OpenSSL's RAND_bytes costs about 3.5 us per call whatever the size, plus about 2.5 ns
 * per 4 octets: drawing 4096 tags at a time keeps the call cost under 1 ns per packet. */
#define SRTPPLUS_SENDER_RANDOM_BATCH 4096
/* Future tags kept: D ahead plus room for packets sent late or resent (a power of 2). */
#define SRTPPLUS_SENDER_CHAIN_SLOTS 1024

/* A CSPRNG: fills out[0 .. len) and returns 0, or returns non-zero on failure. */
typedef int (*srtpplus_random_fn)(void *arg, uint8_t *out, size_t len);

/* What all streams of one sender share, including the pool of random future tags. */
struct srtpplus_sender_shared {
    struct srtpplus_prn *prn;
    enum srtpplus_scheme scheme;
    struct srtpplus_chain_params chain;
    srtpplus_random_fn random;
    void *random_arg;
    uint32_t random_left;
    uint32_t random_tags[SRTPPLUS_SENDER_RANDOM_BATCH];
};

struct srtpplus_sender_stream {
    uint32_t ssrc;
    uint32_t initial_roc;
    bool started;
    uint64_t highest;
    uint64_t first; /* i0 */

    /* The tag prepare computed, kept for the append that follows srtp_protect so it
     * costs a compare; cleared by that append, so it never outlives one packet. */
    bool tag_pending;
    uint16_t pending_seq;
    uint32_t pending_tag;

    uint64_t prn_lo; /* prn tags of [prn_lo, prn_lo + prn_count) */
    uint32_t prn_count;
    uint32_t prn_tags[SRTPPLUS_SENDER_PRN_BATCH];

    /* Chain: T[m] for m in [future_lo, future_hi), at future[m % SLOTS]. The sender
     * knows exactly which range it holds, so unlike the receiver's table no slot needs
     * to say which index it belongs to. */
    uint64_t future_lo, future_hi;
    uint32_t future[SRTPPLUS_SENDER_CHAIN_SLOTS];
};

void srtpplus_sender_stream_init(struct srtpplus_sender_stream *stream, uint32_t ssrc,
                                 uint32_t initial_roc);
void srtpplus_sender_stream_release(struct srtpplus_sender_stream *stream);

/* Index of the packet with sequence number seq; records it as sent. Idempotent for the
 * same packet, so both calls around srtp_protect may use it. */
int srtpplus_sender_stream_index_general(struct srtpplus_sender_stream *stream,
                                         struct srtpplus_sender_shared *shared, uint16_t seq,
                                         uint64_t *index);

static inline int srtpplus_sender_stream_index(struct srtpplus_sender_stream *stream,
                                               struct srtpplus_sender_shared *shared, uint16_t seq,
                                               uint64_t *index)
{
    /* Nearly every packet is the one after the highest sent. */
    uint64_t next = stream->highest + 1;
    if (stream->started && seq == (uint16_t)next && next < SRTPPLUS_RTP_INDEX_LIMIT) {
        stream->highest = next;
        *index = next;
        return 0;
    }
    return srtpplus_sender_stream_index_general(stream, shared, seq, index);
}

/* The SRTP+ tag packet index carries: T[index] for chain, tag_prn otherwise. */
int srtpplus_sender_stream_tag_general(struct srtpplus_sender_stream *stream,
                                       struct srtpplus_sender_shared *shared, uint64_t index,
                                       uint32_t *tag);

static inline int srtpplus_sender_stream_tag(struct srtpplus_sender_stream *stream,
                                             struct srtpplus_sender_shared *shared, uint64_t index,
                                             uint32_t *tag)
{
    if (shared->scheme == SRTPPLUS_SCHEME_CHAIN) {
        if (index - stream->future_lo < stream->future_hi - stream->future_lo) {
            *tag = stream->future[index % SRTPPLUS_SENDER_CHAIN_SLOTS];
            return 0;
        }
    } else if (index - stream->prn_lo < stream->prn_count) {
        *tag = stream->prn_tags[index - stream->prn_lo];
        return 0;
    }
    return srtpplus_sender_stream_tag_general(stream, shared, index, tag);
}

/* For chain: tags[j] = T[index + D - j], j < r, drawing new future tags as needed. */
int srtpplus_sender_stream_chain_tags_general(struct srtpplus_sender_stream *stream,
                                              struct srtpplus_sender_shared *shared, uint64_t index,
                                              uint32_t *tags);

static inline int srtpplus_sender_stream_chain_tags(struct srtpplus_sender_stream *stream,
                                                    struct srtpplus_sender_shared *shared,
                                                    uint64_t index, uint32_t *tags)
{
    /* In order: one new future tag from the pool, the rest already in the ring. */
    uint64_t newest = index + shared->chain.depth;
    uint64_t oldest = newest + 1 - shared->chain.copies;
    if (newest == stream->future_hi && shared->random_left > 0 && oldest >= stream->future_lo &&
        newest < SRTPPLUS_RTP_INDEX_LIMIT) {
        stream->future[newest % SRTPPLUS_SENDER_CHAIN_SLOTS] =
            shared->random_tags[SRTPPLUS_SENDER_RANDOM_BATCH - shared->random_left];
        shared->random_left--;
        stream->future_hi++;
        /* The slot just written held T[newest - SLOTS]: that index is no longer held. */
        if (stream->future_hi - stream->future_lo > SRTPPLUS_SENDER_CHAIN_SLOTS)
            stream->future_lo = stream->future_hi - SRTPPLUS_SENDER_CHAIN_SLOTS;
        for (unsigned j = 0; j < shared->chain.copies; j++)
            tags[j] = stream->future[(newest - j) % SRTPPLUS_SENDER_CHAIN_SLOTS];
        return 0;
    }
    return srtpplus_sender_stream_chain_tags_general(stream, shared, index, tags);
}

#endif

/* Sender state of one SSRC: the 48-bit index of each packet it sends (ROC tracked from
 * the sequence numbers, as libsrtp does), prn tags computed ahead in batches, and for
 * scheme chain the table of future tags T[m] (SRTPPLUS.md section 4). */
#ifndef SRTPPLUS_SENDER_STREAM_H
#define SRTPPLUS_SENDER_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "srtpplus_chain_table.h"
#include "srtpplus_prn.h"
#include "srtpplus_scheme.h"

#define SRTPPLUS_SENDER_PRN_BATCH 256
/* OpenSSL's RAND_bytes costs about 3.5 us per call whatever the size: drawing 1024 tags
 * at a time keeps that to a few ns per packet. */
#define SRTPPLUS_SENDER_RANDOM_BATCH 1024
/* Future tags kept: D ahead plus room for packets sent late or resent. */
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

    uint64_t prn_lo; /* prn tags of [prn_lo, prn_lo + prn_count) */
    uint32_t prn_count;
    uint32_t prn_tags[SRTPPLUS_SENDER_PRN_BATCH];

    struct srtpplus_chain_table future; /* chain only */
    uint64_t future_hi;                 /* T[m] drawn for every m < future_hi */
};

int srtpplus_sender_stream_init(struct srtpplus_sender_stream *stream, uint32_t ssrc,
                                uint32_t initial_roc, enum srtpplus_scheme scheme);
void srtpplus_sender_stream_release(struct srtpplus_sender_stream *stream);

/* Index of the packet with sequence number seq; records it as sent. Idempotent for the
 * same packet, so both calls around srtp_protect may use it. */
int srtpplus_sender_stream_index(struct srtpplus_sender_stream *stream,
                                 struct srtpplus_sender_shared *shared, uint16_t seq,
                                 uint64_t *index);

/* The SRTP+ tag packet index carries: T[index] for chain, tag_prn otherwise. */
int srtpplus_sender_stream_tag(struct srtpplus_sender_stream *stream,
                               struct srtpplus_sender_shared *shared, uint64_t index,
                               uint32_t *tag);

/* For chain: tags[j] = T[index + D - j], j < r, drawing new future tags as needed. */
int srtpplus_sender_stream_chain_tags(struct srtpplus_sender_stream *stream,
                                      struct srtpplus_sender_shared *shared,
                                      uint64_t index, uint32_t *tags);

#endif

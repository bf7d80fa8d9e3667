/* What the receiver knows about one SSRC: which indexes passed srtp_unprotect (replay
 * record, whose highest index centres the plausibility window), the precomputed prn
 * tags around it, and for scheme chain the tags learned from authenticated packets. */
#ifndef SRTPPLUS_RECEIVER_STREAM_H
#define SRTPPLUS_RECEIVER_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "srtpplus_chain.h"
#include "srtpplus_chain_table.h"
#include "srtpplus_prn.h"
#include "srtpplus_prn_window.h"
#include "srtpplus_replay.h"
#include "srtpplus_scheme.h"

/* SRTCP indexes advance once per compound packet, a few per second: a small precomputed
 * window covers every legitimate one; plausible indexes outside it are computed when
 * they arrive. */
#define SRTPPLUS_RTCP_PRECOMPUTED_BEHIND 32
#define SRTPPLUS_RTCP_PRECOMPUTED_AHEAD  96

struct srtpplus_receiver_stream {
    uint32_t ssrc;
    uint32_t initial_roc; /* ROC assumed until the first packet is authenticated */
    struct srtpplus_replay rtp_replay;
    struct srtpplus_replay rtcp_replay;
    struct srtpplus_prn_window rtp_window;  /* scheme prn */
    struct srtpplus_chain_table learned;    /* scheme chain: T[m] from authenticated packets */
    struct srtpplus_prn_window rtcp_window; /* SRTCP always uses prn */
};

int srtpplus_receiver_stream_init(struct srtpplus_receiver_stream *stream, uint32_t ssrc,
                                  uint32_t initial_roc, enum srtpplus_scheme scheme,
                                  const struct srtpplus_chain_params *chain, uint32_t behind,
                                  uint32_t ahead);
void srtpplus_receiver_stream_release(struct srtpplus_receiver_stream *stream);

/* Stores T[index + D - j] from the chain block of authenticated packet index. */
static inline void srtpplus_receiver_stream_learn(struct srtpplus_receiver_stream *stream,
                                                  uint64_t index, uint8_t depth,
                                                  const struct srtpplus_chain_block *block)
{
    uint64_t newest = index + depth;
    for (unsigned j = 0; j < block->copies; j++) {
        if (newest - j < SRTPPLUS_RTP_INDEX_LIMIT)
            srtpplus_chain_table_put(&stream->learned, newest - j, block->tags[j]);
    }
}

/* Brings both prn windows up to date; the batch work kept off the per-packet path. */
int srtpplus_receiver_stream_refill(struct srtpplus_receiver_stream *stream,
                                    struct srtpplus_prn *prn, uint64_t *tags_computed);

#endif

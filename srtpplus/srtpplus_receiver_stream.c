/* The receiver's state of one SSRC: sets up its replay records, prn windows and chain
 * table for the scheme, and refills its windows around the highest authenticated index. */
#include "srtpplus_receiver_stream.h"
#include "srtpplus_status.h"

#include <string.h>

/* The smallest chunk of tags one refill computes for the RTP window. */
enum { RTP_MIN_REFILL_CHUNK = 256, RTCP_MIN_REFILL_CHUNK = 32 };

int srtpplus_receiver_stream_init(struct srtpplus_receiver_stream *stream, uint32_t ssrc,
                                  uint32_t initial_roc, enum srtpplus_scheme scheme,
                                  const struct srtpplus_chain_params *chain, uint32_t behind,
                                  uint32_t ahead)
{
    memset(stream, 0, sizeof(*stream));
    stream->ssrc = ssrc;
    stream->initial_roc = initial_roc;
    srtpplus_replay_init(&stream->rtp_replay);
    srtpplus_replay_init(&stream->rtcp_replay);
    int rc;
    if (scheme == SRTPPLUS_SCHEME_PRN) {
        rc = srtpplus_prn_window_init(&stream->rtp_window, SRTPPLUS_KIND_RTP, ssrc, behind, ahead,
                                      RTP_MIN_REFILL_CHUNK, SRTPPLUS_RTP_INDEX_LIMIT);
    } else {
        /* Lookups reach back `behind`; tags are learned up to D ahead. */
        rc = srtpplus_chain_table_init(&stream->learned, (size_t)behind + chain->depth + 1);
        stream->rtp_window.refill_at = UINT64_MAX;
    }
    if (rc == SRTPPLUS_OK)
        rc = srtpplus_prn_window_init(
            &stream->rtcp_window, SRTPPLUS_KIND_RTCP, ssrc, SRTPPLUS_RTCP_PRECOMPUTED_BEHIND,
            SRTPPLUS_RTCP_PRECOMPUTED_AHEAD, RTCP_MIN_REFILL_CHUNK, SRTPPLUS_RTCP_INDEX_LIMIT);
    if (rc != SRTPPLUS_OK)
        srtpplus_receiver_stream_release(stream);
    return rc;
}

void srtpplus_receiver_stream_release(struct srtpplus_receiver_stream *stream)
{
    srtpplus_prn_window_release(&stream->rtp_window);
    srtpplus_prn_window_release(&stream->rtcp_window);
    srtpplus_chain_table_release(&stream->learned);
}

static int refill(struct srtpplus_prn_window *window, const struct srtpplus_replay *replay,
                  struct srtpplus_prn *prn, uint64_t *tags_computed)
{
    if (!window->tags || !replay->started ||
        !srtpplus_prn_window_wants_refill(window, replay->highest))
        return SRTPPLUS_OK;
    uint64_t old_hi = window->hi;
    int rc = srtpplus_prn_window_refill(window, prn, replay->highest);
    if (rc == SRTPPLUS_OK && tags_computed)
        *tags_computed += window->hi - (old_hi > window->lo ? old_hi : window->lo);
    return rc;
}

int srtpplus_receiver_stream_refill(struct srtpplus_receiver_stream *stream,
                                    struct srtpplus_prn *prn, uint64_t *tags_computed)
{
    int rc = refill(&stream->rtp_window, &stream->rtp_replay, prn, tags_computed);
    int rc_rtcp = refill(&stream->rtcp_window, &stream->rtcp_replay, prn, tags_computed);
    return rc != SRTPPLUS_OK ? rc : rc_rtcp;
}

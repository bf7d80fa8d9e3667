/* The playout delay a session asks of its viewer's jitter buffer
 * (http://www.webrtc.org/experiments/rtp-hdrext/playout-delay: 12 bits of
 * minimum, 12 of maximum, in 10 ms units). On a video stream whose NACKs
 * cover 1 % or more of what it sent, every packet asks for about 1.5 round
 * trips + 20 ms (at most [media] lossy_playout_delay_max_ms), so a lost
 * packet's retransmission arrives before its frame is due to be shown and
 * the picture does not freeze; under 0.3 % it asks for 0 again. The
 * session's worker only. */
#include "session/session_internal.h"

#include "engine/counters.h"
#include "engine/worker.h"
#include "rtp/rtp_bytes.h"
#include "rtp/rtp_extension_put.h"

#define PLAYOUT_ON_PERMILLE  10u
#define PLAYOUT_OFF_PERMILLE 3u
/* No NACK has closed a loss window for this many packets: the open one
 * is judged (a path that stopped losing sends no NACK to close it). */
#define PLAYOUT_STALE_PACKETS  (4u * MOAT_NACK_LOSS_WINDOW)
#define PLAYOUT_DEFAULT_RTT_MS 100u
#define PLAYOUT_FLOOR_MS       60u
/* The maximum asked: 10 s, the receivers' own default ceiling. */
#define PLAYOUT_MAX_UNITS 1000u

void moat_session_playout_init(moat_session *session)
{
    session->playout_id = 0;
    for (size_t i = 0; i < session->n_media && session->playout_id == 0; i++)
        if (session->media[i].kind == MOAT_MEDIA_KIND_VIDEO)
            session->playout_id = session->media[i].extensions.playout_delay;
}

/* The video stream an RTP packet of this SSRC (or its RTX SSRC) belongs to. */
static moat_outgoing_stream *video_stream_of(moat_session *session, uint32_t ssrc)
{
    for (size_t i = 0; i < session->n_outgoing; i++) {
        moat_outgoing_stream *s = &session->outgoing[i];
        if (s->kind == MOAT_MEDIA_KIND_VIDEO &&
            (s->ssrc == ssrc || (s->rtx_ssrc && s->rtx_ssrc == ssrc)))
            return s;
    }
    return NULL;
}

/* The stream's NACKed share, per mille: the last closed window's, or the
 * open one's once it ran PLAYOUT_STALE_PACKETS without a NACK closing it. */
static uint32_t nacked_permille(const moat_outgoing_stream *stream)
{
    uint32_t sent = stream->packets_sent - stream->nack_window_base;
    if (sent >= PLAYOUT_STALE_PACKETS)
        return (uint32_t)((uint64_t)stream->nack_window_nacked * 1000u / sent);
    return stream->nack_loss_permille;
}

/* Turns the stream's ask on at PLAYOUT_ON_PERMILLE, off under
 * PLAYOUT_OFF_PERMILLE (hysteresis: one window's noise does not flap it). */
static void update(moat_session *session, moat_outgoing_stream *stream)
{
    uint32_t permille = nacked_permille(stream);
    if (!stream->playout_on && permille >= PLAYOUT_ON_PERMILLE) {
        stream->playout_on = true;
        moat_counter_add(&moat_worker_counters_mut(session->worker)->playout_delays_asked, 1);
    } else if (stream->playout_on && permille < PLAYOUT_OFF_PERMILLE) {
        stream->playout_on = false;
    }
}

/* 1.5 round trips + 20 ms: one NACK and its retransmission, with room for
 * a frame's last packet being lost (found only with the next frame). */
static uint32_t delay_ms(const moat_session *session)
{
    uint32_t rtt_ms =
        session->rtt_us ? (uint32_t)(session->rtt_us / 1000u) : PLAYOUT_DEFAULT_RTT_MS;
    uint32_t ms = rtt_ms + rtt_ms / 2 + 20;
    if (ms < PLAYOUT_FLOOR_MS)
        ms = PLAYOUT_FLOOR_MS;
    return ms < session->playout_max_ms ? ms : session->playout_max_ms;
}

void moat_session_playout_stamp(moat_session *session, uint8_t *buffer, size_t *length,
                                size_t capacity)
{
    if (!session->playout_id || !session->playout_max_ms || *length < 12)
        return;
    moat_outgoing_stream *stream = video_stream_of(session, moat_rd32(buffer + 8));
    if (!stream)
        return;
    update(session, stream);
    if (!stream->playout_on && !stream->playout_asked)
        return;
    uint32_t min = stream->playout_on ? delay_ms(session) / 10u : 0;
    const uint8_t value[3] = {(uint8_t)(min >> 4),
                              (uint8_t)((min & 0x0f) << 4 | PLAYOUT_MAX_UNITS >> 8),
                              (uint8_t)(PLAYOUT_MAX_UNITS & 0xff)};
    if (moat_rtp_put_extension(buffer, length, capacity, session->playout_id, value, sizeof value))
        stream->playout_asked = true;
}

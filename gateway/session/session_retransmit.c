/* Retransmissions a session sends: answers to its peer's NACKs from the
 * stream's cache or the worker's shared copy (as RTX where negotiated, twice
 * on a lossy path), and repairs of packets the peer's transport-cc feedback
 * reports lost before any NACK for them came. The session's worker only. */
#include "session/session_internal.h"

#include "rtp/rtcp_feedback.h"
#include "rtp/rtp_bytes.h"
#include "rtp/rtp_packet.h"
#include "rtp/rtx.h"

#include <glib.h>
#include <string.h>

#define MOAT_RTX_BUFFER 1600
/* Retransmissions go out twice while a stream's NACKs cover 1-20 % of what
 * it sent over at least MOAT_NACK_LOSS_WINDOW packets (retransmission_copies). */
#define MOAT_NACK_COPY_MIN 10u
#define MOAT_NACK_COPY_MAX 200u

/* How many copies of a retransmission the stream's path calls for, after
 * counting this NACK's `n` sequence numbers: two when the peer NACKed
 * between MOAT_NACK_COPY_MIN and MOAT_NACK_COPY_MAX per mille of what the
 * stream sent over the last window (random loss a second copy beats at
 * the cost of that share again; above it, loss is congestion that more
 * packets would feed), else one; one too while the estimator toward a
 * transport-cc peer sees its queue grow (overuse: the loss is a full
 * queue's). */
static unsigned retransmission_copies(const moat_session *session, moat_outgoing_stream *stream,
                                      int n)
{
    stream->nack_window_nacked += n > 0 ? (uint32_t)n : 0;
    uint32_t sent = stream->packets_sent - stream->nack_window_base;
    if (sent >= MOAT_NACK_LOSS_WINDOW) {
        uint64_t permille = (uint64_t)stream->nack_window_nacked * 1000u / sent;
        stream->nack_loss_permille = (uint16_t)(permille > 1000 ? 1000 : permille);
        stream->nack_window_base = stream->packets_sent;
        stream->nack_window_nacked = 0;
    }
    if (session->bwe && moat_ssbwe_usage_now(session->bwe) == MOAT_SSBWE_OVERUSING)
        return 1;
    return stream->nack_loss_permille >= MOAT_NACK_COPY_MIN &&
                   stream->nack_loss_permille <= MOAT_NACK_COPY_MAX
               ? 2
               : 1;
}

/* The RTX packet of a cached one when the stream has an RTX SSRC and the
 * packet's codec an rtx payload type (its length); 0 to send it as it is. */
static int rtx_of(moat_session *session, moat_outgoing_stream *stream, const uint8_t *packet,
                  size_t length, uint8_t *out, size_t capacity)
{
    if (!stream->rtx_ssrc || length < 2 || stream->media_index < 0 ||
        (size_t)stream->media_index >= session->n_media)
        return 0;
    const moat_media_info *m = &session->media[stream->media_index];
    uint8_t pt = packet[1] & 0x7f, rtx_pt = 0;
    for (size_t c = 0; c < m->n_codecs && !rtx_pt; c++) {
        if (m->codecs[c].payload_type == pt)
            rtx_pt = m->codecs[c].rtx_payload_type;
    }
    if (!rtx_pt)
        return 0;
    int n = moat_rtx_wrap(packet, length, rtx_pt, stream->rtx_sequence, stream->rtx_ssrc, out,
                          capacity);
    if (n > 0)
        stream->rtx_sequence++;
    return n > 0 ? n : 0;
}

/* The packet sent as `sequence` for a resend now: rebuilt from the
 * worker's shared source when the stream forwarded it (a gone source is a
 * counted drop; *rebuilt_shared: the caller marks the resend once it went),
 * else from the stream's own cache (the resend recorded there). 0, or -1
 * with nothing to send. The stream's byte budget and the RTCP packet's
 * count (*answered) bound what is resent; refusals are counted drops and
 * leave the packet unmarked, so a later NACK or repair still has it. */
static int resend_packet(moat_session *session, moat_outgoing_stream *stream, uint16_t sequence,
                         uint64_t now, unsigned answered, uint8_t *rebuilt, const uint8_t **packet,
                         size_t *length, bool *rebuilt_shared)
{
    int status = moat_session_rebuild_forwarded(session, stream, sequence, now, rebuilt, length);
    if (status == MOAT_RTP_ERR_NO_SPACE)
        moat_session_drop(session, MOAT_DROP_NACK_GONE);
    *rebuilt_shared = status == MOAT_RTP_OK;
    if (status == MOAT_RTP_OK) {
        *packet = rebuilt;
        if (answered < MOAT_RETRANSMIT_MAX_PER_RTCP &&
            moat_retransmit_budget_take(&stream->budget, *length, now))
            return 0;
        moat_session_drop(session, MOAT_DROP_NACK_LIMIT);
        return -1;
    }
    if (status != MOAT_RTP_ERR_NOT_FOUND || !stream->cache ||
        moat_retransmit_cache_get(stream->cache, sequence, packet, length) != 0)
        return -1;
    if (answered >= MOAT_RETRANSMIT_MAX_PER_RTCP ||
        !moat_retransmit_budget_take(&stream->budget, *length, now)) {
        moat_session_drop(session, MOAT_DROP_NACK_LIMIT);
        return -1;
    }
    if (moat_retransmit_cache_resend(stream->cache, sequence, now, packet, length) != 0) {
        moat_retransmit_budget_give_back(&stream->budget, *length);
        return -1;
    }
    return 0;
}

/* Whether a packet the feedback reported lost (sent at sent_us) still
 * needs a repair: not when it was resent after that transmission left
 * (its NACK came first). A lost retransmission was itself sent at its last
 * resend, so it is repaired again. */
static bool repair_due(const moat_outgoing_stream *stream, uint16_t sequence, uint64_t sent_us)
{
    if (stream->map && moat_retransmit_map_resent_after(stream->map, sequence, sent_us))
        return false;
    return !(stream->cache && moat_retransmit_cache_resent_after(stream->cache, sequence, sent_us));
}

/* Resends the packet the stream sent as `sequence` (as RTX where
 * negotiated), `copies` times if the budget allows; how many copies went,
 * 0 when there was nothing to send (refusals counted). */
static unsigned resend_one(moat_session *session, moat_outgoing_stream *stream, uint16_t sequence,
                           unsigned answered, unsigned copies, uint64_t now)
{
    uint8_t rebuilt[MOAT_RETRANSMIT_MAX_PACKET];
    const uint8_t *packet;
    size_t length;
    bool rebuilt_shared;
    if (resend_packet(session, stream, sequence, now, answered, rebuilt, &packet, &length,
                      &rebuilt_shared) != 0)
        return 0;
    uint8_t rtx[MOAT_RTX_BUFFER];
    int wrapped = rtx_of(session, stream, packet, length, rtx, sizeof rtx);
    if (wrapped > 0) {
        packet = rtx;
        length = (size_t)wrapped;
    }
    /* The second copy pays the stream's retransmission budget too: a peer
     * NACKing on purpose gets no more than the budget allows. */
    unsigned sending =
        copies > 1 && !moat_retransmit_budget_take(&stream->budget, length, now) ? 1 : copies;
    if (moat_session_send_protected_copies(session, packet, length, false, sending) != 0)
        return 0;
    if (rebuilt_shared)
        moat_retransmit_map_mark_resent(stream->map, sequence, now);
    moat_counter_add(&moat_worker_counters_mut(session->worker)->nacked_retransmission_copies,
                     sending - 1);
    return sending;
}

void moat_session_answer_nack(moat_session *session, const moat_rtcp_fb *feedback,
                              unsigned *answered)
{
    moat_outgoing_stream *stream = moat_session_outgoing_stream(session, feedback->media_ssrc);
    if (!stream || (!stream->cache && !stream->map))
        return;
    uint16_t sequences[256];
    int n = moat_rtcp_nack_expand(feedback, sequences, G_N_ELEMENTS(sequences));
    unsigned copies = retransmission_copies(session, stream, n);
    uint64_t now = moat_worker_now_us(session->worker);
    moat_counters *counters = moat_worker_counters_mut(session->worker);
    for (int i = 0; i < n; i++) {
        if (resend_one(session, stream, sequences[i], *answered, copies, now) == 0)
            continue;
        (*answered)++;
        moat_counter_add(&counters->nacked_retransmissions, 1);
    }
}

void moat_session_note_sent(moat_session *session, const uint8_t *packet, size_t length,
                            uint16_t transport_sequence)
{
    if (!session->twcc_sent || length < 12)
        return;
    moat_twcc_sent *entry = &session->twcc_sent[transport_sequence % MOAT_TWCC_SENT_HISTORY];
    entry->kind = MOAT_TWCC_SENT_NONE;
    uint32_t ssrc = moat_rd32(packet + 8);
    for (size_t i = 0; i < session->n_outgoing && i <= UINT8_MAX; i++) {
        const moat_outgoing_stream *stream = &session->outgoing[i];
        if (ssrc == stream->ssrc) {
            *entry = (moat_twcc_sent){transport_sequence, moat_rd16(packet + 2), (uint8_t)i,
                                      MOAT_TWCC_SENT_MEDIA};
            return;
        }
        /* An RTX packet carries what it repairs first in its payload;
         * padding-only probes repair nothing. */
        moat_rtp_header header;
        if (ssrc == stream->rtx_ssrc && stream->rtx_ssrc &&
            moat_rtp_parse(packet, length, &header) == MOAT_RTP_OK && !header.padding &&
            header.payload_length >= 2) {
            *entry = (moat_twcc_sent){transport_sequence, moat_rd16(packet + header.payload_offset),
                                      (uint8_t)i, MOAT_TWCC_SENT_RTX};
            return;
        }
    }
}

void moat_session_repair_lost(moat_session *session)
{
    uint16_t lost[MOAT_SSBWE_LOST_QUEUE];
    size_t n = moat_ssbwe_take_lost(session->bwe, lost, G_N_ELEMENTS(lost));
    if (!session->twcc_sent)
        return;
    uint64_t now = moat_worker_now_us(session->worker);
    unsigned answered = 0;
    for (size_t i = 0; i < n; i++) {
        const moat_twcc_sent *entry = &session->twcc_sent[lost[i] % MOAT_TWCC_SENT_HISTORY];
        int64_t sent_us = moat_ssbwe_sent_us(session->bwe, lost[i]);
        if (entry->kind == MOAT_TWCC_SENT_NONE || entry->transport_sequence != lost[i] ||
            sent_us < 0 || entry->stream >= session->n_outgoing)
            continue;
        moat_outgoing_stream *stream = &session->outgoing[entry->stream];
        if (!stream->nack || !repair_due(stream, entry->sequence, (uint64_t)sent_us))
            continue;
        unsigned copies = retransmission_copies(session, stream, 0);
        if (resend_one(session, stream, entry->sequence, answered, copies, now) == 0)
            continue;
        answered++;
        moat_counter_add(&moat_worker_counters_mut(session->worker)->feedback_repairs, 1);
    }
}

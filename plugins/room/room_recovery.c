/* Publisher streams on their way in: padding, duplicates, NACKs and
 * keyframe requests for what was lost (room_recovery.h). */
#include "room_recovery.h"

#include "rtp/rtcp_feedback.h"
#include "rtp/rtcp_packet.h"
#include "rtp/rtp_packet.h"

#include <string.h>

/* A packet this much older than the newest seen is a sender's restart,
 * not a late one. */
#define LATE_WINDOW 1000

static bool newer16(uint16_t a, uint16_t b)
{
    return (int16_t)(uint16_t)(a - b) > 0;
}

static bool codec_nacks(const room_peer *peer, int media_index, uint8_t pt)
{
    if (media_index < 0 || (size_t)media_index >= peer->n_media)
        return false;
    const moat_media_info *m = &peer->media[media_index];
    for (size_t c = 0; c < m->n_codecs; c++) {
        if (m->codecs[c].payload_type == pt)
            return (m->codecs[c].rtcp_fb & MOAT_RTCP_FB_NACK) != 0;
    }
    return false;
}

/* The stream of `p`, a free slot taken for a new one; NULL when full. */
static room_recovery_stream *stream_of(room_peer *peer, const moat_rtp_packet *p)
{
    if (!peer->recovery)
        peer->recovery = g_new0(room_recovery, 1);
    room_recovery_stream *free_slot = NULL;
    for (size_t i = 0; i < ROOM_RECOVERY_STREAMS; i++) {
        room_recovery_stream *s = &peer->recovery->streams[i];
        if (s->ssrc == p->ssrc) {
            s->last_us = p->arrival_us;
            return s;
        }
        bool idle = s->ssrc != 0 && p->arrival_us - s->last_us >= ROOM_RECOVERY_IDLE_US;
        if ((s->ssrc == 0 || idle) && !free_slot)
            free_slot = s; /* a new SSRC (renegotiation) takes an idle one */
    }
    if (!free_slot)
        return NULL;
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->ssrc = p->ssrc;
    free_slot->last_us = p->arrival_us;
    free_slot->media_index = p->media_index;
    free_slot->video = p->kind == MOAT_MEDIA_KIND_VIDEO;
    free_slot->nack =
        room_config.nack_publishers && codec_nacks(peer, p->media_index, p->payload_type);
    moat_nack_init(&free_slot->tracker);
    return free_slot;
}

static uint32_t sender_ssrc(const room_peer *peer)
{
    for (size_t i = 0; i < peer->n_media; i++) {
        if (peer->media[i].local_ssrc)
            return peer->media[i].local_ssrc;
    }
    return 1;
}

/* NACKs what is due; a keyframe when video losses were given up. */
static void send_due(room_peer *peer, room_recovery_stream *s, uint64_t now_us)
{
    if (!s->nack || (s->tracker.n_missing == 0 && s->tracker.overflowed == 0))
        return;
    uint16_t lost[ROOM_RECOVERY_NACK_MAX];
    size_t gave_up = 0;
    size_t n = moat_nack_due(&s->tracker, now_us, lost, ROOM_RECOVERY_NACK_MAX, &gave_up);
    room_recovery_stats *stats = &peer->recovery_stats;
    if (n > 0) {
        uint8_t buffer[16 + 4 * ROOM_RECOVERY_NACK_MAX];
        moat_rtcp_writer writer;
        moat_rtcp_writer_init(&writer, buffer, sizeof buffer);
        if (moat_rtcp_build_nack(&writer, sender_ssrc(peer), s->ssrc, lost, n) == MOAT_RTP_OK &&
            peer->gateway->send_rtcp(peer->handle, buffer, writer.length) == 0) {
            atomic_fetch_add_explicit(&stats->nack_packets, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&stats->nacked, n, memory_order_relaxed);
        }
    }
    if (gave_up > 0) {
        atomic_fetch_add_explicit(&stats->given_up, gave_up, memory_order_relaxed);
        if (s->video && peer->gateway->request_keyframe(peer->handle, s->media_index) >= 0)
            atomic_fetch_add_explicit(&stats->keyframe_requests, 1, memory_order_relaxed);
    }
    atomic_store_explicit(&stats->rtt_us, moat_nack_rtt_us(&s->tracker), memory_order_relaxed);
}

/* Padding drops newer than `seq` (in the ring). */
static uint16_t drops_after(const room_recovery_stream *s, uint16_t seq)
{
    uint16_t n = 0;
    for (size_t i = 0; i < s->n_drops; i++) {
        if (newer16(s->drops[i], seq))
            n++;
    }
    return n;
}

bool room_recovery_on_packet(room_peer *peer, moat_rtp_packet *p)
{
    room_recovery_stream *s = stream_of(peer, p);
    room_recovery_stats *stats = &peer->recovery_stats;
    if (!s)
        return true; /* more streams than we follow: relayed as they come */
    if (s->nack) {
        moat_nack_verdict v = moat_nack_on_packet(&s->tracker, p->sequence, p->arrival_us);
        if (v == MOAT_NACK_REPAIRED)
            atomic_fetch_add_explicit(&stats->repaired, 1, memory_order_relaxed);
        if (v == MOAT_NACK_DUPLICATE || v == MOAT_NACK_TOO_OLD) {
            atomic_fetch_add_explicit(&stats->duplicates, 1, memory_order_relaxed);
            return false;
        }
        send_due(peer, s, p->arrival_us);
    }
    /* Older than the newest seen, by less than a restart's jump. */
    bool late = s->started && !newer16(p->sequence, s->newest) &&
                (uint16_t)(s->newest - p->sequence) < LATE_WINDOW;
    if (!late) {
        s->started = true;
        s->newest = p->sequence;
    }
    if (p->payload_length == 0 && late) {
        /* Padding that comes after a newer packet was relayed: the packets
         * after it were numbered without it, so it leaves a hole (closing
         * up now would give the next packet a number already used). */
        atomic_fetch_add_explicit(&stats->padding_dropped, 1, memory_order_relaxed);
        return false;
    }
    if (p->payload_length == 0) {
        /* Padding only (a sender's bandwidth probe): nothing to relay, and
         * the packets after it close up (subscribers see no loss). */
        s->dropped++;
        s->drops[s->next_drop] = p->sequence;
        s->next_drop = (s->next_drop + 1) % ROOM_RECOVERY_DROPS;
        if (s->n_drops < ROOM_RECOVERY_DROPS)
            s->n_drops++;
        atomic_fetch_add_explicit(&stats->padding_dropped, 1, memory_order_relaxed);
        return false;
    }
    if (s->dropped) {
        /* In order after the last drop (the usual case): all of them. */
        uint16_t last = s->drops[(s->next_drop + ROOM_RECOVERY_DROPS - 1) % ROOM_RECOVERY_DROPS];
        uint16_t after = newer16(p->sequence, last) ? 0 : drops_after(s, p->sequence);
        uint16_t shift = (uint16_t)(s->dropped - after);
        p->sequence = (uint16_t)(p->sequence - shift);
        moat_rtp_set_sequence(p->data, p->sequence);
    }
    return true;
}

void room_recovery_tick(room_peer *peer, uint64_t now_us)
{
    if (!peer->recovery)
        return;
    for (size_t i = 0; i < ROOM_RECOVERY_STREAMS; i++) {
        if (peer->recovery->streams[i].ssrc)
            send_due(peer, &peer->recovery->streams[i], now_us);
    }
}

void room_recovery_free(room_peer *peer)
{
    g_free(peer->recovery);
    peer->recovery = NULL;
}

void room_recovery_describe(const room_peer *peer, json_t *out)
{
    const room_recovery_stats *s = &peer->recovery_stats;
    json_t *o = json_object();
    json_object_set_new(o, "nack_packets", json_integer((json_int_t)atomic_load(&s->nack_packets)));
    json_object_set_new(o, "nacked", json_integer((json_int_t)atomic_load(&s->nacked)));
    json_object_set_new(o, "repaired", json_integer((json_int_t)atomic_load(&s->repaired)));
    json_object_set_new(o, "given_up", json_integer((json_int_t)atomic_load(&s->given_up)));
    json_object_set_new(o, "keyframe_requests",
                        json_integer((json_int_t)atomic_load(&s->keyframe_requests)));
    json_object_set_new(o, "duplicates", json_integer((json_int_t)atomic_load(&s->duplicates)));
    json_object_set_new(o, "padding_dropped",
                        json_integer((json_int_t)atomic_load(&s->padding_dropped)));
    json_object_set_new(o, "rtt_ms", json_integer((json_int_t)atomic_load(&s->rtt_us) / 1000));
    json_object_set_new(out, "recovery", o);
}

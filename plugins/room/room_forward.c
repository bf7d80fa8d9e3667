/* Rewriting a publisher's packet for one subscriber (room_forward.h). */
#include "room_forward.h"
#include "room_simulcast.h"

#include "rtp/rtp_packet.h"
#include "rtp/rtp_rewrite.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

/* A simulcast layer's SSRC of the source, as last seen. */
static bool is_layer(const room_peer *s, uint32_t ssrc)
{
    for (size_t l = 0; l < s->n_source_layers; l++) {
        if (s->layer_ssrcs[l] == ssrc)
            return true;
    }
    return false;
}

static bool publisher_layer(room_peer *p, uint32_t ssrc)
{
    for (size_t l = 0; l < p->n_layers; l++) {
        if (atomic_load(&p->layers[l].ssrc) == ssrc)
            return true;
    }
    return false;
}

/* The publisher codec table for the packet's SSRC, refreshed from the room
 * when the SSRC is one the subscriber has not mapped yet. */
static const room_codec *source_codec(room_peer *s, uint32_t ssrc, uint8_t pt)
{
    bool found_layer = false; /* a simulcast layer room_simulcast.c maps next */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < s->n_source_codecs; i++) {
            const room_codec *c = &s->source_codecs[i];
            int k = c->kind == MOAT_MEDIA_KIND_VIDEO ? 1 : 0;
            bool layer = k == 1 && (found_layer || is_layer(s, ssrc));
            if (c->payload_type == pt && (s->codecs_for_ssrc[k] == ssrc || layer))
                return c;
        }
        if (pass == 1)
            break;
        /* Which publisher sends `ssrc`? Publishers are alive under the lock. */
        room *r = s->room;
        bool found = false;
        pthread_mutex_lock(&r->lock);
        for (size_t i = 0; i < r->n_publishers && !found; i++) {
            room_peer *p = r->publishers[i];
            for (int k = 0; k < 2 && !found; k++) {
                if (atomic_load(&p->ssrcs[k]) != ssrc && (k == 0 || !publisher_layer(p, ssrc)))
                    continue;
                memcpy(s->source_codecs, p->codecs, sizeof p->codecs);
                s->n_source_codecs = p->n_codecs;
                s->codecs_for_ssrc[0] = atomic_load(&p->ssrcs[0]);
                s->codecs_for_ssrc[1] = atomic_load(&p->ssrcs[1]);
                s->source_codecs_version++;
                found_layer = k == 1 && publisher_layer(p, ssrc);
                found = true;
            }
        }
        pthread_mutex_unlock(&r->lock);
        if (!found)
            return NULL;
    }
    return NULL;
}

/* The subscriber's m-line and payload type for `codec`, or -1. */
static int subscriber_line(const room_peer *s, const room_codec *codec, uint8_t *pt)
{
    for (size_t i = 0; i < s->n_media; i++) {
        const moat_media_info *m = &s->media[i];
        if (m->kind != codec->kind || !m->peer_receives || m->local_ssrc == 0)
            continue;
        for (size_t c = 0; c < m->n_codecs; c++) {
            if (strcasecmp(m->codecs[c].name, codec->name) == 0 &&
                m->codecs[c].clock_rate == codec->clock_rate) {
                *pt = m->codecs[c].payload_type;
                return (int)i;
            }
        }
    }
    return -1;
}

/* subscriber_line once per source codec: a codec name comparison per m-line
 * and codec is per packet and subscriber work otherwise. */
static int cached_subscriber_line(room_peer *s, const room_codec *codec, uint8_t *pt)
{
    int k = codec->kind == MOAT_MEDIA_KIND_VIDEO ? 1 : 0;
    if (s->line_cache[k].codec != codec || s->line_cache[k].version != s->source_codecs_version) {
        s->line_cache[k].codec = codec;
        s->line_cache[k].version = s->source_codecs_version;
        s->line_cache[k].line = subscriber_line(s, codec, &s->line_cache[k].payload_type);
    }
    *pt = s->line_cache[k].payload_type;
    return s->line_cache[k].line;
}

/* A video packet's descriptor (VP8/VP9), false when it has none. */
static bool descriptor_of(const room_codec *codec, const moat_rtp_packet *p,
                          moat_video_descriptor *d)
{
    return codec->kind == MOAT_MEDIA_KIND_VIDEO &&
           moat_video_descriptor_parse(codec->video_codec, p->data + p->payload_offset,
                                       p->payload_length, d) == MOAT_RTP_OK;
}

/* Temporal layers above the subscriber's are dropped and the numbers of
 * what passes closed up (room_temporal.h); false: drop the packet. The
 * maps restart with each source (its numbers are another sequence). */
static bool temporal_filter(room_peer *s, room_out_stream *out, bool source_changed,
                            const room_codec *codec, moat_rtp_packet *p, moat_video_descriptor *d,
                            bool has_descriptor, uint16_t *sequence)
{
    if (!out->started || source_changed) {
        room_gap_init(&out->sequence_gaps, 0xffff);
        room_gap_init(&out->picture_gaps, d->picture_id_bits == 7 ? 0x7f : 0x7fff);
    }
    if (has_descriptor && d->has_tid) {
        moat_keyframe_info info;
        bool keyframe = d->begins_frame && d->tid == 0 &&
                        moat_rtp_keyframe(codec->video_codec, p->data + p->payload_offset,
                                          p->payload_length, &info);
        if (!room_temporal_packet(&s->temporal, d, keyframe)) {
            room_gap_drop(&out->sequence_gaps, p->sequence);
            if (d->picture_id_bits)
                room_gap_drop(&out->picture_gaps, d->picture_id);
            return false;
        }
    }
    if (!room_gap_forward(&out->sequence_gaps, p->sequence, sequence))
        return false;
    if (has_descriptor && d->picture_id_bits) {
        uint16_t picture;
        if (!room_gap_forward(&out->picture_gaps, d->picture_id, &picture))
            return false;
        d->picture_id = picture;
    }
    return true;
}

/* VP8/VP9: the picture id (closed up over temporal drops) and TL0PICIDX
 * continue across source changes; the rewrite says where they go. */
static void rewrite_picture(room_out_stream *out, bool source_changed,
                            const moat_video_descriptor *d, moat_rtp_rewrite *rw)
{
    if (d->picture_id_bits == 0 && !d->has_tl0picidx)
        return;
    uint16_t picture;
    uint8_t tl0;
    moat_picture_map_apply(&out->picture, source_changed, d, &picture, &tl0);
    if (d->picture_id_bits && d->picture_id_offset <= UINT8_MAX) {
        rw->flags |= MOAT_RTP_REWRITE_PICTURE;
        rw->picture_id_bits = d->picture_id_bits;
        rw->picture_id_offset = (uint8_t)d->picture_id_offset;
        rw->picture_id = picture;
    }
    if (d->has_tl0picidx && d->tl0picidx_offset <= UINT8_MAX) {
        rw->flags |= MOAT_RTP_REWRITE_TL0PICIDX;
        rw->tl0picidx_offset = (uint8_t)d->tl0picidx_offset;
        rw->tl0picidx = tl0;
    }
}

/* The packet rewritten and sent. The gateway keeps the publisher's packet
 * once per worker and this subscriber's rewrite for NACKs
 * (send_rtp_forward); an older gateway gets the rewritten packet. The key
 * names the publisher's stream: the room's space and its SSRC. */
static int send_forwarded(room_peer *s, moat_rtp_packet *p, const moat_rtp_rewrite *rw)
{
    size_t length = p->length;
    if (s->gateway->send_rtp_forward) {
        uint64_t key = (uint64_t)s->room->source_space << 32 | p->ssrc;
        return s->gateway->send_rtp_forward(s->handle, p->data, &length, key, rw);
    }
    if (moat_rtp_rewrite_apply(p->data, &length, rw) != MOAT_RTP_OK)
        return -1;
    return s->gateway->send_rtp(s->handle, p->data, length);
}

static bool newer16(uint16_t a, uint16_t b)
{
    return (int16_t)(a - b) > 0;
}

int room_forward(room_peer *s, moat_rtp_packet *p, moat_media_kind *kind)
{
    const room_codec *codec = source_codec(s, p->ssrc, p->payload_type);
    uint8_t pt;
    int line = codec ? cached_subscriber_line(s, codec, &pt) : -1;
    if (line < 0 || room_simulcast_forward(s, p, codec) != 0)
        return -1;
    *kind = codec->kind;
    if (atomic_load_explicit(&s->muted[codec->kind == MOAT_MEDIA_KIND_VIDEO ? 1 : 0],
                             memory_order_relaxed))
        return -1; /* configured off (room_message.c) */
    room_out_stream *out = &s->out[codec->kind == MOAT_MEDIA_KIND_VIDEO ? 1 : 0];
    uint32_t out_ssrc = s->media[line].local_ssrc;
    int relay_layer = s->relay && codec->kind == MOAT_MEDIA_KIND_VIDEO
                          ? room_simulcast_relay_layer(s, p->ssrc)
                          : -1;
    if (relay_layer >= 0) {
        /* A cascade leg: each layer its own stream, as the source sent it. */
        if ((size_t)relay_layer >= s->media[line].n_local_layers)
            return -1;
        out = &s->relay_out[relay_layer];
        out_ssrc = s->media[line].local_layer_ssrcs[relay_layer];
    }
    uint64_t now = s->gateway->now_us();
    bool source_changed = out->started && out->source_ssrc != p->ssrc;
    moat_video_descriptor vd = {0};
    bool has_descriptor = descriptor_of(codec, p, &vd);
    uint16_t in_sequence; /* the source's, closed up over temporal drops */
    if (!temporal_filter(s, out, source_changed, codec, p, &vd, has_descriptor, &in_sequence))
        return -1;
    if (!out->started || out->source_ssrc != p->ssrc) {
        if (out->started) {
            /* A new source continues where the last one stopped. */
            uint64_t gap = (now - out->last_us) * codec->clock_rate / 1000000u;
            out->sequence_delta = (uint16_t)(out->last_sequence + 1 - in_sequence);
            out->timestamp_delta = (uint32_t)(out->last_timestamp + gap + 1 - p->timestamp);
        }
        out->started = true;
        out->source_ssrc = p->ssrc;
        out->last_sequence = (uint16_t)(in_sequence + out->sequence_delta - 1);
        out->last_timestamp = p->timestamp + out->timestamp_delta;
    }
    uint16_t sequence = (uint16_t)(in_sequence + out->sequence_delta);
    uint32_t timestamp = p->timestamp + out->timestamp_delta;
    if (newer16(sequence, out->last_sequence)) {
        out->last_sequence = sequence;
        out->last_timestamp = timestamp;
        out->last_us = now;
    }
    moat_rtp_rewrite rw = {
        .ssrc = out_ssrc,
        .timestamp = timestamp,
        .sequence = sequence,
        .payload_type = pt,
        .flags = MOAT_RTP_REWRITE_STRIP_EXTENSIONS,
    };
    if (has_descriptor)
        rewrite_picture(out, source_changed, &vd, &rw);
    return send_forwarded(s, p, &rw);
}

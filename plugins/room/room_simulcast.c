/* Simulcast layers of publishers and the layer of each subscriber
 * (room_simulcast.h). */
#include "room_simulcast.h"

#include "rtp/rtcp_feedback.h"
#include "rtp/rtcp_packet.h"

#include <stdio.h>
#include <string.h>

#define LAYER_WINDOW_US      1000000u /* bitrate measurement */
#define LAYER_STALE_US       2000000u /* a layer silent this long sends nothing */
#define LAYER_SSRC_CHANGE_US 1000000u /* a layer takes a new SSRC at most this often */

void room_simulcast_publisher_init(room_peer *peer)
{
    for (size_t i = 0; i < peer->n_media; i++) {
        const moat_media_info *m = &peer->media[i];
        if (m->kind != MOAT_MEDIA_KIND_VIDEO || !m->peer_sends || m->n_rids == 0)
            continue;
        size_t n = m->n_rids < ROOM_MAX_LAYERS ? m->n_rids : ROOM_MAX_LAYERS;
        for (size_t l = 0; l < n; l++)
            g_strlcpy(peer->layers[l].rid, m->rids[l], sizeof peer->layers[l].rid);
        peer->n_layers = n;
        return;
    }
}

static int layer_by_rid(const room_peer *peer, const char *rid)
{
    for (size_t l = 0; l < peer->n_layers && rid[0]; l++) {
        if (strcmp(peer->layers[l].rid, rid) == 0)
            return (int)l;
    }
    return -1;
}

static int layer_by_ssrc(const room_peer *peer, uint32_t ssrc)
{
    for (size_t l = 0; l < peer->n_layers; l++) {
        if (atomic_load_explicit(&peer->layers[l].ssrc, memory_order_relaxed) == ssrc)
            return (int)l;
    }
    return -1;
}

static const room_codec *codec_of(const room_peer *peer, uint8_t pt)
{
    for (size_t i = 0; i < peer->n_codecs; i++) {
        if (peer->codecs[i].kind == MOAT_MEDIA_KIND_VIDEO && peer->codecs[i].payload_type == pt)
            return &peer->codecs[i];
    }
    return NULL;
}

/* Bitrates over LAYER_WINDOW_US (the layer's, and its temporal layers'
 * when `tid` >= 0); a layer silent for LAYER_STALE_US reads 0. */
static void measure(room_peer *peer, int layer, size_t bytes, int tid, uint64_t now)
{
    for (size_t l = 0; l < peer->n_layers; l++) {
        room_layer *x = &peer->layers[l];
        if (x->window_us != 0 && now - x->window_us >= LAYER_STALE_US) {
            atomic_store_explicit(&x->bitrate_bps, 0, memory_order_relaxed);
            for (int t = 0; t < ROOM_TEMPORAL_LAYERS; t++)
                atomic_store_explicit(&x->temporal_bps[t], 0, memory_order_relaxed);
        }
    }
    room_layer *x = &peer->layers[layer];
    if (x->window_us == 0 || now - x->window_us >= LAYER_STALE_US) {
        x->window_us = now;
        x->window_bytes = 0;
        memset(x->temporal_bytes, 0, sizeof x->temporal_bytes);
    }
    x->window_bytes += bytes;
    if (tid >= 0)
        x->temporal_bytes[tid < ROOM_TEMPORAL_ALL ? tid : ROOM_TEMPORAL_ALL] += bytes;
    uint64_t elapsed = now - x->window_us;
    if (elapsed >= LAYER_WINDOW_US) {
        atomic_store_explicit(&x->bitrate_bps, (unsigned)(x->window_bytes * 8000000u / elapsed),
                              memory_order_relaxed);
        for (int t = 0; t < ROOM_TEMPORAL_LAYERS; t++)
            atomic_store_explicit(&x->temporal_bps[t],
                                  (unsigned)(x->temporal_bytes[t] * 8000000u / elapsed),
                                  memory_order_relaxed);
        x->window_us = now;
        x->window_bytes = 0;
        memset(x->temporal_bytes, 0, sizeof x->temporal_bytes);
    }
}

/* The packet's temporal layer, -1 when its codec carries none. */
static int temporal_layer(const room_codec *codec, const moat_rtp_packet *p)
{
    moat_video_descriptor d;
    if (!codec ||
        moat_video_descriptor_parse(codec->video_codec, p->data + p->payload_offset,
                                    p->payload_length, &d) != MOAT_RTP_OK ||
        !d.has_tid)
        return -1;
    return d.tid;
}

/* The layer moves to the packet's SSRC: at most once per
 * LAYER_SSRC_CHANGE_US (an encoder restarts rarely; a publisher sending a
 * new SSRC per packet made each subscriber worker keep a retransmission
 * copy per SSRC), and not to another publisher's (room_ssrc.c). Refusals
 * are counted; false: the packet is dropped. */
static bool claim_layer(room_peer *peer, room_layer *x, uint32_t ssrc, uint64_t now)
{
    if (atomic_load_explicit(&x->ssrc, memory_order_relaxed) == ssrc)
        return true;
    if (x->ssrc_changed && now - x->ssrc_changed_us < LAYER_SSRC_CHANGE_US) {
        atomic_fetch_add_explicit(&peer->ssrc_changes_refused, 1, memory_order_relaxed);
        return false;
    }
    if (!room_ssrc_claim(peer, &x->ssrc, ssrc))
        return false;
    x->ssrc_changed = true;
    x->ssrc_changed_us = now;
    return true;
}

int room_simulcast_layer_of(room_peer *peer, const moat_rtp_packet *p)
{
    if (peer->n_layers == 0)
        return -1;
    int layer = layer_by_rid(peer, p->rid);
    if (layer >= 0 && p->repaired)
        /* A retransmission repairs the layer's current stream or nothing: it
         * never moves the layer (nor counts as a change). */
        return atomic_load_explicit(&peer->layers[layer].ssrc, memory_order_relaxed) == p->ssrc
                   ? layer
                   : -1;
    if (layer >= 0)
        return claim_layer(peer, &peer->layers[layer], p->ssrc, p->arrival_us) ? layer : -1;
    return layer_by_ssrc(peer, p->ssrc);
}

void room_simulcast_measure(room_peer *peer, int layer, const moat_rtp_packet *p)
{
    if (layer < 0 || (size_t)layer >= peer->n_layers || p->payload_length == 0 || p->repaired)
        return; /* padding only (room.c drops it), or a retransmission (RTX: Chromium
                   probes its path with them): not the layer's bitrate */
    /* The header and payload, without padding (Firefox pads its low layer
     * up to several times its media rate). */
    const room_codec *codec = codec_of(peer, p->payload_type);
    measure(peer, layer, p->payload_offset + p->payload_length, temporal_layer(codec, p),
            p->arrival_us);
    moat_keyframe_info info;
    if (codec &&
        moat_rtp_keyframe(codec->video_codec, p->data + p->payload_offset, p->payload_length,
                          &info) &&
        info.width) {
        atomic_store_explicit(&peer->layers[layer].width, info.width, memory_order_relaxed);
        atomic_store_explicit(&peer->layers[layer].height, info.height, memory_order_relaxed);
    }
}

bool room_simulcast_wants(const room_peer *s, int layer)
{
    if (layer < 0)
        return true;
    unsigned mask = atomic_load_explicit(&s->layer_mask, memory_order_relaxed);
    /* No choice yet: the subscriber chooses on its first packet. */
    return mask == 0 || (mask & (1u << layer)) != 0;
}

/* What subscribers asked of this publisher since its last video packet:
 * a keyframe on every layer, or on the layers they switch to (one PLI per
 * layer: the other layers' viewers are not sent a keyframe they did not
 * need; a gateway without per-layer requests asks for all). */
void room_simulcast_ask_keyframes(room_peer *peer, int video_index)
{
    unsigned layers = atomic_exchange(&peer->keyframe_layers, 0u);
    if (atomic_exchange(&peer->keyframe_wanted, false) ||
        (layers && !peer->gateway->request_layer_keyframe)) {
        peer->gateway->request_keyframe(peer->handle, video_index);
        return;
    }
    for (size_t l = 0; l < ROOM_MAX_LAYERS && layers; l++) {
        uint32_t ssrc = l < peer->n_layers ? atomic_load(&peer->layers[l].ssrc) : 0;
        if (!(layers & (1u << l)))
            continue;
        if (ssrc == 0 || peer->gateway->request_layer_keyframe(peer->handle, video_index, ssrc) < 0)
            peer->gateway->request_keyframe(peer->handle, video_index);
    }
}

/* ---- subscriber ---- */

/* The source's layers (room lock taken here): SSRCs, and bitrates when
 * asked. A new source starts a new choice. */
static void refresh_source(room_peer *s, uint32_t *bitrates,
                           uint32_t (*temporal)[ROOM_TEMPORAL_LAYERS])
{
    room *r = s->room;
    pthread_mutex_lock(&r->lock);
    const room_peer *source = s->source;
    size_t n = source ? source->n_layers : 0;
    for (size_t l = 0; l < ROOM_MAX_LAYERS; l++) {
        s->layer_ssrcs[l] = l < n ? atomic_load(&source->layers[l].ssrc) : 0;
        if (bitrates)
            bitrates[l] = l < n ? atomic_load(&source->layers[l].bitrate_bps) : 0;
        for (int t = 0; temporal && t < ROOM_TEMPORAL_LAYERS; t++)
            temporal[l][t] = l < n ? atomic_load(&source->layers[l].temporal_bps[t]) : 0;
    }
    s->n_source_layers = n;
    pthread_mutex_unlock(&r->lock);
    if (source != s->layer_source) {
        uint64_t estimate = s->layer.estimate_bps;
        room_layers_init(&s->layer);
        s->layer.estimate_bps = estimate;
        room_temporal_init(&s->temporal);
        s->layer_source = source;
        atomic_store(&s->layer_pinned, false);
    }
}

static int subscriber_layer(const room_peer *s, uint32_t ssrc)
{
    for (size_t l = 0; l < s->n_source_layers; l++) {
        if (s->layer_ssrcs[l] == ssrc)
            return (int)l;
    }
    return -1;
}

/* An API request, taken once. */
static void take_request(room_peer *s, uint64_t now)
{
    int request = atomic_exchange(&s->layer_request, ROOM_LAYER_REQUEST_NONE);
    if (request == ROOM_LAYER_REQUEST_NONE)
        return;
    s->layer.pinned = request != ROOM_LAYER_REQUEST_AUTO;
    atomic_store(&s->layer_pinned, s->layer.pinned);
    if (s->layer.pinned && (size_t)request < s->n_source_layers)
        room_layers_set_target(&s->layer, request, now);
}

/* Temporal layers are dropped only on the lowest spatial layer (the
 * least bitrate sending), once it is current: above it, a lower spatial
 * layer comes first. */
static void choose_temporal(room_peer *s, const uint32_t *bitrates,
                            const uint32_t (*temporal)[ROOM_TEMPORAL_LAYERS], uint64_t now)
{
    int lowest = -1;
    for (size_t l = 0; l < s->n_source_layers; l++) {
        if (bitrates[l] > 0 && (lowest < 0 || bitrates[l] < bitrates[lowest]))
            lowest = (int)l;
    }
    int current = s->layer.current;
    if (lowest < 0 || current != lowest || s->layer.target != current) {
        s->temporal.target = ROOM_TEMPORAL_ALL;
        return;
    }
    s->temporal.target = room_temporal_choose(room_layers_estimate(&s->layer, now),
                                              temporal[current], s->temporal.target);
}

static void choose(room_peer *s, const uint32_t *bitrates,
                   const uint32_t (*temporal)[ROOM_TEMPORAL_LAYERS], uint64_t now)
{
    take_request(s, now);
    int target = room_layers_choose(&s->layer, bitrates, s->n_source_layers, now);
    if (target < 0 && s->layer.target < 0 && s->n_source_layers > 0)
        target = (int)s->n_source_layers - 1; /* nothing measured yet: the last listed */
    bool step_down = target != s->layer.target &&
                     room_layers_is_step_down(&s->layer, target, bitrates, s->n_source_layers);
    room_layers_set_target(&s->layer, target, now);
    if (step_down)
        room_layers_drop_current(&s->layer);
    choose_temporal(s, bitrates, temporal, now);
}

/* The publisher is asked through its flags, read on its worker: for the
 * layer this subscriber waits for (every layer before it has a target). */
static void ask_source_keyframe(room_peer *s)
{
    int target = s->layer.target;
    pthread_mutex_lock(&s->room->lock);
    if (s->source && target >= 0 && target < ROOM_MAX_LAYERS)
        atomic_fetch_or(&s->source->keyframe_layers, 1u << target);
    else if (s->source)
        atomic_store(&s->source->keyframe_wanted, true);
    pthread_mutex_unlock(&s->room->lock);
}

void room_simulcast_viewer_keyframe(room_peer *s)
{
    int current = s->layer.current;
    pthread_mutex_lock(&s->room->lock);
    room_peer *source = s->source;
    if (source && source == s->layer_source && current >= 0 && current < ROOM_MAX_LAYERS)
        atomic_fetch_or(&source->keyframe_layers, 1u << current);
    else if (source)
        atomic_store(&source->keyframe_wanted, true);
    pthread_mutex_unlock(&s->room->lock);
}

static void publish_state(room_peer *s)
{
    atomic_store_explicit(&s->layer_mask, room_layers_mask(&s->layer), memory_order_relaxed);
    atomic_store_explicit(&s->layer_current, s->layer.current, memory_order_relaxed);
    atomic_store_explicit(&s->layer_target, s->layer.target, memory_order_relaxed);
    atomic_store_explicit(&s->temporal_current, s->temporal.current, memory_order_relaxed);
    atomic_store_explicit(&s->temporal_target, s->temporal.target, memory_order_relaxed);
    atomic_store_explicit(&s->layer_estimate_bps,
                          room_layers_estimate(&s->layer, s->gateway->now_us()),
                          memory_order_relaxed);
    if (s->layer.keyframe_wanted) {
        s->layer.keyframe_wanted = false;
        ask_source_keyframe(s);
    }
}

/* "layer_switched" on the room's topic. Names are [A-Za-z0-9_-]. */
static void switched_event(room_peer *s, int layer)
{
    if (!s->gateway->publish_event)
        return;
    char rid[MOAT_PLUGIN_RID_SIZE] = "", publisher[ROOM_PEER_ID_SIZE] = "";
    pthread_mutex_lock(&s->room->lock);
    if (s->source && (size_t)layer < s->source->n_layers) {
        g_strlcpy(rid, s->source->layers[layer].rid, sizeof rid);
        g_strlcpy(publisher, s->source->id, sizeof publisher);
    }
    pthread_mutex_unlock(&s->room->lock);
    char topic[ROOM_NAME_SIZE + 8], json[320];
    snprintf(topic, sizeof topic, "rooms/%s", s->room->name);
    snprintf(json, sizeof json,
             "{\"type\":\"layer_switched\",\"room\":\"%s\",\"role\":\"subscriber\",\"id\":\"%s\","
             "\"publisher\":\"%s\",\"rid\":\"%s\"}",
             s->room->name, s->id, publisher, rid);
    s->gateway->publish_event(topic, json);
}

/* None of the source's layers was seen: its video comes plain (a cascade
 * leg fed by a source without layers; a local publisher's layer packets
 * are learned before they are relayed). */
static bool no_layer_seen(const room_peer *s)
{
    for (size_t l = 0; l < s->n_source_layers; l++) {
        if (s->layer_ssrcs[l])
            return false;
    }
    return true;
}

int room_simulcast_relay_layer(room_peer *s, uint32_t ssrc)
{
    if (ssrc == s->plain_ssrc)
        return -1;
    int layer = subscriber_layer(s, ssrc);
    if (layer >= 0)
        return layer;
    refresh_source(s, NULL, NULL);
    layer = subscriber_layer(s, ssrc);
    if (layer < 0)
        s->plain_ssrc = ssrc; /* until the source changes */
    return layer;
}

bool room_simulcast_relay_keyframe(room_peer *s, const moat_rtcp_fb *fb)
{
    uint32_t ssrcs[4];
    size_t n = 0;
    if (moat_rtcp_fb_is_pli(fb)) {
        ssrcs[n++] = fb->media_ssrc;
    } else {
        moat_rtcp_fir_entry entries[4];
        int count = moat_rtcp_parse_fir(fb, entries, 4);
        for (int i = 0; i < count && n < 4; i++)
            ssrcs[n++] = entries[i].ssrc;
    }
    unsigned layers = 0;
    for (size_t i = 0; i < s->n_media; i++) {
        const moat_media_info *m = &s->media[i];
        for (size_t l = 0; l < m->n_local_layers && l < ROOM_MAX_LAYERS; l++) {
            for (size_t k = 0; k < n; k++)
                layers |= (m->local_layer_ssrcs[l] == ssrcs[k]) ? 1u << l : 0u;
        }
    }
    if (!layers)
        return false;
    pthread_mutex_lock(&s->room->lock);
    if (s->source)
        atomic_fetch_or(&s->source->keyframe_layers, layers);
    pthread_mutex_unlock(&s->room->lock);
    return true;
}

int room_simulcast_forward(room_peer *s, const moat_rtp_packet *p, const room_codec *codec)
{
    if (codec->kind != MOAT_MEDIA_KIND_VIDEO || p->ssrc == s->plain_ssrc || s->relay)
        return 0;
    int layer = subscriber_layer(s, p->ssrc);
    if (layer < 0 || s->layer.target < 0) {
        uint32_t bitrates[ROOM_MAX_LAYERS], temporal[ROOM_MAX_LAYERS][ROOM_TEMPORAL_LAYERS];
        refresh_source(s, bitrates, temporal);
        layer = subscriber_layer(s, p->ssrc);
        if (layer < 0 && (s->n_source_layers == 0 || no_layer_seen(s))) {
            s->plain_ssrc = p->ssrc;
            return 0;
        }
        if (layer < 0)
            return -1; /* a layer not learned yet */
        if (s->layer.target < 0)
            choose(s, bitrates, temporal, p->arrival_us);
    }
    moat_keyframe_info info;
    bool keyframe = moat_rtp_keyframe(codec->video_codec, p->data + p->payload_offset,
                                      p->payload_length, &info);
    room_layer_verdict verdict = room_layers_packet(
        &s->layer, layer, keyframe, codec->video_codec != MOAT_VIDEO_CODEC_UNKNOWN, p->arrival_us);
    publish_state(s);
    if (verdict == ROOM_LAYER_SWITCHED)
        switched_event(s, layer);
    return verdict == ROOM_LAYER_DROP ? -1 : 0;
}

void room_simulcast_tick(room_peer *s, uint64_t now_us)
{
    if (s->publisher || s->layer_source == NULL || s->relay)
        return;
    uint32_t bitrates[ROOM_MAX_LAYERS], temporal[ROOM_MAX_LAYERS][ROOM_TEMPORAL_LAYERS];
    refresh_source(s, bitrates, temporal);
    if (s->n_source_layers == 0)
        return;
    room_bwe_update(s, bitrates, s->n_source_layers, now_us);
    choose(s, bitrates, temporal, now_us);
    publish_state(s);
}

/* The SSRC we send video on, 0 none. */
static uint32_t video_ssrc(const room_peer *s)
{
    for (size_t i = 0; i < s->n_media; i++) {
        if (s->media[i].kind == MOAT_MEDIA_KIND_VIDEO && s->media[i].peer_receives)
            return s->media[i].local_ssrc;
    }
    return 0;
}

void room_simulcast_feedback(room_peer *s, const uint8_t *packet, size_t length, uint64_t now_us)
{
    if (s->publisher || s->bwe.active || moat_rtcp_check_compound(packet, length) <= 0)
        return; /* with transport-cc the sender-side estimate decides (room_bwe.c) */
    uint32_t ssrc = video_ssrc(s);
    moat_rtcp_iter it;
    moat_rtcp_header h;
    moat_rtcp_iter_init(&it, packet, length);
    while (moat_rtcp_iter_next(&it, &h) > 0) {
        moat_rtcp_fb fb;
        moat_rtcp_remb remb;
        moat_rtcp_rr rr;
        if (h.type == MOAT_RTCP_PSFB && moat_rtcp_parse_fb(&h, &fb) == MOAT_RTP_OK &&
            moat_rtcp_fb_is_remb(&fb) && moat_rtcp_parse_remb(&fb, &remb) == MOAT_RTP_OK)
            room_layers_on_remb(&s->layer, remb.bitrate, now_us);
        if (h.type != MOAT_RTCP_RR || moat_rtcp_parse_rr(&h, &rr) != MOAT_RTP_OK)
            continue;
        for (size_t i = 0; i < rr.n_reports; i++) {
            if (rr.reports[i].ssrc == ssrc && ssrc != 0)
                room_layers_on_loss(&s->layer, rr.reports[i].fraction_lost, now_us);
        }
    }
}

bool room_simulcast_layered(const room_peer *p)
{
    if (p->n_layers == 0)
        return false;
    if (!p->relay)
        return true;
    uint64_t plain = atomic_load_explicit(&p->relay_plain_us, memory_order_relaxed);
    uint64_t layer = atomic_load_explicit(&p->relay_layer_us, memory_order_relaxed);
    return plain == 0 || (layer != 0 && layer + LAYER_STALE_US > plain);
}

/* ---- JSON ---- */

json_t *room_simulcast_describe_publisher(const room_peer *p)
{
    if (!room_simulcast_layered(p))
        return NULL;
    json_t *layers = json_array();
    for (size_t l = 0; l < p->n_layers; l++) {
        const room_layer *x = &p->layers[l];
        json_t *o =
            json_pack("{s:s, s:I, s:I}", "rid", x->rid, "ssrc", (json_int_t)atomic_load(&x->ssrc),
                      "bitrate_bps", (json_int_t)atomic_load(&x->bitrate_bps));
        if (atomic_load(&x->width)) {
            json_object_set_new(o, "width", json_integer(atomic_load(&x->width)));
            json_object_set_new(o, "height", json_integer(atomic_load(&x->height)));
        }
        json_t *temporal = json_array();
        unsigned any = 0;
        for (int t = 0; t < ROOM_TEMPORAL_LAYERS; t++) {
            unsigned bps = atomic_load(&x->temporal_bps[t]);
            any |= bps;
            json_array_append_new(temporal, json_integer(bps));
        }
        if (any)
            json_object_set_new(o, "temporal_bps", temporal); /* by TID */
        else
            json_decref(temporal);
        json_array_append_new(layers, o);
    }
    return layers;
}

static json_t *rid_or_null(const room_peer *source, int layer)
{
    return layer >= 0 && (size_t)layer < source->n_layers ? json_string(source->layers[layer].rid)
                                                          : json_null();
}

json_t *room_simulcast_describe_subscriber(const room_peer *s)
{
    if (!s->source || !room_simulcast_layered(s->source))
        return NULL;
    /* The highest TID forwarded and wanted (ROOM_TEMPORAL_ALL: all). */
    return json_pack("{s:o, s:o, s:s, s:I, s:i, s:i}", "current",
                     rid_or_null(s->source, atomic_load(&s->layer_current)), "target",
                     rid_or_null(s->source, atomic_load(&s->layer_target)), "mode",
                     atomic_load(&s->layer_pinned) ? "pinned" : "auto", "estimate_bps",
                     (json_int_t)atomic_load(&s->layer_estimate_bps), "temporal_current",
                     atomic_load(&s->temporal_current), "temporal_target",
                     atomic_load(&s->temporal_target));
}

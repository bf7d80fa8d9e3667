/* The room plugin (plugin API v2): publishers join with WHIP on
 * /whip/room/<room>, subscribers with WHEP on /whep/room/<room>[/<publisher>].
 * A publisher's packets go to its subscribers through its fan-out list
 * (room_fanout.c: one shared copy, one ring slot per worker), simulcast
 * layers through relay_rtp_many; each subscriber rewrites its copy on its
 * own worker (room_forward.c). This file owns the plugin table, attach/detach
 * and joining and leaving rooms. */
#include "room.h"
#include "room_fanout.h"
#include "room_forward.h"
#include "room_recovery.h"
#include "room_simulcast.h"

#include "rtp/rtcp_feedback.h"
#include "rtp/rtcp_packet.h"

#include <stdio.h>
#include <string.h>

/* Written by init before any attach, cleared by destroy after the last
 * detach. */
const moat_gateway_calls *room_gateway;

static int room_init(const moat_gateway_calls *gateway)
{
    if (!gateway || !gateway->relay_rtp_many || !gateway->request_keyframe || !gateway->set_timer ||
        !gateway->send_rtp)
        return -1;
    room_gateway = gateway;
    room_settings_load(gateway);
    room_registry_init();
    return 0;
}

static void room_destroy(void)
{
    room_registry_destroy();
    room_gateway = NULL;
}

static room_peer *find_publisher(room *r, const char *id)
{
    for (size_t i = 0; i < r->n_publishers; i++) {
        if (!id[0] || strcmp(r->publishers[i]->id, id) == 0)
            return r->publishers[i];
    }
    return NULL;
}

/* Adds the peer to the room's lists; NULL or the refusal (plugin.h error
 * prefixes). */
const char *room_join(room *r, room_peer *peer, const char *source_id)
{
    const char *error = NULL;
    pthread_mutex_lock(&r->lock);
    r->empty_since_us = 0; /* occupied: does not expire (room_registry_expire) */
    if (peer->publisher) {
        if (r->n_publishers >= (size_t)r->max_publishers) {
            error = MOAT_PLUGIN_ERROR_FULL "the room has its maximum of publishers";
        } else {
            snprintf(peer->id, sizeof peer->id, "p%" G_GUINT64_FORMAT, (guint64)++r->serial);
            r->publishers[r->n_publishers++] = peer;
            room_event(r, "joined", "publisher", peer->id, NULL);
        }
    } else {
        room_peer *source = find_publisher(r, source_id);
        if (!source) {
            error = source_id[0] ? MOAT_PLUGIN_ERROR_NOT_FOUND "no such publisher in the room"
                                 : MOAT_PLUGIN_ERROR_NOT_FOUND "the room has no publisher";
        } else if (r->n_subscribers >= ROOM_MAX_SUBSCRIBERS ||
                   (!peer->cascade_leg &&
                    r->n_subscribers - r->n_cascade_legs >= (size_t)r->max_subscribers)) {
            error = MOAT_PLUGIN_ERROR_FULL "the room has its maximum of subscribers";
        } else {
            r->n_cascade_legs += peer->cascade_leg;
            snprintf(peer->id, sizeof peer->id, "s%" G_GUINT64_FORMAT, (guint64)++r->serial);
            g_strlcpy(peer->source_id, source_id, sizeof peer->source_id);
            peer->source = source;
            memcpy(peer->source_codecs, source->codecs, sizeof source->codecs);
            peer->n_source_codecs = source->n_codecs;
            r->subscribers[r->n_subscribers++] = peer;
            /* A new viewer needs a keyframe. */
            atomic_store(&source->keyframe_wanted, true);
            room_event(r, "joined", "subscriber", peer->id, source->id);
            room_fanout_rebuild(r);
        }
    }
    pthread_mutex_unlock(&r->lock);
    return error;
}

/* Subscribers of a leaving publisher follow the next one (when they did not
 * pick it by id) or are told to leave. Room lock held. */
static void reassign_subscribers(room *r, room_peer *gone)
{
    room_peer *next = r->n_publishers ? r->publishers[0] : NULL;
    for (size_t i = 0; i < r->n_subscribers; i++) {
        room_peer *s = r->subscribers[i];
        if (s->source != gone)
            continue;
        if (!s->source_id[0] && next) {
            s->source = next;
            atomic_store(&next->keyframe_wanted, true);
            room_event(r, "publisher_changed", "subscriber", s->id, next->id);
        } else {
            s->source = NULL;
            atomic_store(&s->leave, true);
        }
    }
}

void room_leave(room_peer *peer)
{
    room *r = peer->room;
    pthread_mutex_lock(&r->lock);
    if (peer->publisher) {
        for (size_t i = 0; i < r->n_publishers; i++) {
            if (r->publishers[i] == peer) {
                memmove(&r->publishers[i], &r->publishers[i + 1],
                        (r->n_publishers - i - 1) * sizeof r->publishers[0]);
                r->n_publishers--;
                break;
            }
        }
        room_event(r, "left", "publisher", peer->id, NULL);
        reassign_subscribers(r, peer);
        room_note_speaker(r, peer->gateway->now_us());
    } else {
        for (size_t i = 0; i < r->n_subscribers; i++) {
            if (r->subscribers[i] == peer) {
                r->subscribers[i] = r->subscribers[--r->n_subscribers];
                r->n_cascade_legs -= peer->cascade_leg;
                room_event(r, "left", "subscriber", peer->id, NULL);
                break;
            }
        }
    }
    room_fanout_rebuild(r);
    pthread_mutex_unlock(&r->lock);
}

static void take_codecs(room_peer *peer)
{
    for (size_t i = 0; i < peer->n_media; i++) {
        const moat_media_info *m = &peer->media[i];
        if (!m->peer_sends || m->kind == MOAT_MEDIA_KIND_APPLICATION)
            continue;
        for (size_t c = 0; c < m->n_codecs && peer->n_codecs < ROOM_MAX_CODECS; c++) {
            room_codec *codec = &peer->codecs[peer->n_codecs++];
            codec->payload_type = m->codecs[c].payload_type;
            codec->kind = m->kind;
            g_strlcpy(codec->name, m->codecs[c].name, sizeof codec->name);
            codec->clock_rate = m->codecs[c].clock_rate;
            codec->video_codec = moat_video_codec_from_name(codec->name);
        }
    }
}

/* "<room>" or "<room>/<publisher id>" */
static room *room_of(const char *resource, bool create, char *source, size_t source_size,
                     const char **error)
{
    const char *slash = strchr(resource, '/');
    size_t length = slash ? (size_t)(slash - resource) : strlen(resource);
    source[0] = '\0';
    if (slash)
        g_strlcpy(source, slash + 1, source_size);
    if (!room_name_valid(resource, length) || (slash && !room_name_valid(source, strlen(source)))) {
        *error = MOAT_PLUGIN_ERROR_NOT_FOUND "bad room or publisher name";
        return NULL;
    }
    char name[ROOM_NAME_SIZE];
    memcpy(name, resource, length);
    name[length] = '\0';
    room *r = room_acquire(name, create);
    if (!r)
        *error = MOAT_PLUGIN_ERROR_NOT_FOUND "no such room";
    return r;
}

static void arm_timer(room_peer *peer);

static void *room_attach(moat_plugin_session *handle, const moat_session_info *info,
                         const char **error)
{
    if (!room_gateway || !info || !info->endpoint || !info->resource ||
        info->n_media > MOAT_PLUGIN_MAX_MEDIA) {
        *error = "room plugin: bad session";
        return NULL;
    }
    bool publisher = strcmp(info->endpoint, "whip") == 0;
    char source[ROOM_PEER_ID_SIZE + 8];
    room *r = room_of(info->resource, publisher, source, sizeof source, error);
    if (!r)
        return NULL;
    if (publisher && source[0]) {
        room_release(r);
        *error = MOAT_PLUGIN_ERROR_NOT_FOUND "publish to /whip/room/<room>";
        return NULL;
    }
    room_peer *peer = g_new0(room_peer, 1);
    peer->handle = handle;
    peer->gateway = room_gateway;
    peer->room = r;
    peer->publisher = publisher;
    peer->relay = info->cascade;
    peer->cascade_leg = !publisher && info->cascade;
    g_strlcpy(peer->session_id, info->session_id ? info->session_id : "", sizeof peer->session_id);
    peer->worker = info->worker_index;
    peer->n_media = info->n_media;
    peer->media = g_new0(moat_media_info, info->n_media ? info->n_media : 1);
    memcpy(peer->media, info->media, info->n_media * sizeof info->media[0]);
    if (publisher) {
        take_codecs(peer);
        room_simulcast_publisher_init(peer);
        room_fanout_open(peer);
    }
    room_layers_init(&peer->layer);
    room_temporal_init(&peer->temporal);
    atomic_init(&peer->temporal_current, ROOM_TEMPORAL_ALL);
    atomic_init(&peer->temporal_target, ROOM_TEMPORAL_ALL);
    atomic_init(&peer->layer_request, ROOM_LAYER_REQUEST_NONE);
    atomic_init(&peer->layer_current, -1);
    atomic_init(&peer->layer_target, -1);
    *error = room_join_listed(r, peer, source);
    if (*error) {
        room_forget_if_empty(r);
        room_release(r);
        room_fanout_close(peer);
        g_free(peer->media);
        g_free(peer);
        return NULL;
    }
    /* The handle is read by publishers on other workers until we leave. */
    room_gateway->handle_ref(handle);
    /* A subscriber's timer runs from the start: the publisher it named may
     * be leaving already (its session ending, not yet detached), and then
     * no media or RTCP would ever arm it to read `leave`. */
    if (!publisher)
        arm_timer(peer);
    return peer;
}

static void room_detach(void *state)
{
    room_peer *peer = state;
    room_leave(peer);
    room_fanout_close(peer);
    room_forget_if_empty(peer->room);
    room_release(peer->room);
    peer->gateway->handle_unref(peer->handle);
    room_recovery_free(peer);
    g_free(peer->media);
    g_free(peer);
}

static void room_hangup(void *state)
{
    room_peer *peer = state;
    peer->hung_up = true;
}

static void arm_timer(room_peer *peer)
{
    if (!peer->timer_armed) {
        peer->timer_armed = true;
        peer->gateway->set_timer(peer->handle, ROOM_CHECK_US);
    }
}

/* Subscriber: leave when told to (publisher gone, room deleted). */
static void room_on_timer(void *state, uint64_t now_us)
{
    room_peer *peer = state;
    peer->timer_armed = false;
    if (peer->hung_up)
        return;
    if (atomic_load(&peer->leave) || atomic_load(&peer->room->closed)) {
        peer->gateway->close_session(peer->handle);
        return;
    }
    room_simulcast_tick(peer, now_us);
    if (!peer->publisher)
        room_bwe_note(peer, now_us);
    if (!peer->publisher && room_feedback_keyframe_owed(peer, now_us))
        room_simulcast_viewer_keyframe(peer);
    if (peer->publisher) {
        room_feedback_tick(peer, now_us);
        room_recovery_tick(peer, now_us);
    }
    if (peer->publisher && atomic_load_explicit(&peer->level_us, memory_order_relaxed)) {
        pthread_mutex_lock(&peer->room->lock);
        room_note_speaker(peer->room, now_us);
        pthread_mutex_unlock(&peer->room->lock);
    }
    arm_timer(peer);
}

static int video_index(const room_peer *peer)
{
    for (size_t i = 0; i < peer->n_media; i++) {
        if (peer->media[i].kind == MOAT_MEDIA_KIND_VIDEO && peer->media[i].peer_sends)
            return (int)i;
    }
    return -1;
}

/* Publisher: a moving average over about 8 packets (160 ms of Opus). */
static void note_audio_level(room_peer *peer, uint8_t level)
{
    if (atomic_load_explicit(&peer->level_us, memory_order_relaxed) == 0)
        peer->level_smoothed = (uint32_t)level << 8;
    else
        peer->level_smoothed = (peer->level_smoothed * 7 + ((uint32_t)level << 8)) / 8;
    atomic_store_explicit(&peer->level, peer->level_smoothed, memory_order_relaxed);
    atomic_store_explicit(&peer->level_us, peer->gateway->now_us(), memory_order_relaxed);
}

/* Publisher: fan the packet out to the room's subscribers watching us. */
static void room_on_media(void *state, moat_rtp_packet *p)
{
    room_peer *peer = state;
    if (peer->hung_up || !peer->publisher || p->media_index < 0 || p->rtx ||
        p->kind == MOAT_MEDIA_KIND_APPLICATION)
        return;
    arm_timer(peer);
    int kind = p->kind == MOAT_MEDIA_KIND_VIDEO ? 1 : 0;
    int layer = kind == 1 ? room_simulcast_layer_of(peer, p) : -1;
    if (kind == 1 && peer->n_layers > 0 && layer < 0 && !peer->relay)
        return; /* simulcast video of no known layer (a cascade leg's plain video is
                   a source without layers on the other node) */
    if (kind == 1 && peer->relay && p->payload_length > 0)
        atomic_store_explicit(layer < 0 ? &peer->relay_plain_us : &peer->relay_layer_us,
                              p->arrival_us, memory_order_relaxed);
    if (atomic_load(&peer->ssrcs[kind]) == 0 && p->payload_length > 0 &&
        !room_ssrc_claim(peer, &peer->ssrcs[kind], p->ssrc))
        return; /* another publisher's SSRC (room_ssrc.c) */
    uint32_t claimed = atomic_load(&peer->ssrcs[kind]);
    if (layer < 0 && claimed != p->ssrc) {
        /* One stream per kind, or one per simulcast layer; padding before
         * the first media packet has no stream yet, it is not a second. */
        if (claimed != 0)
            atomic_fetch_add_explicit(&peer->ssrc_extra, 1, memory_order_relaxed);
        return;
    }
    if (!room_recovery_on_packet(peer, p))
        return; /* padding only, or a duplicate (counted) */
    room_simulcast_measure(peer, layer, p);
    if (p->has_audio_level)
        note_audio_level(peer, p->audio_level);
    if (atomic_load_explicit(&peer->muted[kind], memory_order_relaxed))
        return; /* configured off (room_message.c) */
    if (kind == 1)
        room_simulcast_ask_keyframes(peer, video_index(peer));
    atomic_fetch_add_explicit(&peer->packets, 1, memory_order_relaxed);
    if (room_fanout_send(peer, p, layer))
        return;                             /* one ring slot per worker (room_fanout.h) */
    room_fanout_send_layer(peer, p, layer); /* simulcast layers: per packet */
}

/* Subscriber: the publisher it watches is asked for a keyframe (on its own
 * worker: a flag it reads per packet, then the core's coalescing). */
static void ask_keyframe(room_peer *peer)
{
    pthread_mutex_lock(&peer->room->lock);
    if (peer->source)
        atomic_store(&peer->source->keyframe_wanted, true);
    pthread_mutex_unlock(&peer->room->lock);
}

/* Subscriber: the publisher's packet, our copy. */
static void room_on_relay(void *state, moat_rtp_packet *p)
{
    room_peer *peer = state;
    if (peer->hung_up || peer->publisher)
        return;
    arm_timer(peer);
    moat_media_kind kind;
    if (room_forward(peer, p, &kind) != 0)
        return;
    atomic_fetch_add_explicit(&peer->packets, 1, memory_order_relaxed);
    /* The keyframe asked for at join time may have arrived before the
     * subscriber's transport was up: ask again once video reaches it. */
    if (kind == MOAT_MEDIA_KIND_VIDEO && !peer->video_flowing) {
        peer->video_flowing = true;
        ask_keyframe(peer);
    }
}

/* Subscriber feedback: keyframe requests go to the publisher, for the
 * layer this subscriber receives (room_simulcast_viewer_keyframe), at most
 * one per ROOM_KEYFRAME_REQUEST_INTERVAL_US of this subscriber (the rest
 * counted), then coalesced there (one flag, and the core's rate limit).
 * NACKs were answered by the core from this subscriber's own
 * retransmission cache. */
static void room_on_rtcp(void *state, const uint8_t *packet, size_t length)
{
    room_peer *peer = state;
    if (peer->hung_up)
        return;
    arm_timer(peer);
    if (peer->publisher || moat_rtcp_check_compound(packet, length) <= 0)
        return;
    room_simulcast_feedback(peer, packet, length, peer->gateway->now_us());
    moat_rtcp_iter it;
    moat_rtcp_header h;
    bool keyframe = false;
    moat_rtcp_iter_init(&it, packet, length);
    while (moat_rtcp_iter_next(&it, &h) > 0) {
        moat_rtcp_fb fb;
        if (h.type != MOAT_RTCP_PSFB || moat_rtcp_parse_fb(&h, &fb) != MOAT_RTP_OK)
            continue;
        if ((moat_rtcp_fb_is_pli(&fb) || moat_rtcp_fb_is_fir(&fb)) && peer->relay &&
            room_simulcast_relay_keyframe(peer, &fb))
            atomic_fetch_add_explicit(&peer->keyframe_requests, 1, memory_order_relaxed);
        else if (moat_rtcp_fb_is_pli(&fb) || moat_rtcp_fb_is_fir(&fb))
            keyframe = true;
        else if (moat_rtcp_fb_is_remb(&fb))
            room_feedback_note_remb(peer, &fb, peer->gateway->now_us());
    }
    if (keyframe) {
        atomic_fetch_add_explicit(&peer->keyframe_requests, 1, memory_order_relaxed);
        if (room_feedback_keyframe_allowed(peer, peer->gateway->now_us()))
            room_simulcast_viewer_keyframe(peer);
    }
}

static const moat_plugin room_plugin = {
    .api_version = MOAT_PLUGIN_API_VERSION,
    .name = "room",
    .description = "SFU rooms: WHIP publishers, WHEP subscribers",
    .init = room_init,
    .destroy = room_destroy,
    .attach = room_attach,
    .detach = room_detach,
    .handle_message = room_handle_message,
    .on_rtcp = room_on_rtcp,
    .on_data = room_data_on_data,
    .hangup = room_hangup,
    .on_media = room_on_media,
    .on_relay = room_on_relay,
    .on_timer = room_on_timer,
    .place = room_place,
    .api_path = "/api/rooms",
    .handle_api = room_handle_api,
    .publisher_session = room_publisher_session,
    .on_channel = room_data_on_channel,
    .accept_codec = room_accept_codec,
};

__attribute__((visibility("default"))) const moat_plugin *moat_plugin_entry(void);

const moat_plugin *moat_plugin_entry(void)
{
    return &room_plugin;
}

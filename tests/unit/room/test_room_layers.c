/* Simulcast in rooms without a network: a subscriber fed three layers of a
 * publisher (room_simulcast.c, room_forward.c over a fake gateway) receives
 * one stream whose SSRC, sequence numbers and timestamps stay continuous
 * across a switch, and the publisher is asked for the keyframes it needs.
 * The layer state alone: test_room_layer_state.c; a layer's SSRC claims:
 * test_room_layer_ssrc.c. */
#include <glib.h>
#include <string.h>

#include "room_forward.h"
#include "room_simulcast.h"

/* ---- a subscriber fed by a simulcast publisher, over a fake gateway ---- */

typedef struct {
    uint8_t data[256];
    size_t length;
} sent_packet;

static sent_packet sent[64];
static size_t n_sent;
static char last_event[512];
static uint64_t fake_now = 1000000;

static int fake_send_rtp(moat_plugin_session *session, const uint8_t *packet, size_t length)
{
    g_assert_cmpuint(n_sent, <, G_N_ELEMENTS(sent));
    memcpy(sent[n_sent].data, packet, length);
    sent[n_sent++].length = length;
    return 0;
}

static uint64_t fake_now_us(void)
{
    return fake_now;
}

static void fake_publish_event(const char *topic, const char *json)
{
    g_snprintf(last_event, sizeof last_event, "%s %s", topic, json);
}

/* Keyframe requests the publisher made: -1 for "every layer". */
static int64_t keyframe_asks[8];
static size_t n_keyframe_asks;

static int fake_request_keyframe(moat_plugin_session *session, int media_index)
{
    g_assert_cmpuint(n_keyframe_asks, <, G_N_ELEMENTS(keyframe_asks));
    keyframe_asks[n_keyframe_asks++] = -1;
    return 0;
}

static int fake_request_layer_keyframe(moat_plugin_session *session, int media_index, uint32_t ssrc)
{
    g_assert_cmpuint(n_keyframe_asks, <, G_N_ELEMENTS(keyframe_asks));
    keyframe_asks[n_keyframe_asks++] = ssrc;
    return 0;
}

static const moat_gateway_calls fake_gateway = {
    .send_rtp = fake_send_rtp,
    .now_us = fake_now_us,
    .publish_event = fake_publish_event,
    .request_keyframe = fake_request_keyframe,
    .request_layer_keyframe = fake_request_layer_keyframe,
};

/* A gateway of before per-layer requests. */
static const moat_gateway_calls old_gateway = {
    .send_rtp = fake_send_rtp,
    .now_us = fake_now_us,
    .publish_event = fake_publish_event,
    .request_keyframe = fake_request_keyframe,
};

enum { SSRC_H = 0x100, SSRC_M = 0x200, SSRC_L = 0x300, OUT_SSRC = 0xabc };

typedef struct {
    room r;
    room_peer *subscribers[1];
    room_peer pub, sub;
    moat_media_info sub_media;
} world;

static void world_init(world *w)
{
    memset(w, 0, sizeof *w);
    n_sent = 0;
    last_event[0] = '\0';
    g_strlcpy(w->r.name, "sim", sizeof w->r.name);
    pthread_mutex_init(&w->r.lock, NULL);
    w->r.subscribers = w->subscribers;
    w->r.publishers[0] = &w->pub;
    w->r.n_publishers = 1;
    w->subscribers[0] = &w->sub;
    w->r.n_subscribers = 1;

    room_peer *p = &w->pub;
    p->publisher = true;
    p->room = &w->r;
    p->gateway = &fake_gateway;
    g_strlcpy(p->id, "p1", sizeof p->id);
    p->codecs[0] = (room_codec){.payload_type = 96,
                                .kind = MOAT_MEDIA_KIND_VIDEO,
                                .clock_rate = 90000,
                                .video_codec = MOAT_VIDEO_CODEC_VP8};
    g_strlcpy(p->codecs[0].name, "VP8", sizeof p->codecs[0].name);
    p->n_codecs = 1;
    const char *rids[3] = {"h", "m", "l"};
    const uint32_t ssrcs[3] = {SSRC_H, SSRC_M, SSRC_L};
    for (int l = 0; l < 3; l++) {
        g_strlcpy(p->layers[l].rid, rids[l], sizeof p->layers[l].rid);
        atomic_store(&p->layers[l].ssrc, ssrcs[l]);
        atomic_store(&p->layers[l].bitrate_bps, 2500000u >> (2 * l));
    }
    p->n_layers = 3;
    atomic_store(&p->ssrcs[1], SSRC_H);

    room_peer *s = &w->sub;
    s->room = &w->r;
    s->gateway = &fake_gateway;
    g_strlcpy(s->id, "s2", sizeof s->id);
    s->source = p;
    memcpy(s->source_codecs, p->codecs, sizeof p->codecs);
    s->n_source_codecs = 1;
    s->codecs_for_ssrc[1] = SSRC_H;
    w->sub_media.kind = MOAT_MEDIA_KIND_VIDEO;
    w->sub_media.peer_receives = true;
    w->sub_media.local_ssrc = OUT_SSRC;
    w->sub_media.codecs[0] = (moat_codec_info){.payload_type = 100, .clock_rate = 90000};
    g_strlcpy(w->sub_media.codecs[0].name, "VP8", sizeof w->sub_media.codecs[0].name);
    w->sub_media.n_codecs = 1;
    s->media = &w->sub_media;
    s->n_media = 1;
    room_layers_init(&s->layer);
    room_temporal_init(&s->temporal);
    atomic_init(&s->layer_request, ROOM_LAYER_REQUEST_NONE);
}

/* One VP8 packet of a layer (keyframe: start of a P=0 frame) through the
 * subscriber's rewriting; true when it was sent. */
static bool feed(world *w, uint32_t ssrc, uint16_t seq, uint32_t ts, bool key)
{
    uint8_t d[64] = {0x80,
                     96,
                     (uint8_t)(seq >> 8),
                     (uint8_t)seq,
                     (uint8_t)(ts >> 24),
                     (uint8_t)(ts >> 16),
                     (uint8_t)(ts >> 8),
                     (uint8_t)ts,
                     (uint8_t)(ssrc >> 24),
                     (uint8_t)(ssrc >> 16),
                     (uint8_t)(ssrc >> 8),
                     (uint8_t)ssrc};
    d[12] = 0x10;              /* S=1, PID 0 */
    d[13] = key ? 0x00 : 0x01; /* P bit */
    moat_rtp_packet p = {.data = d,
                         .length = 30,
                         .capacity = sizeof d,
                         .media_index = -1,
                         .ssrc = ssrc,
                         .sequence = seq,
                         .timestamp = ts,
                         .payload_type = 96,
                         .payload_offset = 12,
                         .payload_length = 18,
                         .arrival_us = fake_now};
    size_t before = n_sent;
    moat_media_kind kind;
    room_forward(&w->sub, &p, &kind);
    return n_sent == before + 1;
}

/* The same with a VP8 descriptor carrying a 15-bit picture id and a
 * TL0PICIDX (X, I, L), as Chromium and Firefox send. */
static bool feed_picture(world *w, uint32_t ssrc, uint16_t seq, uint32_t ts, bool key,
                         uint16_t picture, uint8_t tl0)
{
    uint8_t d[64] = {0x80,
                     96,
                     (uint8_t)(seq >> 8),
                     (uint8_t)seq,
                     (uint8_t)(ts >> 24),
                     (uint8_t)(ts >> 16),
                     (uint8_t)(ts >> 8),
                     (uint8_t)ts,
                     (uint8_t)(ssrc >> 24),
                     (uint8_t)(ssrc >> 16),
                     (uint8_t)(ssrc >> 8),
                     (uint8_t)ssrc};
    const uint8_t descriptor[] = {
        0x90, 0xc0, (uint8_t)(0x80 | picture >> 8), (uint8_t)picture, tl0, key ? 0x00 : 0x01};
    memcpy(d + 12, descriptor, sizeof descriptor);
    moat_rtp_packet p = {.data = d,
                         .length = 40,
                         .capacity = sizeof d,
                         .media_index = -1,
                         .ssrc = ssrc,
                         .sequence = seq,
                         .timestamp = ts,
                         .payload_type = 96,
                         .payload_offset = 12,
                         .payload_length = 28,
                         .arrival_us = fake_now};
    size_t before = n_sent;
    moat_media_kind kind;
    room_forward(&w->sub, &p, &kind);
    return n_sent == before + 1;
}

static uint16_t sent_picture(size_t i)
{
    return (uint16_t)((sent[i].data[14] & 0x7f) << 8 | sent[i].data[15]);
}

static uint16_t sent_seq(size_t i)
{
    return (uint16_t)(sent[i].data[2] << 8 | sent[i].data[3]);
}

static uint32_t sent_ts(size_t i)
{
    const uint8_t *d = sent[i].data;
    return (uint32_t)d[4] << 24 | (uint32_t)d[5] << 16 | (uint32_t)d[6] << 8 | d[7];
}

static uint32_t sent_ssrc(size_t i)
{
    const uint8_t *d = sent[i].data;
    return (uint32_t)d[8] << 24 | (uint32_t)d[9] << 16 | (uint32_t)d[10] << 8 | d[11];
}

static void test_switch_continuity(void)
{
    world w;
    world_init(&w);
    /* Pin l through the API's request; packets of h and m do not pass, nor
     * l's before its keyframe. */
    atomic_store(&w.sub.layer_request, 2);
    g_assert_false(feed(&w, SSRC_H, 10, 9000, true));
    /* asked of the publisher: a keyframe on l only */
    g_assert_false(atomic_load(&w.pub.keyframe_wanted));
    g_assert_cmpuint(atomic_load(&w.pub.keyframe_layers), ==, 1u << 2);
    n_keyframe_asks = 0;
    room_simulcast_ask_keyframes(&w.pub, 0);
    g_assert_cmpuint(n_keyframe_asks, ==, 1);
    g_assert_cmpint(keyframe_asks[0], ==, SSRC_L);
    g_assert_cmpuint(atomic_load(&w.pub.keyframe_layers), ==, 0);
    room_simulcast_ask_keyframes(&w.pub, 0); /* taken once */
    g_assert_cmpuint(n_keyframe_asks, ==, 1);
    g_assert_cmpint(w.sub.layer.target, ==, 2);
    g_assert_true(w.sub.layer.pinned);
    g_assert_false(feed(&w, SSRC_L, 500, 70000, false));
    g_assert_true(feed(&w, SSRC_L, 501, 73000, true));
    g_assert_nonnull(strstr(last_event, "rooms/sim {\"type\":\"layer_switched\""));
    g_assert_nonnull(strstr(last_event, "\"id\":\"s2\",\"publisher\":\"p1\",\"rid\":\"l\""));
    fake_now += 33000;
    g_assert_true(feed(&w, SSRC_L, 502, 76000, false));
    g_assert_false(feed(&w, SSRC_H, 11, 12000, false));
    g_assert_cmpuint(atomic_load(&w.sub.layer_mask), ==, 1u << 2);

    /* Up to h: l keeps flowing until h's keyframe, then only h. */
    atomic_store(&w.sub.layer_request, 0);
    room_simulcast_tick(&w.sub, fake_now);
    g_assert_cmpuint(atomic_load(&w.pub.keyframe_layers), ==, 1u << 0);
    /* A gateway without per-layer requests is asked for every layer; so is
     * one when a subscriber asked for every layer (keyframe_wanted). */
    w.pub.gateway = &old_gateway;
    n_keyframe_asks = 0;
    room_simulcast_ask_keyframes(&w.pub, 0);
    g_assert_cmpuint(n_keyframe_asks, ==, 1);
    g_assert_cmpint(keyframe_asks[0], ==, -1);
    w.pub.gateway = &fake_gateway;
    atomic_store(&w.pub.keyframe_layers, 1u << 1);
    atomic_store(&w.pub.keyframe_wanted, true);
    room_simulcast_ask_keyframes(&w.pub, 0);
    g_assert_cmpuint(n_keyframe_asks, ==, 2);
    g_assert_cmpint(keyframe_asks[1], ==, -1);
    fake_now += 33000;
    g_assert_false(feed(&w, SSRC_H, 12, 15000, false));
    g_assert_true(feed(&w, SSRC_L, 503, 79000, false));
    fake_now += 33000;
    g_assert_true(feed(&w, SSRC_H, 13, 18000, true));
    g_assert_false(feed(&w, SSRC_L, 504, 82000, false));
    fake_now += 33000;
    g_assert_true(feed(&w, SSRC_H, 14, 21000, false));

    /* One stream: our SSRC, sequence numbers without a gap or a repeat,
     * timestamps moving forward by about the time between packets. */
    g_assert_cmpuint(n_sent, ==, 5);
    for (size_t i = 0; i < n_sent; i++) {
        g_assert_cmpuint(sent_ssrc(i), ==, OUT_SSRC);
        g_assert_cmpuint(sent[i].data[1] & 0x7f, ==, 100);
        if (i == 0)
            continue;
        g_assert_cmpuint((uint16_t)(sent_seq(i) - sent_seq(i - 1)), ==, 1);
        int32_t step = (int32_t)(sent_ts(i) - sent_ts(i - 1));
        g_assert_cmpint(step, >, 0);
        g_assert_cmpint(step, <=, 3000 + 1);
    }
    g_assert_nonnull(strstr(last_event, "\"rid\":\"h\""));
    pthread_mutex_destroy(&w.r.lock);
}

/* Layer switches keep the VP8 picture id and TL0PICIDX continuous: the
 * layers' own ids are unrelated (and one wraps), yet the subscriber sees
 * one picture after another (Firefox otherwise decodes nothing until it
 * asks for a keyframe itself). */
static void test_switch_picture_ids(void)
{
    world w;
    world_init(&w);
    atomic_store(&w.sub.layer_request, 2);
    g_assert_false(feed_picture(&w, SSRC_H, 10, 9000, true, 0x7ffe, 250));
    g_assert_true(feed_picture(&w, SSRC_L, 500, 70000, true, 1000, 77));
    fake_now += 33000;
    g_assert_true(feed_picture(&w, SSRC_L, 501, 73000, false, 1001, 77));
    g_assert_true(feed_picture(&w, SSRC_L, 502, 73000, false, 1001, 77)); /* same picture */
    /* Up to h, whose ids wrap at 2^15 and 256 right after the switch. */
    atomic_store(&w.sub.layer_request, 0);
    room_simulcast_tick(&w.sub, fake_now);
    fake_now += 33000;
    g_assert_true(feed_picture(&w, SSRC_L, 503, 76000, false, 1002, 78));
    g_assert_true(feed_picture(&w, SSRC_H, 11, 12000, true, 0x7fff, 255));
    fake_now += 33000;
    g_assert_true(feed_picture(&w, SSRC_H, 12, 15000, false, 0, 0));
    /* And down again to l, which kept counting meanwhile. */
    atomic_store(&w.sub.layer_request, 2);
    room_simulcast_tick(&w.sub, fake_now);
    fake_now += 33000;
    g_assert_true(feed_picture(&w, SSRC_H, 13, 18000, false, 1, 1));
    g_assert_true(feed_picture(&w, SSRC_L, 506, 85000, true, 1005, 81));
    fake_now += 33000;
    g_assert_true(feed_picture(&w, SSRC_L, 507, 88000, false, 1006, 82));
    const uint16_t pictures[] = {1000, 1001, 1001, 1002, 1003, 1004, 1005, 1006, 1007};
    const uint8_t tl0s[] = {77, 77, 77, 78, 79, 80, 81, 82, 83};
    g_assert_cmpuint(n_sent, ==, G_N_ELEMENTS(pictures));
    for (size_t i = 0; i < n_sent; i++) {
        g_assert_cmpuint(sent_picture(i), ==, pictures[i]);
        g_assert_cmpuint(sent[i].data[16], ==, tl0s[i]);
        g_assert_cmpuint(sent[i].data[14] & 0x80, ==, 0x80); /* still 15 bits */
    }
    pthread_mutex_destroy(&w.r.lock);
}

/* One packet of an L1T3 VP8 stream: the descriptor carries the TID and
 * its layer sync bit (X I L T, 15-bit picture id, TL0PICIDX, TID/Y). */
static bool feed_temporal(world *w, uint32_t ssrc, uint16_t seq, uint32_t ts, bool key,
                          uint16_t picture, uint8_t tl0, uint8_t tid, bool sync)
{
    uint8_t d[64] = {0x80,
                     96,
                     (uint8_t)(seq >> 8),
                     (uint8_t)seq,
                     (uint8_t)(ts >> 24),
                     (uint8_t)(ts >> 16),
                     (uint8_t)(ts >> 8),
                     (uint8_t)ts,
                     (uint8_t)(ssrc >> 24),
                     (uint8_t)(ssrc >> 16),
                     (uint8_t)(ssrc >> 8),
                     (uint8_t)ssrc};
    const uint8_t descriptor[] = {0x90,
                                  0xe0,
                                  (uint8_t)(0x80 | picture >> 8),
                                  (uint8_t)picture,
                                  tl0,
                                  (uint8_t)(tid << 6 | (sync ? 0x20 : 0)),
                                  key ? 0x00 : 0x01};
    memcpy(d + 12, descriptor, sizeof descriptor);
    moat_rtp_packet p = {.data = d,
                         .length = 40,
                         .capacity = sizeof d,
                         .media_index = -1,
                         .ssrc = ssrc,
                         .sequence = seq,
                         .timestamp = ts,
                         .payload_type = 96,
                         .payload_offset = 12,
                         .payload_length = 28,
                         .arrival_us = fake_now};
    size_t before = n_sent;
    moat_media_kind kind;
    room_forward(&w->sub, &p, &kind);
    return n_sent == before + 1;
}

/* A subscriber on the lowest layer whose estimate (a REMB) is under that
 * layer's rate loses TL2 and TL1 frames, and what it receives has no gap:
 * sequence numbers one by one, picture ids one by one, TL0PICIDX as sent.
 * When the estimate recovers, TL1 comes back at its next sync frame. */
static void test_temporal_drop(void)
{
    world w;
    world_init(&w);
    room_peer *p = &w.pub;
    /* l (the lowest, 156 kbit/s) in three temporal layers. */
    const unsigned tids[ROOM_TEMPORAL_LAYERS] = {80000, 40000, 36000, 0};
    for (int t = 0; t < ROOM_TEMPORAL_LAYERS; t++)
        atomic_store(&p->layers[2].temporal_bps[t], tids[t]);
    atomic_store(&w.sub.layer_request, 2);
    uint16_t seq = 500, picture = 100;
    uint8_t tl0 = 10;
    uint32_t ts = 90000;
    g_assert_true(feed_temporal(&w, SSRC_L, seq++, ts, true, picture++, tl0, 0, false));
    room_layers_on_remb(&w.sub.layer, 100000, fake_now);
    room_simulcast_tick(&w.sub, fake_now);
    g_assert_cmpint(w.sub.temporal.target, ==, 0);
    /* Two L1T3 cycles (TL0 TL2 TL1 TL2), the TL1 frames in two packets. */
    static const uint8_t pattern[] = {2, 1, 2, 0};
    for (int cycle = 0; cycle < 2; cycle++) {
        for (size_t f = 0; f < G_N_ELEMENTS(pattern); f++) {
            uint8_t tid = pattern[f];
            if (tid == 0)
                tl0++;
            ts += 3000;
            fake_now += 33000;
            bool sent = feed_temporal(&w, SSRC_L, seq++, ts, false, picture, tl0, tid, tid > 0);
            g_assert_cmpint(sent, ==, tid == 0);
            if (tid == 1)
                g_assert_false(
                    feed_temporal(&w, SSRC_L, seq++, ts, false, picture, tl0, tid, tid > 0));
            picture++;
        }
    }
    /* The estimate recovers (the REMB ages out): TL1 first, at a sync
     * frame; then TL2 at its next sync frame. */
    fake_now += ROOM_BWE_REMB_AGE_US;
    room_simulcast_tick(&w.sub, fake_now);
    g_assert_cmpint(w.sub.temporal.target, ==, ROOM_TEMPORAL_ALL);
    ts += 3000;
    g_assert_false(feed_temporal(&w, SSRC_L, seq++, ts, false, picture++, tl0, 2, false));
    ts += 3000;
    g_assert_true(feed_temporal(&w, SSRC_L, seq++, ts, false, picture++, tl0, 1, true));
    ts += 3000;
    g_assert_true(feed_temporal(&w, SSRC_L, seq++, ts, false, picture++, tl0, 2, true));
    ts += 3000;
    g_assert_true(feed_temporal(&w, SSRC_L, seq++, ts, false, picture++, ++tl0, 0, false));

    /* Sent: the keyframe, two TL0 frames, then TL1, TL2 and TL0. */
    g_assert_cmpuint(n_sent, ==, 6);
    for (size_t i = 1; i < n_sent; i++) {
        g_assert_cmpuint((uint16_t)(sent_seq(i) - sent_seq(i - 1)), ==, 1);
        g_assert_cmpuint((uint16_t)(sent_picture(i) - sent_picture(i - 1)), ==, 1);
    }
    const uint8_t tl0s[] = {10, 11, 12, 12, 12, 13};
    for (size_t i = 0; i < n_sent; i++)
        g_assert_cmpuint(sent[i].data[16], ==, tl0s[i]);
    g_assert_cmpint(atomic_load(&w.sub.temporal_target), ==, ROOM_TEMPORAL_ALL);
    pthread_mutex_destroy(&w.r.lock);
}

/* Padding-only packets (Firefox pads its low layer to several times its
 * media rate) do not count in a layer's bitrate; padding bytes of media
 * packets neither. */
static void test_padding_bitrate(void)
{
    world w;
    world_init(&w);
    room_peer *p = &w.pub;
    for (int l = 0; l < 3; l++)
        atomic_store(&p->layers[l].bitrate_bps, 0);
    uint8_t d[1200] = {0xa0, 96};
    d[8] = (uint8_t)(SSRC_L >> 24);
    d[9] = (uint8_t)(SSRC_L >> 16);
    d[10] = (uint8_t)(SSRC_L >> 8);
    d[11] = (uint8_t)SSRC_L;
    uint64_t t = 5000000;
    /* 1 s of l: 25 media packets of 112 bytes with 12 of them padding,
     * and 100 padding-only packets of 1200 bytes. */
    for (int i = 0; i <= 125; i++) {
        bool padding_only = i % 5 != 0;
        moat_rtp_packet pk = {.data = d,
                              .length = padding_only ? 1200 : 112,
                              .capacity = sizeof d,
                              .ssrc = SSRC_L,
                              .payload_type = 96,
                              .payload_offset = 12,
                              .payload_length = padding_only ? 0 : 88,
                              .arrival_us = t + (uint64_t)i * 8000};
        g_strlcpy(pk.rid, "l", sizeof pk.rid);
        g_assert_cmpint(room_simulcast_layer_of(p, &pk), ==, 2);
        room_simulcast_measure(p, 2, &pk);
    }
    /* 25 x 100 bytes in 1 s: 20 kbit/s, not the 1 Mbit/s on the wire. */
    unsigned bps = atomic_load(&p->layers[2].bitrate_bps);
    g_assert_cmpuint(bps, >=, 19000);
    g_assert_cmpuint(bps, <=, 21000);
    pthread_mutex_destroy(&w.r.lock);
}

/* Retransmissions (RTX, unwrapped: repaired) are not the layer's bitrate
 * either: Chromium probes its path to the gateway with RTX of its low
 * layer, which made l look like the largest layer. */
static void test_repair_bitrate(void)
{
    world w;
    world_init(&w);
    room_peer *p = &w.pub;
    for (int l = 0; l < 3; l++)
        atomic_store(&p->layers[l].bitrate_bps, 0);
    uint8_t d[1200] = {0x80, 96};
    d[8] = (uint8_t)(SSRC_L >> 24);
    d[9] = (uint8_t)(SSRC_L >> 16);
    d[10] = (uint8_t)(SSRC_L >> 8);
    d[11] = (uint8_t)SSRC_L;
    uint64_t t = 5000000;
    for (int i = 0; i <= 125; i++) {
        bool repair = i % 5 != 0;
        moat_rtp_packet pk = {.data = d,
                              .length = repair ? 1200 : 100,
                              .capacity = sizeof d,
                              .ssrc = SSRC_L,
                              .payload_type = 96,
                              .payload_offset = 12,
                              .payload_length = repair ? 1188 : 88,
                              .repaired = repair,
                              .arrival_us = t + (uint64_t)i * 8000};
        g_strlcpy(pk.rid, "l", sizeof pk.rid);
        g_assert_cmpint(room_simulcast_layer_of(p, &pk), ==, 2);
        room_simulcast_measure(p, 2, &pk);
    }
    unsigned bps = atomic_load(&p->layers[2].bitrate_bps);
    g_assert_cmpuint(bps, >=, 19000);
    g_assert_cmpuint(bps, <=, 21000);
    pthread_mutex_destroy(&w.r.lock);
}

/* A viewer's PLI asks the publisher for a keyframe on the layer that
 * viewer receives only (one PLI for that layer's SSRC): not on every layer,
 * whose other viewers would all be sent a keyframe they did not need. With
 * no layer received yet, or its layer state still of a previous source,
 * every layer. */
static void test_viewer_keyframe_asks_its_layer(void)
{
    world w;
    world_init(&w);
    /* Nothing received yet: every layer. */
    room_simulcast_viewer_keyframe(&w.sub);
    g_assert_true(atomic_load(&w.pub.keyframe_wanted));
    g_assert_cmpuint(atomic_load(&w.pub.keyframe_layers), ==, 0);
    atomic_store(&w.pub.keyframe_wanted, false);

    /* Receiving m (pinned, switched at its keyframe). */
    atomic_store(&w.sub.layer_request, 1);
    g_assert_false(feed(&w, SSRC_H, 10, 9000, true));
    g_assert_true(feed(&w, SSRC_M, 300, 9000, true));
    g_assert_cmpint(w.sub.layer.current, ==, 1);
    atomic_store(&w.pub.keyframe_layers, 0u);
    atomic_store(&w.pub.keyframe_wanted, false);
    room_simulcast_viewer_keyframe(&w.sub);
    g_assert_false(atomic_load(&w.pub.keyframe_wanted));
    g_assert_cmpuint(atomic_load(&w.pub.keyframe_layers), ==, 1u << 1);
    n_keyframe_asks = 0;
    room_simulcast_ask_keyframes(&w.pub, 0);
    g_assert_cmpuint(n_keyframe_asks, ==, 1);
    g_assert_cmpint(keyframe_asks[0], ==, SSRC_M);

    /* Its source changed, its layer state not refreshed yet: the new
     * source's every layer (the current index was the old source's). */
    room_peer other = {.publisher = true, .room = &w.r, .gateway = &fake_gateway};
    pthread_mutex_lock(&w.r.lock);
    w.sub.source = &other;
    pthread_mutex_unlock(&w.r.lock);
    room_simulcast_viewer_keyframe(&w.sub);
    g_assert_true(atomic_load(&other.keyframe_wanted));
    g_assert_cmpuint(atomic_load(&other.keyframe_layers), ==, 0);
    g_assert_cmpuint(atomic_load(&w.pub.keyframe_layers), ==, 0);
    pthread_mutex_destroy(&w.r.lock);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/room/layers/switch-continuity", test_switch_continuity);
    g_test_add_func("/room/layers/switch-picture-ids", test_switch_picture_ids);
    g_test_add_func("/room/layers/padding-bitrate", test_padding_bitrate);
    g_test_add_func("/room/layers/temporal-drop", test_temporal_drop);
    g_test_add_func("/room/layers/repair-bitrate", test_repair_bitrate);
    g_test_add_func("/room/layers/viewer-keyframe-asks-its-layer",
                    test_viewer_keyframe_asks_its_layer);
    return g_test_run();
}

/* A publisher's streams on their way in (room_recovery.c) over a fake
 * gateway: padding-only packets dropped with the later packets renumbered
 * (no hole for subscribers, late packets included), a gap NACKed at once
 * with a well-formed generic NACK, a repair relayed and its duplicate not,
 * and a keyframe asked for when a video loss is given up. */
#include <glib.h>
#include <string.h>

#include "room_recovery.h"
#include "rtp/rtcp_feedback.h"
#include "rtp/rtcp_packet.h"

room_settings room_config;

static uint8_t last_rtcp[512];
static size_t last_rtcp_length, n_rtcp, n_keyframes;

static int fake_send_rtcp(moat_plugin_session *session, const uint8_t *packet, size_t length)
{
    g_assert_cmpuint(length, <=, sizeof last_rtcp);
    memcpy(last_rtcp, packet, length);
    last_rtcp_length = length;
    n_rtcp++;
    return 0;
}

static int fake_request_keyframe(moat_plugin_session *session, int media_index)
{
    g_assert_cmpint(media_index, ==, 0);
    n_keyframes++;
    return 0;
}

static const moat_gateway_calls fake_gateway = {
    .send_rtcp = fake_send_rtcp,
    .request_keyframe = fake_request_keyframe,
};

typedef struct {
    room_peer pub;
    moat_media_info media;
} world;

static void world_init(world *w, bool nack)
{
    memset(w, 0, sizeof *w);
    n_rtcp = n_keyframes = 0;
    room_config.nack_publishers = true;
    w->media.kind = MOAT_MEDIA_KIND_VIDEO;
    w->media.peer_sends = true;
    w->media.local_ssrc = 0x5151;
    w->media.codecs[0] = (moat_codec_info){
        .payload_type = 96, .clock_rate = 90000, .rtcp_fb = nack ? MOAT_RTCP_FB_NACK : 0};
    w->media.n_codecs = 1;
    w->pub.publisher = true;
    w->pub.gateway = &fake_gateway;
    w->pub.media = &w->media;
    w->pub.n_media = 1;
}

/* One packet in; its relayed sequence number, or -1 when dropped. */
static int in(world *w, uint16_t seq, bool padding_only, uint64_t now)
{
    uint8_t d[32] = {0x80, 96, (uint8_t)(seq >> 8), (uint8_t)seq, 0, 0, 0, 0, 0, 0, 0x12, 0x34};
    moat_rtp_packet p = {.data = d,
                         .length = 32,
                         .capacity = sizeof d,
                         .media_index = 0,
                         .kind = MOAT_MEDIA_KIND_VIDEO,
                         .ssrc = 0x1234,
                         .sequence = seq,
                         .payload_type = 96,
                         .payload_offset = 12,
                         .payload_length = padding_only ? 0 : 20,
                         .arrival_us = now};
    if (!room_recovery_on_packet(&w->pub, &p))
        return -1;
    g_assert_cmpuint((uint16_t)(d[2] << 8 | d[3]), ==, p.sequence);
    return p.sequence;
}

static void test_padding_renumbered(void)
{
    world w;
    world_init(&w, false);
    uint64_t t = 1000000;
    g_assert_cmpint(in(&w, 10, false, t), ==, 10);
    g_assert_cmpint(in(&w, 11, true, t), ==, -1);
    g_assert_cmpint(in(&w, 12, true, t), ==, -1);
    g_assert_cmpint(in(&w, 14, false, t), ==, 12); /* 13 is late */
    g_assert_cmpint(in(&w, 13, false, t), ==, 11); /* late, yet after both drops */
    g_assert_cmpint(in(&w, 15, true, t), ==, -1);
    g_assert_cmpint(in(&w, 16, false, t), ==, 13);
    g_assert_cmpint(in(&w, 9, false, t), ==, 9); /* late, before every drop */
    g_assert_cmpuint(atomic_load(&w.pub.recovery_stats.padding_dropped), ==, 3);
    g_assert_cmpuint(n_rtcp, ==, 0); /* NACK not negotiated */
    room_recovery_free(&w.pub);
}

/* Padding that arrives after a newer packet was relayed leaves a hole:
 * closing up would give the next packet a number a subscriber already has
 * (its SRTP replay check would drop it). A restart's jump back is not late. */
static void test_late_padding_leaves_a_hole(void)
{
    world w;
    world_init(&w, false);
    uint64_t t = 1000000;
    g_assert_cmpint(in(&w, 10, false, t), ==, 10);
    g_assert_cmpint(in(&w, 12, false, t), ==, 12); /* 11 (padding) comes after it */
    g_assert_cmpint(in(&w, 11, true, t), ==, -1);
    g_assert_cmpint(in(&w, 13, false, t), ==, 13);
    g_assert_cmpint(in(&w, 14, true, t), ==, -1); /* in order: closed up */
    g_assert_cmpint(in(&w, 15, false, t), ==, 14);
    g_assert_cmpuint(atomic_load(&w.pub.recovery_stats.padding_dropped), ==, 2);
    /* The sender restarts 5000 lower: its padding closes up again. */
    g_assert_cmpint(in(&w, 10000, false, t), ==, 9999);
    g_assert_cmpint(in(&w, 5000, false, t), ==, 4999);
    g_assert_cmpint(in(&w, 5001, true, t), ==, -1);
    g_assert_cmpint(in(&w, 5002, false, t), ==, 5000);
    room_recovery_free(&w.pub);
}

static void test_nack_and_repair(void)
{
    world w;
    world_init(&w, true);
    uint64_t t = 1000000;
    g_assert_cmpint(in(&w, 100, false, t), ==, 100);
    g_assert_cmpint(in(&w, 103, false, t), ==, 103);
    /* 101 and 102 NACKed at once: RTPFB fmt 1, our SSRC, theirs, PID 101
     * with the next bit set. */
    g_assert_cmpuint(n_rtcp, ==, 1);
    moat_rtcp_iter it;
    moat_rtcp_header h;
    moat_rtcp_iter_init(&it, last_rtcp, last_rtcp_length);
    g_assert_cmpint(moat_rtcp_iter_next(&it, &h), >, 0);
    moat_rtcp_fb fb;
    g_assert_cmpint(moat_rtcp_parse_fb(&h, &fb), ==, MOAT_RTP_OK);
    g_assert_true(moat_rtcp_fb_is_nack(&fb));
    g_assert_cmpuint(fb.sender_ssrc, ==, 0x5151);
    g_assert_cmpuint(fb.media_ssrc, ==, 0x1234);
    uint16_t seqs[8];
    g_assert_cmpint(moat_rtcp_nack_expand(&fb, seqs, 8), ==, 2);
    g_assert_cmpuint(seqs[0], ==, 101);
    g_assert_cmpuint(seqs[1], ==, 102);
    /* The repair is relayed once; a duplicate is dropped. */
    g_assert_cmpint(in(&w, 101, false, t + 40000), ==, 101);
    g_assert_cmpint(in(&w, 101, false, t + 41000), ==, -1);
    g_assert_cmpuint(atomic_load(&w.pub.recovery_stats.repaired), ==, 1);
    g_assert_cmpuint(atomic_load(&w.pub.recovery_stats.duplicates), ==, 1);
    /* 102 never comes: retried on the timer, then given up with a
     * keyframe request. */
    for (uint64_t at = t; at < t + 2 * MOAT_NACK_MAX_AGE_US; at += ROOM_CHECK_US)
        room_recovery_tick(&w.pub, at);
    g_assert_cmpuint(n_rtcp, >, 2);
    g_assert_cmpuint(atomic_load(&w.pub.recovery_stats.given_up), ==, 1);
    g_assert_cmpuint(n_keyframes, ==, 1);
    g_assert_cmpuint(atomic_load(&w.pub.recovery_stats.keyframe_requests), ==, 1);
    room_recovery_free(&w.pub);
}

/* More SSRCs than slots: a new one is relayed unfollowed, until a slot's
 * stream has been silent for ROOM_RECOVERY_IDLE_US (a renegotiation). */
static int in_ssrc(world *w, uint32_t ssrc, uint16_t seq, uint64_t now)
{
    uint8_t d[32] = {0x80, 96, (uint8_t)(seq >> 8), (uint8_t)seq};
    moat_rtp_packet p = {.data = d,
                         .length = 32,
                         .capacity = sizeof d,
                         .media_index = 0,
                         .kind = MOAT_MEDIA_KIND_VIDEO,
                         .ssrc = ssrc,
                         .sequence = seq,
                         .payload_type = 96,
                         .payload_offset = 12,
                         .payload_length = 0,
                         .arrival_us = now};
    return room_recovery_on_packet(&w->pub, &p) ? 1 : 0;
}

static void test_slots(void)
{
    world w;
    world_init(&w, true);
    uint64_t t = 1000000;
    for (uint32_t s = 1; s <= ROOM_RECOVERY_STREAMS; s++)
        g_assert_cmpint(in_ssrc(&w, s, 1, t), ==, 0); /* padding: followed and dropped */
    g_assert_cmpint(in_ssrc(&w, 99, 1, t), ==, 1);    /* no slot: relayed as it comes */
    g_assert_cmpint(in_ssrc(&w, 99, 1, t + ROOM_RECOVERY_IDLE_US), ==, 0); /* took one */
    g_assert_cmpuint(atomic_load(&w.pub.recovery_stats.padding_dropped), ==,
                     ROOM_RECOVERY_STREAMS + 1);
    room_recovery_free(&w.pub);
}

static void test_switched_off(void)
{
    world w;
    world_init(&w, true);
    room_config.nack_publishers = false;
    g_assert_cmpint(in(&w, 100, false, 1000000), ==, 100);
    g_assert_cmpint(in(&w, 105, false, 1000000), ==, 105);
    g_assert_cmpint(in(&w, 105, false, 1000000), ==, 105); /* no tracking either */
    g_assert_cmpuint(n_rtcp, ==, 0);
    room_recovery_free(&w.pub);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/room/recovery/padding-renumbered", test_padding_renumbered);
    g_test_add_func("/room/recovery/late-padding", test_late_padding_leaves_a_hole);
    g_test_add_func("/room/recovery/nack-and-repair", test_nack_and_repair);
    g_test_add_func("/room/recovery/switched-off", test_switched_off);
    g_test_add_func("/room/recovery/slots", test_slots);
    return g_test_run();
}

/* NACKs against a live keyed session: retransmission caches are taken when a
 * stream first sends and sized to its rate; a NACK (or a stream of them)
 * cannot make the gateway send much more than the stream's own media rate.
 * Prints the amplification (retransmitted bytes per NACK byte) it measures. */
#include "session_harness.h"

#include "session/session_internal.h"
#include "rtp/rtcp_feedback.h"
#include "rtp/rtcp_packet.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define PAYLOAD 1200
#define STEP_US 10000u /* one media packet and one NACK per step: 100 pkt/s */

/* An SRTCP compound: an RR and `n_fb` NACKs, each naming the 256 sequence
 * numbers up to `last`. */
static size_t build_nack(session_harness *h, uint16_t last, int n_fb, uint8_t *out, size_t capacity)
{
    uint8_t plain[1400];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, plain, sizeof plain);
    g_assert_cmpint(moat_rtcp_build_rr(&w, HARNESS_REMOTE_SSRC, NULL, 0), ==, 0);
    uint16_t lost[256];
    for (int i = 0; i < 256; i++)
        lost[i] = (uint16_t)(last - 255 + i);
    for (int i = 0; i < n_fb; i++)
        g_assert_cmpint(
            moat_rtcp_build_nack(&w, HARNESS_REMOTE_SSRC, HARNESS_LOCAL_SSRC, lost, 256), ==, 0);
    size_t length = session_harness_peer_protect_rtcp(h, plain, w.length, out, capacity);
    g_assert_cmpuint(length, >, 0);
    return length;
}

static uint64_t counter(session_harness *h, size_t offset)
{
    return moat_counter_read(
        (const uint64_t *)((const char *)moat_worker_counters(h->worker) + offset));
}

static void start(session_harness *h, moat_media_kind kind)
{
    session_harness_init(h);
    h->negotiation.media[0].kind = kind;
    session_harness_create(h, NULL);
    moat_worker_set_now_us(h->worker, 1000000);
    session_harness_key(h);
}

static void test_cache_taken_on_first_send_and_sized_to_rate(void)
{
    session_harness h;
    start(&h, MOAT_MEDIA_KIND_VIDEO);
    /* Connected but silent: no cache memory yet (a pending session used to
     * hold about 780 KB per sending m-line). Once sending, its bytes are
     * sized to the rate (slots x 1500 bytes before: 768 KB here). */
    g_assert_cmpuint(h.session->n_outgoing, ==, 1);
    g_assert_null(h.session->outgoing[0].cache);
    uint64_t now = 1000000;
    g_assert_cmpint(session_harness_gateway_send_rtp(&h, 0, PAYLOAD), ==, 0);
    g_assert_nonnull(h.session->outgoing[0].cache);
    g_assert_cmpuint(moat_retransmit_cache_slots(h.session->outgoing[0].cache), ==, 128);
    /* 400 packets a second for two seconds: the cache grows to hold one
     * second of them. */
    for (int i = 1; i < 800; i++) {
        now += 2500;
        moat_worker_set_now_us(h.worker, now);
        session_harness_gateway_send_rtp(&h, (uint16_t)i, PAYLOAD);
        session_harness_flush(&h);
    }
    session_harness_drain_peer(&h, NULL);
    g_assert_cmpuint(moat_retransmit_cache_slots(h.session->outgoing[0].cache), ==, 512);
    /* Its bytes: one second at ~490 KB/s and a quarter (not 512 x 1500). */
    size_t arena = moat_retransmit_cache_bytes(h.session->outgoing[0].cache);
    g_assert_cmpuint(arena, >=, 400 * (PAYLOAD + 12));
    g_assert_cmpuint(arena, <=, 400 * (PAYLOAD + 40) * 5 / 4 + 4096);
    /* What was sent before growing can still be resent. */
    const uint8_t *packet;
    size_t length;
    g_assert_cmpint(moat_retransmit_cache_get(h.session->outgoing[0].cache, 700, &packet, &length),
                    ==, 0);
    session_harness_clear(&h);

    start(&h, MOAT_MEDIA_KIND_AUDIO);
    g_assert_null(h.session->outgoing[0].cache);
    g_assert_cmpint(session_harness_gateway_send_rtp(&h, 0, 160), ==, 0);
    g_assert_cmpuint(moat_retransmit_cache_slots(h.session->outgoing[0].cache), ==, 32);
    g_assert_cmpuint(moat_retransmit_cache_bytes(h.session->outgoing[0].cache), ==, 8 * 1024);
    session_harness_clear(&h);
}

/* A keyframe burst (60 packets in 60 ms) then 20 packets a second: the
 * arena holds a second of what was really sent (~96 KB with the burst),
 * not the burst extrapolated to a rate (~1.2 MB/s, capped at 128 x 1500). */
static void test_cache_not_sized_by_a_burst(void)
{
    session_harness h;
    start(&h, MOAT_MEDIA_KIND_VIDEO);
    uint64_t now = 1000000;
    uint16_t sequence = 0;
    for (int i = 0; i < 60; i++, sequence++) {
        moat_worker_set_now_us(h.worker, now += 1000);
        session_harness_gateway_send_rtp(&h, sequence, PAYLOAD);
        session_harness_flush(&h);
    }
    for (int i = 0; i < 40; i++, sequence++) {
        moat_worker_set_now_us(h.worker, now += 50000);
        session_harness_gateway_send_rtp(&h, sequence, PAYLOAD);
        session_harness_flush(&h);
    }
    session_harness_drain_peer(&h, NULL);
    size_t arena = moat_retransmit_cache_bytes(h.session->outgoing[0].cache);
    g_assert_cmpuint(arena, <=, 150 * 1024);
    session_harness_clear(&h);
}

/* One second of 1 Mbit/s-ish media with a hostile NACK every 10 ms naming
 * every cached packet eight times over. */
static void test_nack_flood_bounded_by_media_rate(void)
{
    session_harness h;
    start(&h, MOAT_MEDIA_KIND_VIDEO);
    uint64_t now = 1000000;
    uint16_t sequence = 0;
    /* Warm-up: one second of media, so the stream's rate is known. */
    for (int i = 0; i < 100; i++, sequence++) {
        moat_worker_set_now_us(h.worker, now += STEP_US);
        session_harness_gateway_send_rtp(&h, sequence, PAYLOAD);
        session_harness_flush(&h);
    }
    size_t media_datagrams;
    size_t media_bytes = session_harness_drain_peer(&h, &media_datagrams);
    size_t media_packet = media_bytes / media_datagrams;

    uint64_t refused_before =
        counter(&h, offsetof(moat_counters, dropped) + sizeof(uint64_t) * MOAT_DROP_NACK_LIMIT);
    size_t nack_bytes = 0, out_bytes = 0;
    int steps = 100;
    for (int i = 0; i < steps; i++, sequence++) {
        moat_worker_set_now_us(h.worker, now += STEP_US);
        session_harness_gateway_send_rtp(&h, sequence, PAYLOAD);
        uint8_t nack[1500];
        size_t length = build_nack(&h, sequence, 8, nack, sizeof nack);
        nack_bytes += length;
        moat_session_handle_srtp(h.session, NULL, nack, length, sizeof nack);
        session_harness_flush(&h);
        out_bytes += session_harness_drain_peer(&h, NULL);
    }
    size_t media_in_window = (size_t)steps * media_packet;
    size_t retransmitted = out_bytes - media_in_window;
    uint64_t refused =
        counter(&h, offsetof(moat_counters, dropped) + sizeof(uint64_t) * MOAT_DROP_NACK_LIMIT) -
        refused_before;
    printf("# nack flood: %zu NACK bytes in, %zu media bytes, %zu retransmitted bytes out "
           "(amplification %.1fx per NACK byte, %.2fx the media), %" G_GUINT64_FORMAT " refused\n",
           nack_bytes, media_in_window, retransmitted, (double)retransmitted / (double)nack_bytes,
           (double)retransmitted / (double)media_in_window, refused);
    /* The stream's allowance: its own rate (plus a half-second burst). */
    g_assert_cmpuint(retransmitted, <=, media_in_window * 2);
    g_assert_cmpuint(refused, >, 0);
    session_harness_clear(&h);
}

/* A single compound NACK naming 2048 cached packets is answered for at most
 * MOAT_RETRANSMIT_MAX_PER_RTCP of them, however large the budget. */
static void test_one_nack_answers_a_bounded_number(void)
{
    session_harness h;
    start(&h, MOAT_MEDIA_KIND_VIDEO);
    uint64_t now = 1000000;
    /* 4 Mbit/s for two seconds: a budget far above 64 packets. */
    for (int i = 0; i < 800; i++) {
        moat_worker_set_now_us(h.worker, now += 2500);
        session_harness_gateway_send_rtp(&h, (uint16_t)i, PAYLOAD);
        session_harness_flush(&h);
    }
    session_harness_drain_peer(&h, NULL);
    moat_worker_set_now_us(h.worker, now += 100000);
    uint8_t nack[1500];
    size_t length = build_nack(&h, 799, 8, nack, sizeof nack);
    uint64_t before = counter(&h, offsetof(moat_counters, nacked_retransmissions));
    moat_session_handle_srtp(h.session, NULL, nack, length, sizeof nack);
    session_harness_flush(&h);
    size_t datagrams;
    session_harness_drain_peer(&h, &datagrams);
    uint64_t answered = counter(&h, offsetof(moat_counters, nacked_retransmissions)) - before;
    printf("# one %zu-byte NACK naming 256 packets x8: %" G_GUINT64_FORMAT " resent\n", length,
           answered);
    g_assert_cmpuint(answered, ==, MOAT_RETRANSMIT_MAX_PER_RTCP);
    g_assert_cmpuint(datagrams, ==, MOAT_RETRANSMIT_MAX_PER_RTCP);
    session_harness_clear(&h);
}

/* A stream whose m-line did not negotiate NACK keeps no cache: its peer
 * never asks (audio usually; 8 KB and more a stream before). */
static void test_no_cache_without_nack(void)
{
    session_harness h;
    session_harness_init(&h);
    h.negotiation.media[0].kind = MOAT_MEDIA_KIND_AUDIO;
    h.negotiation.media[0].rtcp_fb[0] = 0;
    session_harness_create(&h, NULL);
    moat_worker_set_now_us(h.worker, 1000000);
    session_harness_key(&h);
    for (int i = 0; i < 100; i++) {
        moat_worker_set_now_us(h.worker, 1000000 + (uint64_t)i * 20000);
        g_assert_cmpint(session_harness_gateway_send_rtp(&h, (uint16_t)i, 160), ==, 0);
        session_harness_flush(&h);
    }
    g_assert_cmpuint(session_harness_drain_peer(&h, NULL), >, 0);
    g_assert_null(h.session->outgoing[0].cache);
    session_harness_clear(&h);
}

static uint32_t ntp_middle_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t seconds = (uint64_t)now.tv_sec + 2208988800ull;
    uint64_t fraction = ((uint64_t)now.tv_nsec << 32) / 1000000000ull;
    return (uint32_t)((((seconds << 32) | fraction)) >> 16);
}

/* A receiver report from the peer about what the gateway sends, giving a
 * round-trip time of `rtt` (1/65536 s). */
static void peer_reports_rtt(session_harness *h, uint32_t rtt)
{
    moat_rtcp_report_block block = {.ssrc = HARNESS_LOCAL_SSRC, .last_sr = ntp_middle_now() - rtt};
    uint8_t plain[200], rr[300];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, plain, sizeof plain);
    g_assert_cmpint(moat_rtcp_build_rr(&w, HARNESS_REMOTE_SSRC, &block, 1), ==, 0);
    size_t length = session_harness_peer_protect_rtcp(h, plain, w.length, rr, sizeof rr);
    moat_session_handle_srtp(h->session, NULL, rr, length, sizeof rr);
}

/* `n` packets at 400 a second; returns the cache's arena bytes after. */
static size_t send_for(session_harness *h, uint64_t *now, uint16_t *sequence, int n)
{
    for (int i = 0; i < n; i++) {
        moat_worker_set_now_us(h->worker, *now += 2500);
        session_harness_gateway_send_rtp(h, (*sequence)++, PAYLOAD);
        session_harness_flush(h);
        session_harness_drain_peer(h, NULL);
    }
    /* The newest packets stay resendable. */
    const uint8_t *packet;
    size_t length;
    g_assert_cmpint(moat_retransmit_cache_get(h->session->outgoing[0].cache,
                                              (uint16_t)(*sequence - 100), &packet, &length),
                    ==, 0);
    return moat_retransmit_cache_bytes(h->session->outgoing[0].cache);
}

/* Once the peer's receiver report gives a round-trip time (10 ms here), the
 * cache holds 0.3 s of the stream instead of a second, keeping the newest
 * packets; a report with a long RTT grows it back at once. Shrinking again
 * waits 10 s after the last shrink: an RTT that swings cannot have the
 * arena copied over and over. */
static void test_cache_sized_by_rtt(void)
{
    session_harness h;
    start(&h, MOAT_MEDIA_KIND_VIDEO);
    uint64_t now = 1000000;
    uint16_t sequence = 0;
    size_t second = send_for(&h, &now, &sequence, 800);
    g_assert_cmpuint(second, >=, 400 * (PAYLOAD + 12));

    peer_reports_rtt(&h, 655); /* 10 ms */
    g_assert_cmpuint(h.session->rtt_us, >=, 9000);
    size_t arena = send_for(&h, &now, &sequence, 400);
    /* 0.3 s at ~490 KB/s and a quarter. */
    g_assert_cmpuint(arena, <=, second / 2);
    g_assert_cmpuint(arena, >=, 120 * (PAYLOAD + 12));

    peer_reports_rtt(&h, 65536); /* 1 s */
    g_assert_cmpuint(h.session->rtt_us, >=, 990000);
    g_assert_cmpuint(send_for(&h, &now, &sequence, 400), >=, second * 9 / 10);

    for (int i = 0; i < 40; i++) /* the RTT falls by an eighth a report */
        peer_reports_rtt(&h, 655);
    g_assert_cmpuint(h.session->rtt_us, <, 20000);
    g_assert_cmpuint(send_for(&h, &now, &sequence, 400), >=, second * 9 / 10);
    g_assert_cmpuint(send_for(&h, &now, &sequence, 4000), <=, second / 2);
    session_harness_clear(&h);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session/nack/cache-on-first-send-sized-to-rate",
                    test_cache_taken_on_first_send_and_sized_to_rate);
    g_test_add_func("/session/nack/no-cache-without-nack", test_no_cache_without_nack);
    g_test_add_func("/session/nack/cache-sized-by-rtt", test_cache_sized_by_rtt);
    g_test_add_func("/session/nack/flood-bounded-by-media-rate",
                    test_nack_flood_bounded_by_media_rate);
    g_test_add_func("/session/nack/one-nack-bounded", test_one_nack_answers_a_bounded_number);
    g_test_add_func("/session/nack/not-sized-by-a-burst", test_cache_not_sized_by_a_burst);
    return g_test_run();
}

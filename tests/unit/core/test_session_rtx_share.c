/* Forwarded packets (send_rtp_forward) against live keyed sessions: two
 * subscribers on one worker forwarding one source keep its packets once
 * (one shared source, no per-session copy), each answers NACKs of its own
 * sequence numbers with its own rewrite of the shared packet, and once the
 * source went idle past the retransmission age (a layer switch, the
 * publisher gone) it is freed and its NACKs are counted as nack_gone. A
 * worker holds at most MOAT_SESSION_RTX_SHARE_MAX_SOURCES: a key past it is
 * forwarded but not kept (its NACKs nack_gone), the others untouched. */
#include "session_harness.h"

#include "session/session_internal.h"
#include "rtp/rtcp_feedback.h"
#include "rtp/rtcp_packet.h"
#include "rtp/rtp_packet.h"
#include "rtp/rtp_rewrite.h"

#include <glib.h>
#include <string.h>

#define SOURCE_LOW  0x0a0a0a0au
#define SOURCE_HIGH 0x0b0b0b0bu
#define KEY_LOW     ((uint64_t)1 << 32 | SOURCE_LOW)
#define KEY_HIGH    ((uint64_t)1 << 32 | SOURCE_HIGH)
#define PAYLOAD     1000

static size_t make_source(uint8_t *p, uint32_t ssrc, uint16_t seq)
{
    memset(p, 0, 12);
    p[0] = 0x80;
    p[1] = 111;
    p[2] = (uint8_t)(seq >> 8);
    p[3] = (uint8_t)seq;
    p[8] = (uint8_t)(ssrc >> 24), p[9] = (uint8_t)(ssrc >> 16);
    p[10] = (uint8_t)(ssrc >> 8), p[11] = (uint8_t)ssrc;
    for (size_t i = 12; i < 12 + PAYLOAD; i++)
        p[i] = (uint8_t)(seq + i);
    return 12 + PAYLOAD;
}

static moat_rtp_rewrite rewrite_of(uint16_t out_seq, uint32_t ts)
{
    return (moat_rtp_rewrite){.ssrc = HARNESS_LOCAL_SSRC,
                              .sequence = out_seq,
                              .timestamp = ts,
                              .payload_type = 96,
                              .flags = MOAT_RTP_REWRITE_STRIP_EXTENSIONS};
}

/* Forwards source packet `seq` as out_seq; *sent gets what was sent. */
static void forward(session_harness *h, uint64_t key, uint32_t ssrc, uint16_t seq, uint16_t out_seq,
                    uint8_t *sent, size_t *sent_length)
{
    uint8_t p[1500];
    size_t n = make_source(p, ssrc, seq);
    moat_rtp_rewrite rw = rewrite_of(out_seq, 3000u * out_seq);
    g_assert_cmpint(moat_session_gateway_calls.send_rtp_forward(
                        moat_session_plugin_handle(h->session), p, &n, key, &rw),
                    ==, 0);
    session_harness_flush(h);
    if (sent) {
        memcpy(sent, p, n);
        *sent_length = n;
    }
}

static uint64_t counter(session_harness *h, size_t offset)
{
    return moat_counter_read(
        (const uint64_t *)((const char *)moat_worker_counters(h->worker) + offset));
}

static uint64_t dropped(session_harness *h, moat_drop_reason reason)
{
    return counter(h, offsetof(moat_counters, dropped) + sizeof(uint64_t) * reason);
}

static uint64_t gone(session_harness *h)
{
    return dropped(h, MOAT_DROP_NACK_GONE);
}

static uint64_t resent(session_harness *h)
{
    return counter(h, offsetof(moat_counters, nacked_retransmissions));
}

/* One SRTCP compound from the peer NACKing `n` sequence numbers. */
static void nack_many(session_harness *h, const uint16_t *seqs, size_t n)
{
    uint8_t plain[200], out[300];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, plain, sizeof plain);
    g_assert_cmpint(moat_rtcp_build_rr(&w, HARNESS_REMOTE_SSRC, NULL, 0), ==, 0);
    g_assert_cmpint(moat_rtcp_build_nack(&w, HARNESS_REMOTE_SSRC, HARNESS_LOCAL_SSRC, seqs, n), ==,
                    0);
    size_t length = session_harness_peer_protect_rtcp(h, plain, w.length, out, sizeof out);
    moat_session_handle_srtp(h->session, NULL, out, length, sizeof out);
    session_harness_flush(h);
}

static void nack(session_harness *h, uint16_t seq)
{
    nack_many(h, &seq, 1);
}

static void start(session_harness *h, moat_worker *on, const char *id, const char *ufrag)
{
    if (on)
        session_harness_init_on(h, on);
    else
        session_harness_init(h);
    strcpy(h->id, id);
    strcpy(h->local_ufrag, ufrag);
    session_harness_create(h, NULL);
    session_harness_key(h);
}

static void test_shared_source_and_gone(void)
{
    session_harness a, b;
    start(&a, NULL, "sub-a", "ufraga1");
    start(&b, a.worker, "sub-b", "ufragb1");
    uint64_t now = 1000000;
    moat_worker_set_now_us(a.worker, now);
    /* 200 packets of the low layer to both, each with its own numbering. */
    uint8_t sent_b[1500];
    size_t sent_b_length = 0;
    for (uint16_t i = 0; i < 200; i++) {
        moat_worker_set_now_us(a.worker, now += 5000);
        forward(&a, KEY_LOW, SOURCE_LOW, (uint16_t)(40000 + i), (uint16_t)(100 + i), NULL, NULL);
        forward(&b, KEY_LOW, SOURCE_LOW, (uint16_t)(40000 + i), (uint16_t)(7000 + i),
                i == 195 ? sent_b : NULL, i == 195 ? &sent_b_length : NULL);
    }
    session_harness_drain_peer(&a, NULL);
    session_harness_drain_peer(&b, NULL);
    /* One shared source on the worker; no per-session copies. */
    size_t bytes;
    g_assert_cmpuint(moat_session_rtx_share_sources(a.worker, &bytes), ==, 1);
    g_assert_cmpuint(bytes, >, 0);
    g_assert_null(a.session->outgoing[0].cache);
    g_assert_null(b.session->outgoing[0].cache);
    g_assert_nonnull(b.session->outgoing[0].map);

    /* b.s 7195 rebuilds to exactly what b sent. */
    uint8_t out[MOAT_RETRANSMIT_MAX_PACKET];
    size_t length;
    g_assert_cmpint(
        moat_session_rebuild_forwarded(b.session, &b.session->outgoing[0], 7195, now, out, &length),
        ==, MOAT_RTP_OK);
    g_assert_cmpmem(out, length, sent_b, sent_b_length);

    /* A NACK through SRTCP is answered. */
    uint64_t resent = counter(&a, offsetof(moat_counters, nacked_retransmissions));
    nack(&a, 295);
    size_t datagrams;
    session_harness_drain_peer(&a, &datagrams);
    g_assert_cmpuint(counter(&a, offsetof(moat_counters, nacked_retransmissions)), ==, resent + 1);
    g_assert_cmpuint(datagrams, ==, 1);

    /* Switch to the high layer; the low one goes idle. Past the age, it is
     * freed and NACKs of packets made from it are gone, counted. */
    for (uint16_t i = 0; i < 250; i++) {
        moat_worker_set_now_us(a.worker, now += 10000);
        forward(&a, KEY_HIGH, SOURCE_HIGH, (uint16_t)(9 + i), (uint16_t)(300 + i), NULL, NULL);
    }
    session_harness_drain_peer(&a, NULL);
    g_assert_cmpuint(moat_session_rtx_share_sources(a.worker, &bytes), ==, 1);
    uint64_t gone_before = gone(&a);
    nack(&a, 295);
    g_assert_cmpuint(gone(&a), ==, gone_before + 1);
    session_harness_drain_peer(&a, &datagrams);
    g_assert_cmpuint(datagrams, ==, 0);
    /* The high layer's packets are still answered. */
    nack(&a, 540);
    session_harness_drain_peer(&a, &datagrams);
    g_assert_cmpuint(datagrams, ==, 1);
    g_assert_cmpuint(gone(&a), ==, gone_before + 1);

    session_harness_clear(&b);
    session_harness_clear(&a);
}

/* The stream's retransmission budget: `tokens` bytes now, no refill
 * before the next tick (the worker's clock must move for one). */
static void set_budget(session_harness *h, double tokens, uint64_t now)
{
    moat_retransmit_budget *budget = &h->session->outgoing[0].budget;
    budget->tokens = tokens;
    budget->refilled_us = now;
}

/* A NACK that the stream's budget or the RTCP packet's maximum refused
 * leaves the packet unmarked: the next NACK for it, within the 10 ms resend
 * interval, is answered (it was refused as rate limited, silently), and a
 * transport-cc repair still sees it not resent (moat_retransmit_map_resent_after). */
static void test_refused_resend_is_not_marked(void)
{
    session_harness a;
    start(&a, NULL, "sub-a", "ufraga1");
    uint64_t now = 1000000;
    moat_worker_set_now_us(a.worker, now);
    /* Two seconds: past the first complete rate window the worker's copy
     * holds over a second of the stream (the last 250 packets or so). */
    for (uint16_t i = 0; i < 400; i++) {
        moat_worker_set_now_us(a.worker, now += 5000);
        forward(&a, KEY_LOW, SOURCE_LOW, (uint16_t)(40000 + i), (uint16_t)(100 + i), NULL, NULL);
    }
    session_harness_drain_peer(&a, NULL);
    const moat_retransmit_map *map = a.session->outgoing[0].map;
    g_assert_nonnull(map);

    /* The budget is spent: 450 is refused (nack_limit), not marked. */
    uint64_t limited = dropped(&a, MOAT_DROP_NACK_LIMIT), answered = resent(&a);
    set_budget(&a, 0, now);
    nack(&a, 450);
    g_assert_cmpuint(dropped(&a, MOAT_DROP_NACK_LIMIT), ==, limited + 1);
    g_assert_cmpuint(resent(&a), ==, answered);
    g_assert_false(moat_retransmit_map_resent_after(map, 450, 0));
    /* Budget again 5 ms later: the NACK for it is answered, and marked. */
    moat_worker_set_now_us(a.worker, now += 5000);
    set_budget(&a, 1e6, now);
    nack(&a, 450);
    g_assert_cmpuint(resent(&a), ==, answered + 1);
    g_assert_true(moat_retransmit_map_resent_after(map, 450, now - 1));
    size_t datagrams;
    session_harness_drain_peer(&a, &datagrams);
    g_assert_cmpuint(datagrams, >=, 1);

    /* One RTCP packet naming 70: MOAT_RETRANSMIT_MAX_PER_RTCP (64) are
     * answered and marked, the other 6 refused and not marked. */
    uint16_t seqs[70];
    for (size_t i = 0; i < G_N_ELEMENTS(seqs); i++)
        seqs[i] = (uint16_t)(400 + i);
    moat_worker_set_now_us(a.worker, now += 20000);
    set_budget(&a, 1e6, now);
    limited = dropped(&a, MOAT_DROP_NACK_LIMIT);
    answered = resent(&a);
    nack_many(&a, seqs, G_N_ELEMENTS(seqs));
    g_assert_cmpuint(resent(&a), ==, answered + MOAT_RETRANSMIT_MAX_PER_RTCP);
    g_assert_cmpuint(dropped(&a, MOAT_DROP_NACK_LIMIT), ==, limited + 6);
    g_assert_true(moat_retransmit_map_resent_after(map, 463, now - 1));
    for (uint16_t seq = 464; seq < 470; seq++)
        g_assert_false(moat_retransmit_map_resent_after(map, seq, 0));
    session_harness_drain_peer(&a, NULL);
    /* 5 ms later the NACK of one of them is answered. */
    moat_worker_set_now_us(a.worker, now += 5000);
    set_budget(&a, 1e6, now);
    nack(&a, 469);
    g_assert_cmpuint(resent(&a), ==, answered + MOAT_RETRANSMIT_MAX_PER_RTCP + 1);
    g_assert_true(moat_retransmit_map_resent_after(map, 469, now - 1));
    session_harness_drain_peer(&a, &datagrams);
    g_assert_cmpuint(datagrams, >=, 1);
    session_harness_clear(&a);
}

/* A publisher moving its stream to a new SSRC on every packet made every
 * subscriber worker keep a new source (a ~52 KB cache) per SSRC, freed only
 * 2 s later: 450 new SSRCs a second took a worker 50 MB. The table stops at
 * its cap; past it a new key is forwarded without a source and its NACK
 * goes unanswered, counted; the sources it holds still answer; once they
 * went idle and were swept a new key gets one again. */
static void test_sources_capped(void)
{
    session_harness a;
    start(&a, NULL, "sub-a", "ufraga1");
    uint64_t now = 1000000;
    moat_worker_set_now_us(a.worker, now);
    uint16_t out = 100;
    for (uint32_t i = 0; i < MOAT_SESSION_RTX_SHARE_MAX_SOURCES; i++)
        forward(&a, (uint64_t)1 << 32 | (SOURCE_LOW + i), SOURCE_LOW + i, 1, out++, NULL, NULL);
    size_t bytes;
    g_assert_cmpuint(moat_session_rtx_share_sources(a.worker, &bytes), ==,
                     MOAT_SESSION_RTX_SHARE_MAX_SOURCES);

    /* One more key: forwarded (forward() checks it went), no source. */
    uint64_t past = (uint64_t)2 << 32 | SOURCE_HIGH;
    uint16_t past_out = out++;
    forward(&a, past, SOURCE_HIGH, 7, past_out, NULL, NULL);
    g_assert_cmpuint(moat_session_rtx_share_sources(a.worker, &bytes), ==,
                     MOAT_SESSION_RTX_SHARE_MAX_SOURCES);
    /* An existing source still keeps its packets. */
    uint16_t kept_out = out++;
    forward(&a, KEY_LOW, SOURCE_LOW, 2, kept_out, NULL, NULL);
    session_harness_drain_peer(&a, NULL);

    uint64_t gone_before = gone(&a), answered = resent(&a);
    size_t datagrams;
    nack(&a, past_out);
    session_harness_drain_peer(&a, &datagrams);
    g_assert_cmpuint(gone(&a), ==, gone_before + 1);
    g_assert_cmpuint(datagrams, ==, 0);
    moat_worker_set_now_us(a.worker, now += 20000);
    nack(&a, kept_out);
    session_harness_drain_peer(&a, &datagrams);
    g_assert_cmpuint(resent(&a), ==, answered + 1);
    g_assert_cmpuint(datagrams, ==, 1);
    g_assert_cmpuint(gone(&a), ==, gone_before + 1);

    /* Past the age the idle sources are swept: the key gets one. */
    moat_worker_set_now_us(a.worker, now += 3000000);
    forward(&a, past, SOURCE_HIGH, 8, out++, NULL, NULL);
    g_assert_cmpuint(moat_session_rtx_share_sources(a.worker, &bytes), ==, 1);
    session_harness_clear(&a);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session_rtx_share/shared_source_and_gone", test_shared_source_and_gone);
    g_test_add_func("/session_rtx_share/refused_resend_is_not_marked",
                    test_refused_resend_is_not_marked);
    g_test_add_func("/session_rtx_share/sources_capped", test_sources_capped);
    return g_test_run();
}

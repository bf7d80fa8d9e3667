/* The playout delay a session asks of its viewer (session_playout.c), on a
 * live keyed session: none on a clean path; once the viewer's NACKs cover
 * 1 % of the stream, 1.5 round trips + 20 ms (a floor of 60 ms, the
 * setting as the ceiling, 100 ms when the round trip is unknown) and a
 * maximum of 10 s; 0 again after 800 packets without a NACK; never for
 * audio, without the extension, or with the setting at 0. */
#include "session_harness.h"

#include "session/session_internal.h"
#include "rtp/rtcp_packet.h"
#include "rtp/rtp_bytes.h"
#include "rtp/rtp_packet.h"

#include <glib.h>
#include <string.h>

#define PAYLOAD 1000

static uint64_t now_us;

static void start(session_harness *h, moat_media_kind kind, uint8_t extension_id, uint16_t max_ms)
{
    session_harness_init(h);
    h->negotiation.media[0].kind = kind;
    h->negotiation.media[0].playout_delay_extension_id = extension_id;
    session_harness_create(h, NULL);
    moat_worker_set_now_us(h->worker, now_us = 1000000);
    session_harness_key(h);
    h->session->playout_max_ms = max_ms;
}

static void send_media(session_harness *h, uint16_t *sequence, int n)
{
    for (int i = 0; i < n; i++, (*sequence)++) {
        moat_worker_set_now_us(h->worker, now_us += 10000);
        g_assert_cmpint(session_harness_gateway_send_rtp(h, *sequence, PAYLOAD), ==, 0);
        session_harness_flush(h);
    }
    session_harness_drain_peer(h, NULL);
}

/* The viewer NACKs `n` of the last packets sent, one RTCP compound. */
static void nack(session_harness *h, uint16_t last, int n)
{
    uint8_t plain[1400], out[1500];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, plain, sizeof plain);
    g_assert_cmpint(moat_rtcp_build_rr(&w, HARNESS_REMOTE_SSRC, NULL, 0), ==, 0);
    uint16_t lost[64];
    for (int i = 0; i < n; i++)
        lost[i] = (uint16_t)(last - i * 3);
    g_assert_cmpint(
        moat_rtcp_build_nack(&w, HARNESS_REMOTE_SSRC, HARNESS_LOCAL_SSRC, lost, (size_t)n), ==, 0);
    size_t length = session_harness_peer_protect_rtcp(h, plain, w.length, out, sizeof out);
    g_assert_cmpuint(length, >, 0);
    moat_session_handle_srtp(h->session, NULL, out, length, sizeof out);
    session_harness_flush(h);
    session_harness_drain_peer(h, NULL);
}

/* What a packet of `ssrc` would ask for now: min and max in 10 ms units,
 * or -1 for no extension. */
static int asked(session_harness *h, uint32_t ssrc, int *max_units)
{
    uint8_t packet[64] = {0x80, 96, 0, 1};
    moat_wr32(packet + 8, ssrc);
    size_t length = 12 + 4;
    moat_session_playout_stamp(h->session, packet, &length, sizeof packet);
    moat_rtp_header header;
    g_assert_cmpint(moat_rtp_parse(packet, length, &header), ==, MOAT_RTP_OK);
    const uint8_t *value;
    size_t size;
    if (moat_rtp_find_extension(packet, &header, 5, &value, &size) != MOAT_RTP_OK)
        return -1;
    g_assert_cmpuint(size, ==, 3);
    *max_units = (value[1] & 0x0f) << 8 | value[2];
    return value[0] << 4 | value[1] >> 4;
}

static void test_lossy_viewer_asked_then_released(void)
{
    session_harness h;
    start(&h, MOAT_MEDIA_KIND_VIDEO, 5, 400);
    uint16_t sequence = 0;
    int max_units = 0;
    send_media(&h, &sequence, 250);
    g_assert_cmpint(asked(&h, HARNESS_LOCAL_SSRC, &max_units), ==, -1); /* clean path */
    /* 20 of 250 NACKed (8 %): asked for 100 ms (RTT unknown) x 1.5 + 20. */
    nack(&h, (uint16_t)(sequence - 1), 20);
    g_assert_true(h.session->outgoing[0].playout_on);
    g_assert_cmpint(asked(&h, HARNESS_LOCAL_SSRC, &max_units), ==, 17);
    g_assert_cmpint(max_units, ==, 1000);
    /* The round trip sets it: 20 ms gives the 60 ms floor, 1 s the ceiling. */
    h.session->rtt_us = 20000;
    g_assert_cmpint(asked(&h, HARNESS_LOCAL_SSRC, &max_units), ==, 6);
    h.session->rtt_us = 1000000;
    g_assert_cmpint(asked(&h, HARNESS_LOCAL_SSRC, &max_units), ==, 40);
    /* Another SSRC (not this stream's): nothing. */
    g_assert_cmpint(asked(&h, 0x01020304u, &max_units), ==, -1);
    /* The loss stops: 800 packets with no NACK closing the window. */
    send_media(&h, &sequence, 700);
    g_assert_cmpint(asked(&h, HARNESS_LOCAL_SSRC, &max_units), ==, 40);
    send_media(&h, &sequence, 120);
    g_assert_cmpint(asked(&h, HARNESS_LOCAL_SSRC, &max_units), ==, 0);
    g_assert_cmpint(max_units, ==, 1000);
    g_assert_false(h.session->outgoing[0].playout_on);
    session_harness_clear(&h);
}

/* Under 1 % NACKed: not asked (one window's noise does not turn it on). */
static void test_light_loss_not_asked(void)
{
    session_harness h;
    start(&h, MOAT_MEDIA_KIND_VIDEO, 5, 400);
    uint16_t sequence = 0;
    int max_units;
    send_media(&h, &sequence, 250);
    nack(&h, (uint16_t)(sequence - 1), 2); /* 0.8 % */
    g_assert_cmpint(asked(&h, HARNESS_LOCAL_SSRC, &max_units), ==, -1);
    session_harness_clear(&h);
}

/* Audio, no extension, or the setting at 0: never asked. */
static void test_never_asked(void)
{
    const struct {
        moat_media_kind kind;
        uint8_t id;
        uint16_t max_ms;
    } cases[] = {{MOAT_MEDIA_KIND_AUDIO, 5, 400},
                 {MOAT_MEDIA_KIND_VIDEO, 0, 400},
                 {MOAT_MEDIA_KIND_VIDEO, 5, 0}};
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
        session_harness h;
        start(&h, cases[c].kind, cases[c].id, cases[c].max_ms);
        uint16_t sequence = 0;
        int max_units;
        send_media(&h, &sequence, 250);
        nack(&h, (uint16_t)(sequence - 1), 20);
        g_assert_cmpint(asked(&h, HARNESS_LOCAL_SSRC, &max_units), ==, -1);
        session_harness_clear(&h);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session_playout/lossy_then_released", test_lossy_viewer_asked_then_released);
    g_test_add_func("/session_playout/light_loss", test_light_loss_not_asked);
    g_test_add_func("/session_playout/never", test_never_asked);
    return g_test_run();
}

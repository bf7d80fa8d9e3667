/* The echo plugin driven through its moat_plugin table (its sources are
 * linked in) against a recording gateway, packets demultiplexed by the
 * core's demux as the gateway does: SSRC rewriting, m-line routing by
 * mid, SSRC and payload type, a sendonly peer, RTX, keyframe requests and
 * their rate limit, data channel echo and the status reply. */
#include <glib.h>
#include <string.h>

#include "echo_fake_gateway.h"
#include "plugin.h"
#include "rtp/rtcp_feedback.h"
#include "rtp/rtp_demux.h"
#include "rtp/rtp_packet.h"

const moat_plugin *moat_plugin_entry(void);

#define MID_EXT 3

enum { AUDIO_LOCAL = 0xA0A0, VIDEO_LOCAL = 0xB0B0, SENDONLY_LOCAL = 0xC0C0, RTX_LOCAL = 0xD0D0 };

typedef struct {
    const moat_plugin *plugin;
    moat_media_info media[4];
    moat_plugin_session gw;
    void *state;
    moat_rtp_demux demux;
} fixture;

static moat_media_info media_line(moat_media_kind kind, const char *mid, bool receives,
                                  uint32_t remote, uint32_t rtx, uint32_t local, uint8_t pt0,
                                  uint8_t pt1)
{
    moat_media_info m;
    memset(&m, 0, sizeof(m));
    m.kind = kind;
    g_strlcpy(m.mid, mid, sizeof(m.mid));
    m.peer_sends = true;
    m.peer_receives = receives;
    m.remote_ssrc = remote;
    m.remote_rtx_ssrc = rtx;
    m.local_ssrc = local;
    m.payload_types[0] = pt0;
    m.payload_types[1] = pt1;
    m.n_payload_types = pt1 != 0 ? 2 : 1;
    m.mid_extension_id = MID_EXT;
    return m;
}

/* m-lines: 0 audio, declared SSRC 0x1111; 1 video, SSRC not declared; 2
 * video the peer only sends (sendonly); 3 video with a declared RTX SSRC. */
static void setup(fixture *f, gconstpointer data)
{
    f->plugin = moat_plugin_entry();
    g_assert_cmpint(f->plugin->api_version, ==, MOAT_PLUGIN_API_VERSION);
    g_assert_cmpint(f->plugin->init(&fake_gateway_calls), ==, 0);
    f->media[0] = media_line(MOAT_MEDIA_KIND_AUDIO, "0", true, 0x1111, 0, AUDIO_LOCAL, 111, 0);
    f->media[1] = media_line(MOAT_MEDIA_KIND_VIDEO, "1", true, 0, 0, VIDEO_LOCAL, 96, 97);
    f->media[2] =
        media_line(MOAT_MEDIA_KIND_VIDEO, "2", false, 0x3333, 0x3334, SENDONLY_LOCAL, 98, 99);
    f->media[3] = media_line(MOAT_MEDIA_KIND_VIDEO, "3", true, 0x4444, 0x4445, RTX_LOCAL, 100, 101);
    moat_session_info info = {
        .session_id = "s1", .media = f->media, .n_media = 4, .has_data_channel = true};
    fake_session_init(&f->gw);
    moat_rtp_demux_init(&f->demux, f->media, 4);
    fake_gateway_now_us = 1000000;
    const char *error = NULL;
    f->state = f->plugin->attach(&f->gw, &info, &error);
    g_assert_nonnull(f->state);
    g_assert_null(error);
}

static void teardown(fixture *f, gconstpointer data)
{
    f->plugin->detach(f->state);
    f->plugin->destroy();
    fake_session_clear(&f->gw);
}

/* An RTP packet with an optional mid (one-byte extension MID_EXT) and
 * `payload` octets of payload. Returns its length. */
static size_t rtp(uint8_t *p, uint32_t ssrc, uint16_t seq, uint8_t pt, const char *mid,
                  size_t payload)
{
    size_t n = 12;
    memset(p, 0, 12);
    p[0] = 0x80;
    p[1] = pt;
    p[2] = (uint8_t)(seq >> 8);
    p[3] = (uint8_t)seq;
    uint32_t ts = (uint32_t)seq * 3000;
    p[4] = (uint8_t)(ts >> 24);
    p[5] = (uint8_t)(ts >> 16);
    p[6] = (uint8_t)(ts >> 8);
    p[7] = (uint8_t)ts;
    p[8] = (uint8_t)(ssrc >> 24);
    p[9] = (uint8_t)(ssrc >> 16);
    p[10] = (uint8_t)(ssrc >> 8);
    p[11] = (uint8_t)ssrc;
    if (mid != NULL) {
        size_t len = strlen(mid);
        size_t words = (1 + len + 3) / 4;
        p[0] |= 0x10;
        p[12] = 0xBE;
        p[13] = 0xDE;
        p[14] = 0;
        p[15] = (uint8_t)words;
        memset(p + 16, 0, words * 4);
        p[16] = (uint8_t)(MID_EXT << 4 | (len - 1));
        memcpy(p + 17, mid, len);
        n = 16 + words * 4;
    }
    for (size_t i = 0; i < payload; i++)
        p[n + i] = (uint8_t)(0x40 + i);
    return n + payload;
}

static void send_rtp(fixture *f, uint8_t *p, size_t len)
{
    moat_rtp_packet packet;
    if (moat_rtp_demux_packet(&f->demux, p, len, 1500, fake_gateway_now_us, &packet) == 0)
        f->plugin->on_media(f->state, &packet);
}

static moat_rtp_header sent_rtp(fixture *f, guint i, const uint8_t **data, size_t *len)
{
    g_assert_cmpuint(f->gw.rtp->len, >, i);
    *data = g_bytes_get_data(g_ptr_array_index(f->gw.rtp, i), len);
    moat_rtp_header h;
    g_assert_cmpint(moat_rtp_parse(*data, *len, &h), ==, MOAT_RTP_OK);
    return h;
}

/* Asserts that RTCP message i is exactly one PLI with these SSRCs. */
static void assert_pli(fixture *f, guint i, uint32_t sender, uint32_t media)
{
    g_assert_cmpuint(f->gw.rtcp->len, >, i);
    gsize len;
    const uint8_t *data = g_bytes_get_data(g_ptr_array_index(f->gw.rtcp, i), &len);
    g_assert_cmpint(moat_rtcp_check_compound(data, len), ==, 1);
    moat_rtcp_iter it;
    moat_rtcp_header h;
    moat_rtcp_fb fb;
    moat_rtcp_iter_init(&it, data, len);
    g_assert_cmpint(moat_rtcp_iter_next(&it, &h), ==, 1);
    g_assert_cmpint(moat_rtcp_parse_fb(&h, &fb), ==, MOAT_RTP_OK);
    g_assert_true(moat_rtcp_fb_is_pli(&fb));
    g_assert_cmpuint(fb.sender_ssrc, ==, sender);
    g_assert_cmpuint(fb.media_ssrc, ==, media);
}

static void peer_pli(fixture *f, uint32_t media_ssrc)
{
    uint8_t buf[64];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    /* As browsers send it: an RR first, then the PLI. */
    g_assert_cmpint(moat_rtcp_build_rr(&w, 0x2222, NULL, 0), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtcp_build_pli(&w, 0x2222, media_ssrc), ==, MOAT_RTP_OK);
    f->plugin->on_rtcp(f->state, buf, w.length);
}

static void test_ssrc_rewrite(fixture *f, gconstpointer data)
{
    uint8_t p[1500], orig[1500];
    size_t n = rtp(p, 0x1111, 5, 111, NULL, 40);
    p[1] |= 0x80; /* marker */
    memcpy(orig, p, n);
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtp->len, ==, 1);
    const uint8_t *out;
    size_t out_len;
    moat_rtp_header h = sent_rtp(f, 0, &out, &out_len);
    g_assert_cmpuint(h.ssrc, ==, AUDIO_LOCAL);
    g_assert_cmpuint(h.sequence, ==, 5);
    g_assert_cmpuint(h.timestamp, ==, 15000);
    g_assert_true(h.marker);
    /* Only the SSRC changed. */
    g_assert_cmpuint(out_len, ==, n);
    g_assert_cmpmem(out, 8, orig, 8);
    g_assert_cmpmem(out + 12, n - 12, orig + 12, n - 12);
    /* Audio: no keyframe request. */
    g_assert_cmpuint(f->gw.rtcp->len, ==, 0);

    char *reply = f->plugin->handle_message(f->state, "{}");
    g_assert_cmpstr(reply, ==, "{\"plugin\":\"echo\",\"echoed_rtp\":1,\"echoed_data\":0}");
    g_free(reply);
}

static void test_mid_route_and_first_pli(fixture *f, gconstpointer data)
{
    uint8_t p[1500];
    size_t n = rtp(p, 0x2222, 100, 96, "1", 30);
    send_rtp(f, p, n);
    /* A new video stream: one PLI so the echo starts on a keyframe. */
    g_assert_cmpuint(f->gw.rtcp->len, ==, 1);
    assert_pli(f, 0, VIDEO_LOCAL, 0x2222);
    g_assert_cmpuint(f->gw.rtp->len, ==, 1);
    const uint8_t *out;
    size_t out_len;
    moat_rtp_header h = sent_rtp(f, 0, &out, &out_len);
    g_assert_cmpuint(h.ssrc, ==, VIDEO_LOCAL);
    const uint8_t *mid;
    size_t mid_len;
    g_assert_cmpint(moat_rtp_find_extension(out, &h, MID_EXT, &mid, &mid_len), ==, MOAT_RTP_OK);
    g_assert_cmpmem(mid, mid_len, "1", 1);

    /* Later packets without the extension follow the learned SSRC. */
    n = rtp(p, 0x2222, 101, 96, NULL, 30);
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtp->len, ==, 2);
    h = sent_rtp(f, 1, &out, &out_len);
    g_assert_cmpuint(h.ssrc, ==, VIDEO_LOCAL);
    g_assert_cmpuint(h.sequence, ==, 101);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 1);

    /* A second SSRC on the same mid is not mixed into the echoed stream. */
    n = rtp(p, 0x2929, 7, 97, "1", 30);
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtp->len, ==, 2);
}

static void test_payload_type_route(fixture *f, gconstpointer data)
{
    uint8_t p[1500];
    /* No mid, undeclared SSRC: PT 97 belongs to m-line 1 only. */
    size_t n = rtp(p, 0x2222, 1, 97, NULL, 10);
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtp->len, ==, 1);
    const uint8_t *out;
    size_t out_len;
    g_assert_cmpuint(sent_rtp(f, 0, &out, &out_len).ssrc, ==, VIDEO_LOCAL);
    assert_pli(f, 0, VIDEO_LOCAL, 0x2222);
    /* A payload type no m-line has, from an unknown SSRC: dropped. */
    n = rtp(p, 0x7777, 1, 50, NULL, 10);
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtp->len, ==, 1);
    /* The declared SSRC routes even with another m-line's payload type. */
    n = rtp(p, 0x1111, 9, 96, NULL, 10);
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtp->len, ==, 2);
    g_assert_cmpuint(sent_rtp(f, 1, &out, &out_len).ssrc, ==, AUDIO_LOCAL);
}

static void test_sendonly_peer_gets_nothing(fixture *f, gconstpointer data)
{
    uint8_t p[1500];
    size_t n = rtp(p, 0x3333, 1, 98, "2", 100);
    send_rtp(f, p, n);
    n = rtp(p, 0x3333, 2, 98, NULL, 100);
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtp->len, ==, 0);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 0);
    /* Nor does a keyframe request for the stream we do not send. */
    peer_pli(f, SENDONLY_LOCAL);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 0);
    char *reply = f->plugin->handle_message(f->state, NULL);
    g_assert_cmpstr(reply, ==, "{\"plugin\":\"echo\",\"echoed_rtp\":0,\"echoed_data\":0}");
    g_free(reply);
}

static void test_rtx_not_echoed(fixture *f, gconstpointer data)
{
    uint8_t p[1500];
    size_t n = rtp(p, 0x4445, 1, 101, "3", 50);
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtp->len, ==, 0);
    n = rtp(p, 0x4444, 1, 100, "3", 50);
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtp->len, ==, 1);
    const uint8_t *out;
    size_t out_len;
    g_assert_cmpuint(sent_rtp(f, 0, &out, &out_len).ssrc, ==, RTX_LOCAL);
    assert_pli(f, 0, RTX_LOCAL, 0x4444);
}

static void test_padding_probe_does_not_claim_mline(fixture *f, gconstpointer data)
{
    uint8_t p[1500];
    /* Padding-only probe on mid 1 from what would be its RTX SSRC. */
    size_t n = rtp(p, 0x5555, 1, 97, "1", 0);
    p[0] |= 0x20;
    memset(p + n, 0, 255);
    p[n + 254] = 255;
    send_rtp(f, p, n + 255);
    g_assert_cmpuint(f->gw.rtp->len, ==, 0);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 0);
    n = rtp(p, 0x2222, 1, 96, "1", 20);
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtp->len, ==, 1);
    assert_pli(f, 0, VIDEO_LOCAL, 0x2222);
}

static void test_pli_forward_rate_limit(fixture *f, gconstpointer data)
{
    uint8_t p[1500];
    /* Before the peer's stream on m-line 1 is known, there is no one to ask. */
    peer_pli(f, VIDEO_LOCAL);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 0);

    fake_gateway_now_us = 1000000;
    size_t n = rtp(p, 0x2222, 1, 96, "1", 20);
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 1); /* first-seen PLI at t=1.0 s */

    fake_gateway_now_us = 1200000;
    peer_pli(f, VIDEO_LOCAL);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 1); /* within 500 ms */

    fake_gateway_now_us = 1500000;
    peer_pli(f, VIDEO_LOCAL);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 2);
    assert_pli(f, 1, VIDEO_LOCAL, 0x2222);

    fake_gateway_now_us = 1700000;
    peer_pli(f, VIDEO_LOCAL);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 2);

    /* FIR naming our SSRC in its FCI. */
    fake_gateway_now_us = 2100000;
    uint8_t buf[64];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    const moat_rtcp_fir_entry fir[] = {{0x9999, 1}, {VIDEO_LOCAL, 4}};
    g_assert_cmpint(moat_rtcp_build_fir(&w, 0x2222, fir, 2), ==, MOAT_RTP_OK);
    f->plugin->on_rtcp(f->state, buf, w.length);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 3);
    assert_pli(f, 2, VIDEO_LOCAL, 0x2222);

    /* The limit is per stream: m-line 3 is independent. */
    peer_pli(f, RTX_LOCAL);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 4);
    assert_pli(f, 3, RTX_LOCAL, 0x4444);

    /* Unknown target, and a malformed compound. */
    fake_gateway_now_us = 9000000;
    peer_pli(f, 0x9999);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 4);
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_pli(&w, 0x2222, VIDEO_LOCAL), ==, MOAT_RTP_OK);
    f->plugin->on_rtcp(f->state, buf, w.length - 1);
    g_assert_cmpuint(f->gw.rtcp->len, ==, 4);
}

static void test_data_echo(fixture *f, gconstpointer data)
{
    const uint8_t text[] = "hello";
    const uint8_t binary[] = {0, 1, 2, 255};
    f->plugin->on_data(f->state, 5, 51, text, 5);
    f->plugin->on_data(f->state, 2, 53, binary, sizeof(binary));
    f->plugin->on_data(f->state, 2, 57, NULL, 0);
    g_assert_cmpuint(f->gw.data->len, ==, 3);
    fake_data_message *m = g_ptr_array_index(f->gw.data, 0);
    g_assert_cmpuint(m->stream_id, ==, 5);
    g_assert_cmpuint(m->ppid, ==, 51);
    gsize len;
    const void *bytes = g_bytes_get_data(m->bytes, &len);
    g_assert_cmpmem(bytes, len, "hello", 5);
    m = g_ptr_array_index(f->gw.data, 1);
    g_assert_cmpuint(m->stream_id, ==, 2);
    g_assert_cmpuint(m->ppid, ==, 53);
    bytes = g_bytes_get_data(m->bytes, &len);
    g_assert_cmpmem(bytes, len, binary, sizeof(binary));
    m = g_ptr_array_index(f->gw.data, 2);
    g_assert_cmpuint(m->ppid, ==, 57);
    g_assert_cmpuint(g_bytes_get_size(m->bytes), ==, 0);

    char *reply = f->plugin->handle_message(f->state, "{}");
    g_assert_cmpstr(reply, ==, "{\"plugin\":\"echo\",\"echoed_rtp\":0,\"echoed_data\":3}");
    g_free(reply);
}

static void test_bad_rtp_and_hangup(fixture *f, gconstpointer data)
{
    uint8_t p[1500];
    size_t n = rtp(p, 0x1111, 1, 111, NULL, 10);
    send_rtp(f, p, 11);
    p[0] = 0x40;
    send_rtp(f, p, n);
    p[0] = 0xA0; /* padding flag, count octet 0x49 larger than the payload */
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtp->len, ==, 0);

    p[0] = 0x80;
    send_rtp(f, p, n);
    g_assert_cmpuint(f->gw.rtp->len, ==, 1);
    f->plugin->hangup(f->state);
    n = rtp(p, 0x1111, 2, 111, NULL, 10);
    send_rtp(f, p, n);
    f->plugin->on_data(f->state, 1, 51, (const uint8_t *)"x", 1);
    g_assert_cmpuint(f->gw.rtp->len, ==, 1);
    g_assert_cmpuint(f->gw.data->len, ==, 0);
}

static void test_attach_errors(void)
{
    const moat_plugin *plugin = moat_plugin_entry();
    moat_media_info media[MOAT_PLUGIN_MAX_MEDIA + 1];
    memset(media, 0, sizeof(media));
    moat_session_info info = {.session_id = "x", .media = media, .n_media = 1};
    moat_plugin_session gw;
    fake_session_init(&gw);
    const char *error = NULL;
    /* Before init. */
    g_assert_null(plugin->attach(&gw, &info, &error));
    g_assert_nonnull(error);
    moat_gateway_calls incomplete = fake_gateway_calls;
    incomplete.now_us = NULL;
    g_assert_cmpint(plugin->init(&incomplete), !=, 0);
    g_assert_cmpint(plugin->init(&fake_gateway_calls), ==, 0);
    info.n_media = MOAT_PLUGIN_MAX_MEDIA + 1;
    error = NULL;
    g_assert_null(plugin->attach(&gw, &info, &error));
    g_assert_nonnull(error);
    info.n_media = 0;
    void *state = plugin->attach(&gw, &info, &error);
    g_assert_nonnull(state);
    plugin->detach(state);
    plugin->destroy();
    fake_session_clear(&gw);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add(path, fixture, NULL, setup, fn, teardown)
    ADD("/echo/ssrc-rewrite", test_ssrc_rewrite);
    ADD("/echo/mid-route-and-first-pli", test_mid_route_and_first_pli);
    ADD("/echo/payload-type-route", test_payload_type_route);
    ADD("/echo/sendonly-peer-gets-nothing", test_sendonly_peer_gets_nothing);
    ADD("/echo/rtx-not-echoed", test_rtx_not_echoed);
    ADD("/echo/padding-probe-does-not-claim-mline", test_padding_probe_does_not_claim_mline);
    ADD("/echo/pli-forward-rate-limit", test_pli_forward_rate_limit);
    ADD("/echo/data-echo", test_data_echo);
    ADD("/echo/bad-rtp-and-hangup", test_bad_rtp_and_hangup);
#undef ADD
    g_test_add_func("/echo/attach-errors", test_attach_errors);
    return g_test_run();
}

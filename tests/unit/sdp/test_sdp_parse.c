/* moat_sdp_parse on offers as Chromium, Firefox and aiortc write them, and
 * on broken and hostile variants of them. */
#include <glib.h>
#include <string.h>

#include "offers.h"
#include "sdp/sdp.h"
#include "sdp_test_text.h"

static moat_sdp *parse_ok(const char *text)
{
    char error[256] = "";
    moat_sdp *sdp = moat_sdp_parse(text, strlen(text), error, sizeof error);
    if (sdp == NULL)
        g_error("unexpected parse failure: %s", error);
    g_assert_cmpstr(error, ==, "");
    return sdp;
}

/* Parses `text` (owned, freed here) and checks the error contains `expected`. */
static void parse_fails(char *text, const char *expected)
{
    char error[256] = "";
    moat_sdp *sdp = moat_sdp_parse(text, strlen(text), error, sizeof error);
    if (sdp != NULL)
        g_error("parse succeeded, expected \"%s\"", expected);
    if (strstr(error, expected) == NULL)
        g_error("error \"%s\" does not contain \"%s\"", error, expected);
    g_free(text);
}

static const moat_sdp_codec *codec(const moat_sdp_media *m, uint8_t pt)
{
    for (size_t i = 0; i < m->n_codecs; i++)
        if (m->codecs[i].pt == pt)
            return &m->codecs[i];
    g_error("payload type %u not found", pt);
    return NULL;
}

static bool has_feedback(const moat_sdp_codec *c, const char *feedback)
{
    for (size_t i = 0; i < c->n_rtcp_fb; i++)
        if (strcmp(c->rtcp_fb[i], feedback) == 0)
            return true;
    return false;
}

#define CHROME_FP                                                                                  \
    "A5:4D:CA:18:25:30:BB:1D:6D:13:2C:DE:D6:23:7B:2E:D9:1E:3F:72:1F:CB:19:71:17:44:94:D6:49:3C:"   \
    "9D:5C"

static void test_chromium(void)
{
    moat_sdp *sdp = parse_ok(moat_test_offer_chromium);
    g_assert_cmpuint(sdp->n_media, ==, 3);
    g_assert_cmpstr(sdp->origin.username, ==, "-");
    g_assert_cmpstr(sdp->origin.session_id, ==, "4215775240449105457");
    g_assert_cmpstr(sdp->origin.session_version, ==, "2");
    g_assert_cmpstr(sdp->origin.address, ==, "127.0.0.1");
    g_assert_false(sdp->ice_lite);
    g_assert_true(sdp->extmap_allow_mixed);
    g_assert_cmpuint(sdp->n_bundle_mids, ==, 3);
    g_assert_cmpstr(sdp->bundle_mids[0], ==, "0");
    g_assert_cmpstr(sdp->bundle_mids[2], ==, "2");

    const moat_sdp_media *audio = &sdp->media[0];
    g_assert_true(audio->kind_known);
    g_assert_cmpint(audio->kind, ==, MOAT_MEDIA_KIND_AUDIO);
    g_assert_cmpuint(audio->port, ==, 9);
    g_assert_cmpstr(audio->proto, ==, "UDP/TLS/RTP/SAVPF");
    g_assert_true(audio->is_rtp);
    g_assert_cmpstr(audio->mid, ==, "0");
    g_assert_cmpint(audio->direction, ==, MOAT_SDP_SENDRECV);
    g_assert_cmpuint(audio->n_codecs, ==, 8);
    g_assert_cmpuint(audio->codecs[0].pt, ==, 111); /* m= line order is kept */
    g_assert_cmpuint(audio->codecs[7].pt, ==, 126);
    const moat_sdp_codec *opus = codec(audio, 111);
    g_assert_cmpstr(opus->name, ==, "opus");
    g_assert_cmpuint(opus->clock_rate, ==, 48000);
    g_assert_cmpuint(opus->channels, ==, 2);
    g_assert_cmpstr(opus->fmtp, ==, "minptime=10;useinbandfec=1");
    g_assert_cmpuint(opus->n_rtcp_fb, ==, 1);
    g_assert_cmpstr(opus->rtcp_fb[0], ==, "transport-cc");
    g_assert_cmpstr(codec(audio, 63)->fmtp, ==, "111/111");
    g_assert_cmpuint(codec(audio, 0)->channels, ==, 0);
    g_assert_cmpuint(codec(audio, 110)->clock_rate, ==, 48000);
    g_assert_cmpuint(audio->n_extmaps, ==, 4);
    g_assert_cmpuint(audio->extmaps[3].id, ==, 4);
    g_assert_cmpstr(audio->extmaps[3].uri, ==, "urn:ietf:params:rtp-hdrext:sdes:mid");
    g_assert_cmpuint(audio->n_ssrcs, ==, 1);
    g_assert_cmpuint(audio->ssrcs[0].ssrc, ==, 2411974397u);
    g_assert_cmpstr(audio->ssrcs[0].cname, ==, "q7s1T4b3mZ8w2rLd");
    g_assert_cmpstr(audio->ssrcs[0].msid, ==,
                    "7c2a8a3e-9d3b-4f4e-8d1c-2b6f1f6b9a10 3f0e5c1d-2a4b-4c6d-8e9f-0a1b2c3d4e5f");
    g_assert_cmpstr(audio->msid, ==,
                    "7c2a8a3e-9d3b-4f4e-8d1c-2b6f1f6b9a10 3f0e5c1d-2a4b-4c6d-8e9f-0a1b2c3d4e5f");
    g_assert_cmpstr(audio->ice_ufrag, ==, "Vg7k");
    g_assert_cmpstr(audio->ice_pwd, ==, "Lq2/fI1X0wVbN7sQ3sQk2a1Z");
    g_assert_cmpstr(audio->fingerprint_alg, ==, "sha-256");
    g_assert_cmpstr(audio->fingerprint, ==, CHROME_FP);
    g_assert_cmpint(audio->setup, ==, MOAT_SDP_SETUP_ACTPASS);
    g_assert_true(audio->rtcp_mux);
    g_assert_true(audio->rtcp_rsize);
    g_assert_cmpuint(audio->n_candidates, ==, 0);
    g_assert_false(audio->end_of_candidates);

    const moat_sdp_media *video = &sdp->media[1];
    g_assert_cmpint(video->kind, ==, MOAT_MEDIA_KIND_VIDEO);
    g_assert_cmpuint(video->n_codecs, ==, 25);
    const moat_sdp_codec *vp8 = codec(video, 96);
    g_assert_cmpstr(vp8->name, ==, "VP8");
    g_assert_cmpuint(vp8->n_rtcp_fb, ==, 5);
    g_assert_true(has_feedback(vp8, "nack pli"));
    g_assert_true(has_feedback(vp8, "ccm fir"));
    g_assert_cmpstr(codec(video, 106)->fmtp, ==,
                    "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f");
    g_assert_cmpstr(codec(video, 97)->name, ==, "rtx");
    g_assert_cmpstr(codec(video, 97)->fmtp, ==, "apt=96");
    g_assert_cmpuint(video->n_extmaps, ==, 11);
    g_assert_cmpuint(video->n_fids, ==, 1);
    g_assert_cmpuint(video->fids[0].primary, ==, 3906417220u);
    g_assert_cmpuint(video->fids[0].retransmission, ==, 1419785283u);
    g_assert_cmpuint(video->n_ssrcs, ==, 2);

    const moat_sdp_media *data = &sdp->media[2];
    g_assert_cmpint(data->kind, ==, MOAT_MEDIA_KIND_APPLICATION);
    g_assert_false(data->is_rtp);
    g_assert_cmpstr(data->proto, ==, "UDP/DTLS/SCTP");
    g_assert_cmpstr(data->first_format, ==, "webrtc-datachannel");
    g_assert_cmpuint(data->n_codecs, ==, 0);
    g_assert_true(data->has_sctp_port);
    g_assert_cmpuint(data->sctp_port, ==, 5000);
    g_assert_true(data->has_max_message_size);
    g_assert_cmpuint(data->max_message_size, ==, 262144);

    g_assert_true(moat_sdp_media_by_mid(sdp, "1") == video);
    g_assert_null(moat_sdp_media_by_mid(sdp, "7"));
    moat_sdp_free(sdp);
}

static void test_firefox(void)
{
    moat_sdp *sdp = parse_ok(moat_test_offer_firefox);
    g_assert_cmpuint(sdp->n_media, ==, 2);
    g_assert_cmpstr(sdp->origin.username, ==, "mozilla...THIS_IS_SDPARTA-120.0");
    const char *fp = "34:60:BE:31:20:1E:69:FE:DA:A0:EE:E8:B9:99:7F:5C:7C:29:99:FD:AF:E5:93:25:3C:"
                     "D6:54:AF:4D:FA:D7:14";
    /* The fingerprint is only at session level: each m-line inherits it. */
    for (size_t i = 0; i < 2; i++) {
        g_assert_cmpstr(sdp->media[i].fingerprint, ==, fp);
        g_assert_cmpstr(sdp->media[i].fingerprint_alg, ==, "sha-256");
        g_assert_cmpstr(sdp->media[i].ice_ufrag, ==, "8f3a1c2b");
        g_assert_cmpint(sdp->media[i].setup, ==, MOAT_SDP_SETUP_ACTPASS);
    }
    const moat_sdp_media *audio = &sdp->media[0];
    g_assert_cmpuint(audio->n_codecs, ==, 5);
    g_assert_cmpstr(codec(audio, 109)->fmtp, ==, "maxplaybackrate=48000;stereo=1;useinbandfec=1");
    g_assert_cmpuint(codec(audio, 9)->channels, ==, 1);
    g_assert_cmpstr(codec(audio, 101)->fmtp, ==, "0-15");
    g_assert_true(audio->extmaps[1].has_direction);
    g_assert_cmpint(audio->extmaps[1].direction, ==, MOAT_SDP_RECVONLY);
    g_assert_false(audio->extmaps[0].has_direction);
    g_assert_cmpuint(audio->n_ssrcs, ==, 1);
    g_assert_cmpstr(audio->ssrcs[0].cname, ==, "{c0b6a1e2-7d3f-4b5a-9e8c-1d2f3a4b5c6d}");
    g_assert_cmpstr(audio->ssrcs[0].msid, ==, "");
    g_assert_false(audio->rtcp_rsize);

    const moat_sdp_media *video = &sdp->media[1];
    g_assert_cmpuint(video->n_codecs, ==, 11);
    g_assert_cmpstr(codec(video, 121)->name, ==, "VP9");
    g_assert_cmpuint(codec(video, 126)->n_rtcp_fb, ==, 5);
    g_assert_cmpuint(video->n_ssrcs, ==, 2);
    g_assert_cmpuint(video->n_fids, ==, 1);
    g_assert_cmpuint(video->fids[0].retransmission, ==, 1542713372u);
    moat_sdp_free(sdp);
}

static void test_aiortc(void)
{
    moat_sdp *sdp = parse_ok(moat_test_offer_aiortc);
    g_assert_cmpuint(sdp->n_media, ==, 2);
    const moat_sdp_media *audio = &sdp->media[0];
    g_assert_cmpuint(audio->port, ==, 52345);
    g_assert_cmpuint(audio->n_candidates, ==, 3);
    g_assert_true(audio->end_of_candidates);
    const moat_sdp_candidate *host = &audio->candidates[0];
    g_assert_cmpstr(host->foundation, ==, "2e5d8c1f0a3b4c6d7e8f9a0b1c2d3e4f");
    g_assert_cmpuint(host->component, ==, 1);
    g_assert_cmpstr(host->transport, ==, "udp");
    g_assert_cmpuint(host->priority, ==, 2130706431u);
    g_assert_cmpstr(host->address, ==, "192.168.1.20");
    g_assert_cmpuint(host->port, ==, 52345);
    g_assert_cmpstr(host->type, ==, "host");
    g_assert_cmpstr(audio->candidates[1].address, ==, "fd00::1c2d:3e4f");
    g_assert_cmpstr(audio->candidates[2].type, ==, "srflx");
    g_assert_cmpstr(audio->candidates[2].address, ==, "203.0.113.7");
    g_assert_cmpstr(audio->ice_ufrag, ==, "Wp3q");
    g_assert_cmpint(audio->setup, ==, MOAT_SDP_SETUP_ACTPASS);
    g_assert_cmpstr(sdp->media[1].mid, ==, "1");
    g_assert_cmpuint(sdp->media[1].n_candidates, ==, 3);
    moat_sdp_free(sdp);
}

/* The same offer with LF line ends parses to the same description. */
static void test_lf_equals_crlf(void)
{
    const char *offers[] = {moat_test_offer_chromium, moat_test_offer_firefox,
                            moat_test_offer_aiortc};
    for (size_t i = 0; i < G_N_ELEMENTS(offers); i++) {
        char *lf = moat_test_replace(offers[i], "\r\n", "\n");
        moat_sdp *a = parse_ok(offers[i]);
        moat_sdp *b = parse_ok(lf);
        g_assert_cmpuint(a->n_media, ==, b->n_media);
        for (size_t m = 0; m < a->n_media; m++) {
            const moat_sdp_media *x = &a->media[m], *y = &b->media[m];
            g_assert_cmpuint(x->n_codecs, ==, y->n_codecs);
            if (x->n_codecs > 0)
                g_assert_cmpint(memcmp(x->codecs, y->codecs, x->n_codecs * sizeof *x->codecs), ==,
                                0);
            g_assert_cmpstr(x->fingerprint, ==, y->fingerprint);
            g_assert_cmpstr(x->ice_pwd, ==, y->ice_pwd);
            g_assert_cmpstr(x->mid, ==, y->mid);
            g_assert_cmpuint(x->n_candidates, ==, y->n_candidates);
            g_assert_cmpuint(x->n_ssrcs, ==, y->n_ssrcs);
        }
        moat_sdp_free(a);
        moat_sdp_free(b);
        g_free(lf);
    }
}

/* Bundled m-lines may leave the transport to the tagged one; a bundle-only
 * m-line is offered with port 0 and still counts. */
static void test_bundle_inheritance(void)
{
    char *text = g_strdup("v=0\r\n"
                          "o=- 1 1 IN IP4 0.0.0.0\r\n"
                          "s=-\r\nt=0 0\r\n"
                          "a=group:BUNDLE a v\r\n"
                          "a=sendonly\r\n"
                          "m=audio 9 UDP/TLS/RTP/SAVPF 0 8\r\n"
                          "a=mid:a\r\n"
                          "a=ice-ufrag:abcd\r\n"
                          "a=ice-pwd:abcdefghijklmnopqrstuv\r\n"
                          "a=fingerprint:SHA-256 " CHROME_FP "\r\n"
                          "a=setup:active\r\n"
                          "a=rtcp-mux\r\n"
                          "m=video 0 UDP/TLS/RTP/SAVPF 96\r\n"
                          "a=bundle-only\r\n"
                          "a=mid:v\r\n"
                          "a=recvonly\r\n"
                          "a=rtpmap:96 vp8/90000\r\n"
                          "a=rtcp-fb:* nack\r\n"
                          "a=rtcp-fb:96 nack\r\n"
                          "a=rtcp-fb:96   nack   pli\r\n");
    moat_sdp *sdp = parse_ok(text);
    const moat_sdp_media *audio = &sdp->media[0], *video = &sdp->media[1];
    /* Static payload types without a=rtpmap get their RFC 3551 names. */
    g_assert_cmpstr(audio->codecs[0].name, ==, "PCMU");
    g_assert_cmpuint(audio->codecs[1].clock_rate, ==, 8000);
    g_assert_cmpstr(audio->codecs[1].name, ==, "PCMA");
    g_assert_cmpint(audio->direction, ==, MOAT_SDP_SENDONLY); /* session-level direction */
    g_assert_true(video->bundle_only);
    g_assert_cmpuint(video->port, ==, 0);
    g_assert_cmpint(video->direction, ==, MOAT_SDP_RECVONLY);
    g_assert_cmpstr(video->ice_ufrag, ==, "abcd");
    g_assert_cmpstr(video->ice_pwd, ==, "abcdefghijklmnopqrstuv");
    g_assert_cmpstr(video->fingerprint, ==, CHROME_FP);
    g_assert_cmpint(video->setup, ==, MOAT_SDP_SETUP_ACTIVE);
    g_assert_cmpuint(video->codecs[0].n_rtcp_fb, ==, 2); /* wildcard and duplicate merged */
    g_assert_cmpstr(video->codecs[0].rtcp_fb[0], ==, "nack");
    g_assert_cmpstr(video->codecs[0].rtcp_fb[1], ==, "nack pli");
    moat_sdp_free(sdp);
    g_free(text);
}

/* Spellings real offers use: lowercase digests, sha-384, bandwidth lines,
 * rtcp-mux-only, several a=msid lines. */
static void test_attribute_forms(void)
{
    char *text = moat_test_replace(moat_test_offer_aiortc, "a=mid:0\r\n",
                                   "a=mid:0\r\nb=AS:64\r\nb=TIAS:64000\r\nb=CT:1000\r\n"
                                   "a=msid:first track\r\na=rtcp-mux-only\r\n");
    char *lower = moat_test_replace(text, "27:A0:AE:B3", "27:a0:ae:b3");
    moat_sdp *sdp = parse_ok(lower);
    g_assert_cmpuint(sdp->media[0].bandwidth_as_kbps, ==, 64);
    g_assert_cmpuint(sdp->media[0].bandwidth_tias_bps, ==, 64000);
    g_assert_cmpuint(sdp->media[1].bandwidth_as_kbps, ==, 0);
    g_assert_true(g_str_has_prefix(sdp->media[0].fingerprint, "27:A0:AE:B3:FE"));
    g_assert_cmpstr(sdp->media[0].msid, ==, "first track"); /* the first a=msid is kept */
    moat_sdp_free(sdp);
    g_free(lower);
    g_free(text);

    const char *sha384 = "a=fingerprint:sha-384 "
                         "00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:"
                         "88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF";
    /* An unusable hash next to a usable one is skipped. */
    char *with = g_strdup_printf("a=fingerprint:sha-1 00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:"
                                 "EE:FF:00:11:22:33\r\n%s\r\na=setup:actpass",
                                 sha384);
    char *dropped = moat_test_drop_lines(moat_test_offer_aiortc, "a=fingerprint");
    text = moat_test_replace(dropped, "a=setup:actpass", with);
    sdp = parse_ok(text);
    g_assert_cmpstr(sdp->media[1].fingerprint_alg, ==, "sha-384");
    g_assert_cmpuint(strlen(sdp->media[1].fingerprint), ==, 48 * 3 - 1);
    moat_sdp_free(sdp);
    g_free(text);
    g_free(with);
    g_free(dropped);
}

/* RFC 8122: a media-level fingerprint replaces the session's, so a session
 * line with a hash Moat does not take matters only to an m-line left
 * without one of its own. */
static void test_session_fingerprint_of_an_unsupported_hash(void)
{
    char *sha1 = moat_test_replace(moat_test_offer_firefox, "a=fingerprint:sha-256 34:60:BE",
                                   "a=fingerprint:sha-1 34:60:BE");
    parse_fails(g_strdup(sha1), "line 5: a=fingerprint: unsupported hash");
#define OWN                                                                                        \
    "a=fingerprint:sha-256 27:A0:AE:B3:FE:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:"  \
    "22:33:44:55:66:77:88:99:AA\r\n"
    /* Each m-line with its own. */
    char *text = moat_test_replace(sha1, "a=setup:actpass\r\n", OWN "a=setup:actpass\r\n");
    moat_sdp *sdp = parse_ok(text);
    for (size_t i = 0; i < 2; i++) {
        g_assert_cmpstr(sdp->media[i].fingerprint_alg, ==, "sha-256");
        g_assert_true(g_str_has_prefix(sdp->media[i].fingerprint, "27:A0:AE:B3:FE"));
    }
    moat_sdp_free(sdp);
    g_free(text);
    /* Only the first, and no BUNDLE to lend it: the second has none usable. */
    char *unbundled = moat_test_replace(sha1, "a=group:BUNDLE 0 1\r\n", "");
    text = moat_test_replace(unbundled, "a=mid:0\r\n", "a=mid:0\r\n" OWN);
    parse_fails(text, "line 5: a=fingerprint: unsupported hash");
#undef OWN
    g_free(unbundled);
    g_free(sha1);
}

static void test_srtpplus_attributes(void)
{
    char *text = moat_test_replace(moat_test_offer_aiortc, "a=setup:actpass\r\n",
                                   "a=setup:actpass\r\n"
                                   "a=srtpplus:chain depth=16;copies=3\r\n"
                                   "a=srtpplus:future-scheme x=1\r\n"
                                   "a=srtpplus:prn\r\n"
                                   "a=srtpplus:chain\r\n");
    moat_sdp *sdp = parse_ok(text);
    const moat_sdp_media *m = &sdp->media[1];
    g_assert_cmpuint(m->n_srtpplus, ==, 2);
    g_assert_cmpstr(m->srtpplus[0].scheme, ==, "chain");
    g_assert_cmpuint(m->srtpplus[0].depth, ==, 16);
    g_assert_cmpuint(m->srtpplus[0].copies, ==, 3);
    g_assert_cmpstr(m->srtpplus[1].scheme, ==, "prn");
    g_assert_cmpuint(m->srtpplus[1].depth, ==, 0);
    moat_sdp_free(sdp);
    g_free(text);

    /* Session level, defaults when the parameters are omitted. */
    text = moat_test_replace(moat_test_offer_firefox, "a=ice-options:trickle\r\n",
                             "a=srtpplus:chain\r\na=srtpplus:chain depth=1\r\n");
    sdp = parse_ok(text);
    for (size_t i = 0; i < sdp->n_media; i++) {
        g_assert_cmpuint(sdp->media[i].n_srtpplus, ==, 1);
        g_assert_cmpuint(sdp->media[i].srtpplus[0].depth, ==, 32);
        g_assert_cmpuint(sdp->media[i].srtpplus[0].copies, ==, 2);
    }
    moat_sdp_free(sdp);
    g_free(text);

    text = moat_test_replace(moat_test_offer_firefox, "a=ice-options:trickle\r\n",
                             "a=srtpplus:chain depth=1\r\n");
    sdp = parse_ok(text);
    g_assert_cmpuint(sdp->media[0].srtpplus[0].copies, ==, 1); /* never more than depth */
    moat_sdp_free(sdp);
    g_free(text);
}

/* A media kind the gateway does not take needs no ICE attributes. */
static void test_unknown_media_kind(void)
{
    char *text = g_strconcat(moat_test_offer_aiortc, "m=text 9 RTP/AVP 98\r\na=mid:t\r\n", NULL);
    moat_sdp *sdp = parse_ok(text);
    g_assert_cmpuint(sdp->n_media, ==, 3);
    g_assert_false(sdp->media[2].kind_known);
    g_assert_cmpstr(sdp->media[2].media, ==, "text");
    g_assert_cmpstr(sdp->media[2].first_format, ==, "98");
    moat_sdp_free(sdp);
    g_free(text);
}

static void test_errors(void)
{
    const char *chrome = moat_test_offer_chromium;
    parse_fails(g_strdup(""), "no m= line");
    parse_fails(g_strdup("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"), "no m= line");
    parse_fails(moat_test_replace(chrome, "v=0\r\n", "v=1\r\n"), "line 1: v=: expected v=0");
    parse_fails(moat_test_drop_lines(chrome, "o="), "missing o= line");
    parse_fails(moat_test_drop_lines(chrome, "a=ice-ufrag"),
                "m-line 1 (mid 0): missing a=ice-ufrag");
    parse_fails(moat_test_drop_lines(chrome, "a=ice-pwd"), "missing a=ice-pwd");
    parse_fails(moat_test_drop_lines(chrome, "a=fingerprint"), "missing a=fingerprint");
    parse_fails(moat_test_drop_lines(chrome, "a=setup"), "missing a=setup");
    parse_fails(
        moat_test_replace(chrome, "a=fingerprint:sha-256 A5:4D", "a=fingerprint:sha-1 A5:4D"),
        "line 14: a=fingerprint: unsupported hash");
    parse_fails(moat_test_replace(chrome, "3C:9D:5C", "3C:9D:5"), "a=fingerprint: malformed");
    parse_fails(moat_test_replace(chrome, "3C:9D:5C", "3C:9D:ZZ"), "a=fingerprint: malformed");
    parse_fails(moat_test_replace(chrome, "a=setup:actpass", "a=setup:holdconn"), "holdconn");
    parse_fails(moat_test_replace(chrome, "a=ice-ufrag:Vg7k", "a=ice-ufrag:V"), "a=ice-ufrag");
    parse_fails(moat_test_replace(chrome, "a=ice-pwd:Lq2/", "a=ice-pwd:L;q2/"), "a=ice-pwd");
    parse_fails(moat_test_replace(chrome, "a=mid:1\r\n", "a=mid:0\r\n"), "duplicate a=mid:0");
    parse_fails(moat_test_replace(chrome, "BUNDLE 0 1 2", "BUNDLE 0 1 2 9"), "unknown mid 9");
    parse_fails(moat_test_replace(chrome, "SAVPF 111 63", "SAVPF 111 111"),
                "m=: duplicate payload type");
    parse_fails(moat_test_replace(chrome, "SAVPF 111 63", "SAVPF 111 128"), "bad payload type");
    parse_fails(moat_test_replace(chrome, "m=audio 9 ", "m=audio 65536 "), "m=: bad port");
    parse_fails(moat_test_replace(chrome, "m=application 9 UDP/DTLS/SCTP webrtc-datachannel",
                                  "m=application 9 UDP/DTLS/SCTP"),
                "m=: no formats");
    parse_fails(moat_test_replace(chrome, "a=rtpmap:111 opus/48000/2", "a=rtpmap:111 opus"),
                "a=rtpmap: missing clock rate");
    parse_fails(moat_test_replace(chrome, "a=rtpmap:0 PCMU/8000",
                                  "a=rtpmap:0 PCMU/8000\r\n"
                                  "a=rtpmap:0 PCMU/8000"),
                "a=rtpmap: duplicate");
    parse_fails(moat_test_replace(chrome, "a=extmap:4 ", "a=extmap:1 "), "a=extmap: duplicate id");
    parse_fails(moat_test_replace(chrome, "a=extmap:4 ", "a=extmap:0 "), "a=extmap: bad id");
    parse_fails(moat_test_replace(chrome, "FID 3906417220 1419785283", "FID 3906417220"),
                "FID needs two SSRCs");
    parse_fails(moat_test_replace(chrome, "a=ssrc:2411974397 cname", "a=ssrc:0 cname"),
                "a=ssrc: bad SSRC");
    parse_fails(moat_test_replace(chrome, "a=sctp-port:5000", "a=sctp-port:0"), "a=sctp-port");
    parse_fails(moat_test_replace(moat_test_offer_aiortc, " 52345 typ srflx", " 70000 typ srflx"),
                "a=candidate: bad port");
    parse_fails(moat_test_replace(moat_test_offer_aiortc, "typ srflx", "typ bogus"),
                "a=candidate: bad type");
    parse_fails(moat_test_replace(chrome, "a=mid:0", "a=mid:0 1"), "a=mid");
    parse_fails(moat_test_replace(chrome, "c=IN IP4 0.0.0.0\r\na=rtcp:9",
                                  "c=IN IP4 0.0.0.0\r\n"
                                  "o=- 1 1 IN IP4 1.1.1.1\r\n"
                                  "a=rtcp:9"),
                "o=: inside a media section");
    parse_fails(moat_test_replace(chrome, "s=-\r\n", "s=-\r\nnonsense\r\n"),
                "line 4: expected <type>=<value>");
    parse_fails(moat_test_replace(chrome, "s=-\r\n", "s=-\r\nv=0\r\n"), "v=: repeated");
}

static void test_srtpplus_errors(void)
{
    const char *base = moat_test_offer_aiortc;
    struct {
        const char *line;
        const char *expected;
    } cases[] = {
        {"a=srtpplus:chain depth=0;copies=1", "depth must be 1..255"},
        {"a=srtpplus:chain depth=256", "depth must be 1..255"},
        {"a=srtpplus:chain copies=5", "copies must be 1..4"},
        {"a=srtpplus:chain copies=0", "copies must be 1..4"},
        {"a=srtpplus:chain depth=2;copies=3", "copies larger than depth"},
        {"a=srtpplus:chain depth", "malformed parameter"},
        {"a=srtpplus:", "missing scheme"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *with = g_strdup_printf("a=setup:actpass\r\n%s\r\n", cases[i].line);
        char *text = moat_test_replace(base, "a=setup:actpass\r\n", with);
        char *expected = g_strdup_printf("a=srtpplus: %s", cases[i].expected);
        parse_fails(text, expected);
        g_free(expected);
        g_free(with);
    }
}

/* Hostile shapes: sizes and counts beyond the fixed maxima, bytes that are
 * not text. */
static void test_hostile(void)
{
    const char *chrome = moat_test_offer_chromium;
    /* A 4097-byte line is refused, a 4096-byte one is not. */
    GString *line = g_string_new("a=x-long:");
    while (line->len < 4096)
        g_string_append_c(line, 'x');
    char *with = g_strdup_printf("s=-\r\n%s\r\n", line->str);
    char *text = moat_test_replace(chrome, "s=-\r\n", with);
    moat_sdp_free(parse_ok(text));
    g_free(text);
    g_free(with);
    g_string_append_c(line, 'x');
    with = g_strdup_printf("s=-\r\n%s\r\n", line->str);
    parse_fails(moat_test_replace(chrome, "s=-\r\n", with), "line 4: longer than 4096 bytes");
    g_free(with);
    g_string_free(line, TRUE);

    GString *many = g_string_new(moat_test_offer_aiortc);
    for (int i = 0; i < 14; i++)
        g_string_append(many, "m=text 0 RTP/AVP 0\r\n");
    moat_sdp_free(parse_ok(many->str)); /* exactly 16 */
    g_string_append(many, "m=text 0 RTP/AVP 0\r\n");
    parse_fails(g_string_free(many, FALSE), "more than 16 m= lines");

    /* Non-UTF-8, NUL and control bytes. */
    parse_fails(moat_test_replace(chrome, "s=-", "s=\xff\xfe"), "not valid UTF-8");
    parse_fails(moat_test_replace(chrome, "s=-", "s=\xc3"), "not valid UTF-8");
    char *nul = g_strdup(chrome);
    nul[20] = '\0';
    char error[256];
    g_assert_null(moat_sdp_parse(nul, strlen(chrome), error, sizeof error));
    g_assert_cmpstr(error, ==, "not valid UTF-8");
    g_free(nul);
    parse_fails(moat_test_replace(chrome, "s=-", "s=\x01"), "line 3: control character 0x01");
    parse_fails(moat_test_replace(chrome, "s=-\r\n", "s=-\r\r\n"), "control character 0x0d");
    /* UTF-8 in a value is fine (s= may carry a name). */
    text = moat_test_replace(chrome, "s=-",
                             "s=Gr\xc3\xbc\xc3\x9f"
                             "e");
    moat_sdp_free(parse_ok(text));
    g_free(text);

    /* Per-m-line counts. */
    GString *candidates = g_string_new("a=setup:actpass\r\n");
    for (int i = 0; i < 33; i++)
        g_string_append_printf(candidates, "a=candidate:%d 1 udp 1 10.0.0.%d 9 typ host\r\n", i, i);
    parse_fails(moat_test_replace(moat_test_offer_aiortc, "a=setup:actpass\r\n", candidates->str),
                "too many candidates");
    g_string_free(candidates, TRUE);
    GString *ssrcs = g_string_new("a=rtcp-mux\r\n");
    for (int i = 1; i <= 33; i++)
        g_string_append_printf(ssrcs, "a=ssrc:%d cname:x\r\n", i);
    parse_fails(moat_test_replace(moat_test_offer_aiortc, "a=rtcp-mux\r\n", ssrcs->str),
                "too many SSRCs");
    g_string_free(ssrcs, TRUE);
    GString *feedback = g_string_new("a=rtcp-mux\r\n");
    for (int i = 0; i < 17; i++)
        g_string_append_printf(feedback, "a=rtcp-fb:* x-%d\r\n", i);
    parse_fails(moat_test_replace(moat_test_offer_aiortc, "a=rtcp-mux\r\n", feedback->str),
                "a=rtcp-fb: too many");
    g_string_free(feedback, TRUE);

    /* Over the total size limit. */
    char *huge = g_malloc(MOAT_SDP_MAX_TEXT + 2);
    memset(huge, 'a', MOAT_SDP_MAX_TEXT + 1);
    huge[MOAT_SDP_MAX_TEXT + 1] = '\0';
    parse_fails(huge, "longer than");

    /* NULL text and no error buffer do not crash. */
    g_assert_null(moat_sdp_parse(NULL, 0, NULL, 0));
    g_assert_null(moat_sdp_parse(NULL, 10, error, sizeof error));
    moat_sdp_free(NULL);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sdp/parse/chromium", test_chromium);
    g_test_add_func("/sdp/parse/firefox", test_firefox);
    g_test_add_func("/sdp/parse/session-fingerprint-unsupported",
                    test_session_fingerprint_of_an_unsupported_hash);
    g_test_add_func("/sdp/parse/aiortc", test_aiortc);
    g_test_add_func("/sdp/parse/lf-equals-crlf", test_lf_equals_crlf);
    g_test_add_func("/sdp/parse/bundle-inheritance", test_bundle_inheritance);
    g_test_add_func("/sdp/parse/attribute-forms", test_attribute_forms);
    g_test_add_func("/sdp/parse/srtpplus", test_srtpplus_attributes);
    g_test_add_func("/sdp/parse/unknown-media-kind", test_unknown_media_kind);
    g_test_add_func("/sdp/parse/errors", test_errors);
    g_test_add_func("/sdp/parse/srtpplus-errors", test_srtpplus_errors);
    g_test_add_func("/sdp/parse/hostile", test_hostile);
    return g_test_run();
}

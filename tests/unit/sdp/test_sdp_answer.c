/* moat_sdp_answer_create: what the gateway accepts from real offers, what it
 * writes back, and which offers it refuses. */
#include <glib.h>
#include <string.h>

#include "offers.h"
#include "sdp/sdp.h"
#include "sdp_test_answer.h"
#include "sdp_test_text.h"

#define MOAT_TEST_TWCC_URI                                                                         \
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

static void test_chromium(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    params.offer_srtpplus_chain = false;
    moat_sdp_negotiation n;
    char *answer = moat_test_answer_ok(moat_test_offer_chromium, &params, &n);

    g_assert_true(g_str_has_prefix(answer, "v=0\r\n"
                                           "o=- 1234567890123 2 IN IP4 127.0.0.1\r\n"
                                           "s=-\r\n"
                                           "t=0 0\r\n"
                                           "a=ice-lite\r\n"
                                           "a=group:BUNDLE 0 1 2\r\n"
                                           "a=msid-semantic: WMS moat\r\n"
                                           "m=audio 40000 UDP/TLS/RTP/SAVPF 111 0 8 110 126\r\n"));
    g_assert_cmpuint(n.n_media, ==, 3);
    g_assert_cmpstr(n.remote_ufrag, ==, "Vg7k");
    g_assert_cmpstr(n.remote_pwd, ==, "Lq2/fI1X0wVbN7sQ3sQk2a1Z");
    g_assert_cmpstr(n.remote_fingerprint_alg, ==, "sha-256");
    g_assert_true(g_str_has_prefix(n.remote_fingerprint, "A5:4D:CA:18"));
    g_assert_cmpint(n.local_setup, ==, MOAT_SDP_SETUP_PASSIVE);
    g_assert_false(n.srtpplus); /* the offer has no a=srtpplus */
    g_assert_cmpuint(moat_test_count(answer, "a=srtpplus"), ==, 0);

    const moat_sdp_negotiated_media *audio = &n.media[0];
    g_assert_true(audio->accepted);
    g_assert_cmpint(audio->kind, ==, MOAT_MEDIA_KIND_AUDIO);
    g_assert_cmpstr(audio->mid, ==, "0");
    g_assert_cmpint(audio->answer_direction, ==, MOAT_SDP_SENDRECV);
    g_assert_true(audio->peer_sends);
    g_assert_true(audio->peer_receives);
    /* red, G722 and CN are dropped; the offer's order and numbers are kept. */
    const uint8_t audio_pts[] = {111, 0, 8, 110, 126};
    g_assert_cmpmem(audio->payload_types, audio->n_payload_types, audio_pts, sizeof audio_pts);
    g_assert_cmpstr(audio->codec_names[0], ==, "opus");
    g_assert_cmpuint(audio->clock_rates[0], ==, 48000);
    g_assert_cmpstr(audio->codec_names[3], ==, "telephone-event");
    g_assert_cmpuint(audio->clock_rates[3], ==, 48000);
    g_assert_cmpuint(audio->clock_rates[4], ==, 8000);
    g_assert_cmpuint(audio->mid_extension_id, ==, 4);
    g_assert_cmpuint(audio->audio_level_extension_id, ==, 1);
    g_assert_cmpuint(audio->abs_send_time_extension_id, ==, 2);
    g_assert_cmpuint(audio->remote_ssrc, ==, 2411974397u);
    g_assert_cmpuint(audio->remote_rtx_ssrc, ==, 0);
    g_assert_cmpuint(audio->local_ssrc, !=, 0);

    const moat_sdp_negotiated_media *video = &n.media[1];
    g_assert_true(video->accepted);
    /* VP8, the preferred H264 (42e01f, packetization-mode=1) and VP9 profile 0. */
    const uint8_t video_pts[] = {96, 106, 98};
    g_assert_cmpmem(video->payload_types, video->n_payload_types, video_pts, sizeof video_pts);
    g_assert_cmpstr(video->codec_names[1], ==, "H264");
    g_assert_cmpstr(video->codec_names[2], ==, "VP9");
    g_assert_cmpuint(video->mid_extension_id, ==, 4);
    g_assert_cmpuint(video->abs_send_time_extension_id, ==, 2);
    g_assert_cmpuint(video->audio_level_extension_id, ==, 0);
    g_assert_cmpuint(video->remote_ssrc, ==, 3906417220u);
    g_assert_cmpuint(video->remote_rtx_ssrc, ==, 1419785283u);
    g_assert_cmpuint(video->local_ssrc, !=, 0);
    g_assert_cmpuint(video->local_ssrc, !=, audio->local_ssrc);

    const moat_sdp_negotiated_media *data = &n.media[2];
    g_assert_true(data->accepted);
    g_assert_cmpint(data->kind, ==, MOAT_MEDIA_KIND_APPLICATION);
    g_assert_true(n.has_data_channel);
    g_assert_cmpuint(n.remote_sctp_port, ==, 5000);
    g_assert_cmpuint(n.remote_max_message_size, ==, 262144);

    char *audio_text = moat_test_section(answer, 0);
    g_assert_nonnull(strstr(audio_text, "a=fmtp:111 minptime=10;useinbandfec=1\r\n"));
    g_assert_nonnull(strstr(audio_text, "a=rtcp-rsize\r\n"));
    g_assert_nonnull(strstr(audio_text, "a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level"));
    /* transport-cc, the only feedback opus is offered, is answered. */
    g_assert_nonnull(strstr(audio_text, "a=extmap:3 " MOAT_TEST_TWCC_URI "\r\n"));
    g_assert_cmpuint(moat_test_count(audio_text, "a=rtcp-fb"), ==, 1);
    g_assert_nonnull(strstr(audio_text, "a=rtcp-fb:111 transport-cc\r\n"));
    g_assert_null(strstr(audio_text, "rtx"));
    g_free(audio_text);

    char *video_text = moat_test_section(answer, 1);
    /* The codecs, then their RTX payload types (RFC 4588). */
    g_assert_true(
        g_str_has_prefix(video_text, "m=video 40000 UDP/TLS/RTP/SAVPF 96 106 98 97 107 99\r\n"));
    g_assert_nonnull(strstr(video_text, "a=rtcp-fb:96 goog-remb\r\n"
                                        "a=rtcp-fb:96 transport-cc\r\n"
                                        "a=rtcp-fb:96 ccm fir\r\n"
                                        "a=rtcp-fb:96 nack\r\n"
                                        "a=rtcp-fb:96 nack pli\r\n"));
    g_assert_nonnull(strstr(video_text, "a=fmtp:106 level-asymmetry-allowed=1;"
                                        "packetization-mode=1;profile-level-id=42e01f\r\n"));
    g_assert_nonnull(strstr(video_text, "a=fmtp:98 profile-id=0\r\n"));
    g_assert_nonnull(strstr(video_text, "a=extmap:3 " MOAT_TEST_TWCC_URI "\r\n"));
    g_assert_nonnull(strstr(video_text, "a=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\n"
                                        "a=rtpmap:107 rtx/90000\r\na=fmtp:107 apt=106\r\n"
                                        "a=rtpmap:99 rtx/90000\r\na=fmtp:99 apt=98\r\n"));
    g_assert_cmpuint(video->rtx_payload_types[0], ==, 97);
    g_assert_cmpuint(video->local_rtx_ssrc, !=, 0);
    g_assert_cmpuint(video->local_rtx_ssrc, !=, video->local_ssrc);
    char fid[64];
    g_snprintf(fid, sizeof fid, "a=ssrc-group:FID %u %u\r\n", video->local_ssrc,
               video->local_rtx_ssrc);
    g_assert_nonnull(strstr(video_text, fid));
    g_assert_null(strstr(video_text, "ulpfec"));
    g_assert_null(strstr(video_text, "red/"));
    g_assert_nonnull(strstr(video_text, "a=extmap:14 urn:ietf:params:rtp-hdrext:toffset\r\n"));
    g_assert_nonnull(strstr(video_text, "a=extmap:13 urn:3gpp:video-orientation\r\n"));
    /* Chromium sends and receives video: Moat may ask its jitter buffer for
     * a playout delay (session_playout.c). */
    g_assert_nonnull(strstr(
        video_text, "a=extmap:5 http://www.webrtc.org/experiments/rtp-hdrext/playout-delay\r\n"));
    g_assert_cmpuint(video->playout_delay_extension_id, ==, 5);
    g_assert_null(strstr(video_text, "rtp-stream-id"));
    g_assert_nonnull(strstr(video_text, "a=msid:moat video1\r\n"));
    g_free(video_text);

    char *data_text = moat_test_section(answer, 2);
    g_assert_true(g_str_has_prefix(data_text, "m=application 40000 UDP/DTLS/SCTP "
                                              "webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\n"));
    g_assert_nonnull(strstr(data_text, "a=mid:2\r\n"));
    g_assert_nonnull(strstr(data_text, "a=sctp-port:5000\r\na=max-message-size:262144\r\n"));
    g_assert_null(strstr(data_text, "a=rtcp-mux"));
    g_assert_null(strstr(data_text, "a=sendrecv"));
    g_free(data_text);

    g_assert_cmpuint(moat_test_count(answer, "a=candidate:"), ==, 6);
    g_assert_cmpuint(moat_test_count(answer, "a=end-of-candidates\r\n"), ==, 3);
    g_assert_cmpuint(moat_test_count(answer, "a=candidate:2 1 udp 2130706175 2001:db8::10 40000 "
                                             "typ host\r\n"),
                     ==, 3);
    g_assert_null(strstr(answer, "ice-options"));
    g_assert_null(strstr(answer, "\n\n"));
    g_free(answer);
}

/* Per m-line congestion control feedback: a Chromium publisher's offer
 * gets transport-cc (extension and rtcp-fb, on each m-line, with NACK and
 * REMB kept); so does a viewer's (recvonly: the gateway stamps
 * transport-wide sequence numbers on what it sends and estimates from the
 * viewer's feedback), with RTX and NACK on each video codec; a REMB-only
 * peer's gets REMB and no transport-cc. */
static void test_transport_cc(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    moat_sdp_negotiation n;
    char *publisher = moat_test_replace(moat_test_offer_chromium, "a=sendrecv", "a=sendonly");
    char *answer = moat_test_answer_ok(publisher, &params, &n);
    for (size_t i = 0; i < 2; i++) {
        char *text = moat_test_section(answer, i);
        g_assert_nonnull(strstr(text, "a=extmap:3 " MOAT_TEST_TWCC_URI "\r\n"));
        g_assert_cmpuint(n.media[i].transport_cc_extension_id, ==, 3);
        g_assert_cmpuint(n.media[i].rtcp_fb[0] & (1u << 4), !=, 0);
        g_free(text);
    }
    char *video = moat_test_section(answer, 1);
    g_assert_cmpuint(moat_test_count(video, " transport-cc\r\n"), ==, 3); /* 96 106 98 */
    g_assert_nonnull(strstr(video, "a=rtcp-fb:96 nack\r\n"));
    g_assert_nonnull(strstr(video, "a=rtcp-fb:96 goog-remb\r\n"));
    /* A publisher receives nothing from Moat: no playout delay to ask for. */
    g_assert_null(strstr(video, "playout-delay"));
    g_assert_cmpuint(n.media[1].playout_delay_extension_id, ==, 0);
    g_free(video);
    g_free(answer);
    g_free(publisher);

    char *viewer = moat_test_replace(moat_test_offer_chromium, "a=sendrecv", "a=recvonly");
    answer = moat_test_answer_ok(viewer, &params, &n);
    for (size_t i = 0; i < 2; i++) {
        char *text = moat_test_section(answer, i);
        g_assert_nonnull(strstr(text, "a=extmap:3 " MOAT_TEST_TWCC_URI "\r\n"));
        g_assert_cmpuint(n.media[i].transport_cc_extension_id, ==, 3);
        g_assert_cmpuint(n.media[i].rtcp_fb[0] & (1u << 4), !=, 0);
        g_free(text);
    }
    video = moat_test_section(answer, 1);
    g_assert_cmpuint(moat_test_count(video, " transport-cc\r\n"), ==, 3);
    g_assert_nonnull(strstr(video, "a=rtcp-fb:96 nack\r\n"));
    g_assert_nonnull(strstr(video, "a=fmtp:97 apt=96\r\n"));
    g_assert_cmpuint(n.media[1].rtx_payload_types[0], ==, 97);
    g_assert_cmpuint(n.media[1].playout_delay_extension_id, ==, 5);
    g_free(video);
    g_free(answer);
    g_free(viewer);

    char *no_twcc =
        moat_test_replace(moat_test_offer_chromium, " transport-cc\r\n", " x-unknown\r\n");
    char *remb_only = moat_test_drop_lines(no_twcc, "a=extmap:3 ");
    answer = moat_test_answer_ok(remb_only, &params, &n);
    g_assert_null(strstr(answer, "transport-cc"));
    g_assert_null(strstr(answer, MOAT_TEST_TWCC_URI));
    g_assert_nonnull(strstr(answer, "a=rtcp-fb:96 goog-remb\r\n"));
    g_assert_cmpuint(n.media[1].rtcp_fb[0] & (1u << 3), !=, 0);
    g_free(answer);
    g_free(remb_only);
    g_free(no_twcc);
}

/* Extensions Moat writes (transport-cc, playout-delay) at an id its
 * one-byte writer cannot put (15-255, RFC 8285 two-byte headers) are not
 * answered, rather than promised and never sent: the viewer falls back to
 * REMB. */
static void test_written_extensions_past_one_byte_ids(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    moat_sdp_negotiation n;
    char *viewer = moat_test_replace(moat_test_offer_chromium, "a=sendrecv", "a=recvonly");
    char *twcc = moat_test_replace(viewer, "a=extmap:3 " MOAT_TEST_TWCC_URI,
                                   "a=extmap:20 " MOAT_TEST_TWCC_URI);
    char *offer = moat_test_replace(
        twcc, "a=extmap:5 http://www.webrtc.org/experiments/rtp-hdrext/playout-delay",
        "a=extmap:16 http://www.webrtc.org/experiments/rtp-hdrext/playout-delay");
    g_assert_nonnull(strstr(offer, "a=extmap:20 "));
    g_assert_nonnull(strstr(offer, "a=extmap:16 "));
    char *answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_null(strstr(answer, MOAT_TEST_TWCC_URI));
    g_assert_null(strstr(answer, " transport-cc\r\n"));
    g_assert_null(strstr(answer, "playout-delay"));
    g_assert_nonnull(strstr(answer, "a=rtcp-fb:96 goog-remb\r\n"));
    for (size_t i = 0; i < 2; i++) {
        g_assert_cmpuint(n.media[i].transport_cc_extension_id, ==, 0);
        g_assert_cmpuint(n.media[i].playout_delay_extension_id, ==, 0);
    }
    g_free(answer);
    g_free(offer);
    g_free(twcc);
    g_free(viewer);
}

static void test_firefox(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    moat_sdp_negotiation n;
    char *answer = moat_test_answer_ok(moat_test_offer_firefox, &params, &n);
    g_assert_true(g_str_has_prefix(n.remote_fingerprint, "34:60:BE"));
    g_assert_cmpstr(n.remote_ufrag, ==, "8f3a1c2b");
    const uint8_t audio_pts[] = {109, 0, 8, 101};
    g_assert_cmpmem(n.media[0].payload_types, n.media[0].n_payload_types, audio_pts,
                    sizeof audio_pts);
    g_assert_cmpuint(n.media[0].mid_extension_id, ==, 3);
    g_assert_cmpuint(n.media[0].audio_level_extension_id, ==, 1);
    g_assert_cmpuint(n.media[0].remote_ssrc, ==, 3525816414u);
    /* VP9 without profile-id is profile 0; H264 97 lacks packetization-mode=1. */
    const uint8_t video_pts[] = {120, 121, 126};
    g_assert_cmpmem(n.media[1].payload_types, n.media[1].n_payload_types, video_pts,
                    sizeof video_pts);
    g_assert_cmpuint(n.media[1].remote_ssrc, ==, 2310431890u);
    g_assert_cmpuint(n.media[1].remote_rtx_ssrc, ==, 1542713372u);
    g_assert_cmpuint(n.media[1].mid_extension_id, ==, 3);
    g_assert_false(n.has_data_channel);
    g_assert_nonnull(strstr(answer, "a=rtpmap:109 opus/48000/2\r\n"
                                    "a=fmtp:109 minptime=10;useinbandfec=1\r\n"));
    g_assert_nonnull(strstr(answer, "a=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-15\r\n"));
    g_assert_nonnull(strstr(answer, "a=extmap:3 urn:ietf:params:rtp-hdrext:sdes:mid\r\n"));
    g_assert_null(strstr(answer, "csrc-audio-level"));
    g_assert_cmpuint(moat_test_count(answer, "a=rtcp-rsize"), ==, 1); /* video only */
    g_free(answer);
}

static void test_aiortc_exact(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    moat_sdp_negotiation n;
    char *answer = moat_test_answer_ok(moat_test_offer_aiortc, &params, &n);
    char *audio = moat_test_section(answer, 0);
    char *expected =
        g_strdup_printf("m=audio 40000 UDP/TLS/RTP/SAVPF 96 0 8\r\n"
                        "c=IN IP4 0.0.0.0\r\n"
                        "a=ice-ufrag:moat\r\n"
                        "a=ice-pwd:" LOCAL_PWD "\r\n"
                        "a=fingerprint:sha-256 " LOCAL_FP "\r\n"
                        "a=setup:passive\r\n"
                        "a=mid:0\r\n"
                        "a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid\r\n"
                        "a=extmap:2 urn:ietf:params:rtp-hdrext:ssrc-audio-level\r\n"
                        "a=sendrecv\r\n"
                        "a=msid:moat audio0\r\n"
                        "a=rtcp-mux\r\n"
                        "a=rtpmap:96 opus/48000/2\r\n"
                        "a=fmtp:96 minptime=10;useinbandfec=1\r\n"
                        "a=rtpmap:0 PCMU/8000\r\n"
                        "a=rtpmap:8 PCMA/8000\r\n"
                        "a=ssrc:%u cname:moat-test\r\n"
                        "a=ssrc:%u msid:moat audio0\r\n"
                        "a=candidate:1 1 udp 2130706431 203.0.113.10 40000 typ host\r\n"
                        "a=candidate:2 1 udp 2130706175 2001:db8::10 40000 typ host\r\n"
                        "a=end-of-candidates\r\n",
                        n.media[0].local_ssrc, n.media[0].local_ssrc);
    g_assert_cmpstr(audio, ==, expected);
    /* aiortc prefers 42001f but the gateway prefers 42e01f: one H264 is kept. */
    const uint8_t video_pts[] = {97, 101};
    g_assert_cmpmem(n.media[1].payload_types, n.media[1].n_payload_types, video_pts,
                    sizeof video_pts);
    g_assert_cmpuint(n.media[1].remote_ssrc, ==, 716394107u);
    g_assert_cmpuint(n.media[1].remote_rtx_ssrc, ==, 3301249470u);
    g_free(expected);
    g_free(audio);
    g_free(answer);
}

static void test_rejections(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    moat_sdp_negotiation n;

    /* A video m-line with only codecs the gateway lacks is answered with
     * port 0 and only its mid, and leaves the BUNDLE group. */
    char *offer =
        moat_test_replace(moat_test_offer_aiortc, "SAVPF 97 98 99 100 101 102", "SAVPF 98 100 102");
    char *answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_true(n.media[0].accepted);
    g_assert_false(n.media[1].accepted);
    g_assert_cmpuint(n.media[1].n_payload_types, ==, 0);
    g_assert_cmpuint(n.media[1].local_ssrc, ==, 0);
    g_assert_nonnull(strstr(answer, "a=group:BUNDLE 0\r\n"));
    char *video = moat_test_section(answer, 1);
    g_assert_cmpstr(video, ==, "m=video 0 UDP/TLS/RTP/SAVPF 98\r\nc=IN IP4 0.0.0.0\r\na=mid:1\r\n");
    g_free(video);
    g_free(answer);
    g_free(offer);

    /* The offerer's own port 0, an m-line outside the BUNDLE group, an
     * unknown kind and the pre-RFC 8841 data channel form. */
    offer = g_strconcat(moat_test_offer_chromium,
                        "m=video 0 UDP/TLS/RTP/SAVPF 96\r\na=mid:off\r\na=rtcp-mux\r\n"
                        "a=rtpmap:96 VP8/90000\r\n",
                        "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:out\r\na=rtcp-mux\r\n",
                        REMOTE_TRANSPORT, "m=text 9 RTP/AVP 98\r\na=mid:t\r\n",
                        "m=application 9 DTLS/SCTP 5000\r\na=sctpmap:5000 webrtc-datachannel "
                        "1024\r\n",
                        REMOTE_TRANSPORT, NULL);
    answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_cmpuint(n.n_media, ==, 7);
    for (size_t i = 3; i < 7; i++)
        g_assert_false(n.media[i].accepted);
    g_assert_nonnull(strstr(answer, "m=video 0 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\n"
                                    "a=mid:off\r\n"));
    g_assert_nonnull(strstr(answer, "m=audio 0 UDP/TLS/RTP/SAVPF 0\r\n"));
    g_assert_nonnull(strstr(answer, "m=text 0 RTP/AVP 98\r\n"));
    g_assert_true(g_str_has_suffix(answer, "m=application 0 DTLS/SCTP 5000\r\n"
                                           "c=IN IP4 0.0.0.0\r\n"));
    g_assert_nonnull(strstr(answer, "a=group:BUNDLE 0 1 2\r\n"));
    g_free(answer);
    g_free(offer);

    /* The old data channel form (aiortc, older SDKs) is answered in kind,
     * the SCTP port taken from the format. */
    offer = moat_test_replace(moat_test_offer_chromium,
                              "m=application 9 UDP/DTLS/SCTP webrtc-datachannel",
                              "m=application 9 DTLS/SCTP 5001");
    answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_true(n.has_data_channel);
    g_assert_true(n.media[2].accepted);
    g_assert_cmpuint(n.remote_sctp_port, ==, 5001);
    g_assert_nonnull(strstr(answer, " DTLS/SCTP 5000\r\n"));
    g_assert_nonnull(strstr(answer, "a=sctpmap:5000 webrtc-datachannel 1024\r\n"));
    g_assert_null(strstr(answer, "a=sctp-port"));
    g_free(answer);
    g_free(offer);

    /* Not secure RTP: rejected, not answered with another profile. */
    offer = moat_test_replace(moat_test_offer_aiortc, "m=video 52345 UDP/TLS/RTP/SAVPF",
                              "m=video 52345 RTP/AVP");
    answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_false(n.media[1].accepted);
    g_assert_nonnull(strstr(answer, "m=video 0 RTP/AVP 97\r\n"));
    g_free(answer);
    g_free(offer);
}

static void test_errors(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    moat_test_answer_fails(moat_test_drop_lines(moat_test_offer_aiortc, "a=rtcp-mux"), &params,
                           "m-line 1 (mid 0): rtcp-mux required");
    /* Only AV1/H265 video and G722 audio: nothing to accept. */
    char *offer = moat_test_replace(moat_test_offer_aiortc, "opus/48000/2", "G722/8000");
    char *offer2 = moat_test_replace(offer, "VP8/90000", "AV1/90000");
    char *offer3 = moat_test_replace(offer2, "packetization-mode=1", "packetization-mode=0");
    moat_test_answer_fails(moat_test_replace(offer3, "PCM", "XCM"), &params, "no supported codec");
    g_free(offer);
    g_free(offer2);
    g_free(offer3);
    /* telephone-event alone carries no media. */
    moat_test_answer_fails(g_strconcat("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
                                       "m=audio 9 UDP/TLS/RTP/SAVPF 101\r\n" REMOTE_TRANSPORT
                                       "a=rtcp-mux\r\n"
                                       "a=rtpmap:101 telephone-event/8000\r\n",
                                       NULL),
                           &params, "no supported codec");
    moat_test_answer_fails(
        moat_test_replace(moat_test_offer_aiortc, "s=-\r\n", "s=-\r\na=ice-lite\r\n"), &params,
        "ice-lite");

    moat_sdp_answer_params p = moat_test_answer_params();
    p.fingerprint_sha256 = "0f:1e";
    moat_test_answer_fails(g_strdup(moat_test_offer_aiortc), &p, "fingerprint");
    p = moat_test_answer_params();
    char lowercase[] = LOCAL_FP;
    lowercase[1] = 'f';
    p.fingerprint_sha256 = lowercase;
    moat_test_answer_fails(g_strdup(moat_test_offer_aiortc), &p, "fingerprint");
    p = moat_test_answer_params();
    p.ice_ufrag = "a b";
    moat_test_answer_fails(g_strdup(moat_test_offer_aiortc), &p, "ice-ufrag");
    p = moat_test_answer_params();
    p.ice_pwd = "short";
    moat_test_answer_fails(g_strdup(moat_test_offer_aiortc), &p, "ice-pwd");
    p = moat_test_answer_params();
    p.setup = MOAT_SDP_SETUP_ACTPASS;
    moat_test_answer_fails(g_strdup(moat_test_offer_aiortc), &p, "setup");
    p = moat_test_answer_params();
    p.cname = "two words";
    moat_test_answer_fails(g_strdup(moat_test_offer_aiortc), &p, "cname");
    p = moat_test_answer_params();
    p.max_message_size = 65536;
    moat_test_answer_fails(g_strdup(moat_test_offer_aiortc), &p, "max_message_size");
    p = moat_test_answer_params();
    moat_sdp_candidate broken = moat_test_local_candidates[0];
    g_strlcpy(broken.address, "1.2.3.4\r\na=x", sizeof broken.address);
    p.candidates = &broken;
    p.n_candidates = 1;
    moat_test_answer_fails(g_strdup(moat_test_offer_aiortc), &p, "candidate 0");

    moat_sdp *sdp = moat_test_parse(moat_test_offer_aiortc);
    moat_sdp_negotiation n;
    char *text = NULL, error[64];
    g_assert_cmpint(moat_sdp_answer_create(NULL, &params, &n, &text, error, sizeof error), ==, -1);
    g_assert_cmpint(moat_sdp_answer_create(sdp, NULL, &n, &text, error, sizeof error), ==, -1);
    g_assert_cmpint(moat_sdp_answer_create(sdp, &params, &n, &text, NULL, 0), ==, 0);
    g_free(text);
    moat_sdp_free(sdp);
}

/* Without BUNDLE each m-line would need its own transport: only the first
 * acceptable one is taken. */
static void test_no_bundle(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    params.n_candidates = 0;
    moat_sdp_negotiation n;
    char *offer = moat_test_drop_lines(moat_test_offer_aiortc, "a=group:BUNDLE");
    char *answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_true(n.media[0].accepted);
    g_assert_false(n.media[1].accepted);
    g_assert_null(strstr(answer, "a=group"));
    /* Without candidates the port is the JSEP placeholder 9. */
    g_assert_nonnull(strstr(answer, "m=audio 9 UDP/TLS/RTP/SAVPF 96 0 8\r\n"));
    g_assert_null(strstr(answer, "a=candidate"));
    g_assert_cmpuint(moat_test_count(answer, "a=end-of-candidates"), ==, 1);
    g_free(answer);
    g_free(offer);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sdp/answer/chromium", test_chromium);
    g_test_add_func("/sdp/answer/firefox", test_firefox);
    g_test_add_func("/sdp/answer/transport-cc", test_transport_cc);
    g_test_add_func("/sdp/answer/written-extension-ids", test_written_extensions_past_one_byte_ids);
    g_test_add_func("/sdp/answer/aiortc-exact", test_aiortc_exact);
    g_test_add_func("/sdp/answer/rejections", test_rejections);
    g_test_add_func("/sdp/answer/errors", test_errors);
    g_test_add_func("/sdp/answer/no-bundle", test_no_bundle);
    return g_test_run();
}

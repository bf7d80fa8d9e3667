/* libFuzzer target: the call layer's SDP parser, its WebRTC classification
 * and rewriter (call/call_sdp.h) on hostile SIP bodies. The rewrite runs
 * with codec stripping and a transport change so every line path is
 * taken. The same body is also the other party's SDP of a renegotiation
 * (call/call_webrtc_describe.h): Moat's description for a WebRTC party,
 * redescribed with the body's directions, must keep the party's ICE
 * credentials, fingerprint and m-lines and parse again. */
#include "call/call_sdp.h"
#include "call/call_webrtc_describe.h"

#include <string.h>

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

static const char DESCRIBED[] =
    "v=0\r\no=- 42 2 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0 1\r\n"
    "a=ice-lite\r\na=ice-ufrag:moatufrg\r\na=ice-pwd:moatpasswordmoatpassword\r\n"
    "a=fingerprint:sha-256 AB:CD:EF\r\n"
    "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 127.0.0.1\r\na=mid:0\r\na=sendrecv\r\n"
    "a=setup:passive\r\na=rtpmap:111 opus/48000/2\r\na=ssrc:1 cname:moat\r\n"
    "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\nc=IN IP4 127.0.0.1\r\na=mid:1\r\n"
    "a=setup:passive\r\na=rtpmap:0 PCMU/8000\r\n";

static void redescribe(const char *text, size_t size)
{
    char party[MOAT_CALL_WEBRTC_IDENTITY_SIZE], before[MOAT_CALL_WEBRTC_IDENTITY_SIZE],
        after[MOAT_CALL_WEBRTC_IDENTITY_SIZE];
    (void)moat_call_webrtc_identity(text, size, party);
    char *out = moat_call_webrtc_redescribe(DESCRIBED, text, size);
    if (!out)
        __builtin_trap(); /* DESCRIBED has its o= line */
    moat_call_sdp a, b;
    char error[160];
    if (!moat_call_webrtc_identity(DESCRIBED, sizeof DESCRIBED - 1, before) ||
        !moat_call_webrtc_identity(out, strlen(out), after) || strcmp(before, after) != 0 ||
        moat_call_sdp_parse(DESCRIBED, sizeof DESCRIBED - 1, &a, error, sizeof error) != 0 ||
        moat_call_sdp_parse(out, strlen(out), &b, error, sizeof error) != 0 ||
        a.n_media != b.n_media)
        __builtin_trap();
    g_free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redescribe((const char *)data, size);
    moat_call_sdp sdp;
    char error[160];
    const char *text = (const char *)data;
    if (moat_call_sdp_parse(text, size, &sdp, error, sizeof error) != 0)
        return 0;
    /* A WebRTC party that passes the check has every credential. */
    if (moat_call_sdp_check_webrtc(&sdp, error, sizeof error) == 0) {
        for (size_t i = 0; i < sdp.n_media; i++)
            if (sdp.media[i].port &&
                !(sdp.media[i].ice_ufrag && sdp.media[i].ice_pwd && sdp.media[i].fingerprint) &&
                moat_call_sdp_is_webrtc(&sdp))
                __builtin_trap();
    }
    static const char *const strip[] = {"PCMU", "telephone-event"};
    moat_call_sdp_rewrite how = {.address = "192.0.2.1",
                                 .transport_protocol = "RTP/AVP",
                                 .replace_origin = true,
                                 .strip = strip,
                                 .n_strip = 2};
    for (size_t i = 0; i < MOAT_CALL_SDP_MAX_MEDIA; i++) {
        how.ports[i] = i < sdp.n_media && sdp.media[i].port ? (uint16_t)(30000 + 2 * i) : 0;
        how.rtcp_mux[i] = i & 1;
    }
    GString *out = g_string_new(NULL);
    if (moat_call_sdp_rewrite_text(text, size, &how, out, error, sizeof error) == 0) {
        moat_call_sdp again;
        /* What Moat writes must parse again. */
        if (moat_call_sdp_parse(out->str, out->len, &again, error, sizeof error) != 0 ||
            again.n_media != sdp.n_media)
            __builtin_trap();
    }
    g_string_free(out, TRUE);
    return 0;
}

/* libFuzzer target: the call layer's SDP parser, its WebRTC classification
 * and rewriter (call/call_sdp.h) on hostile SIP bodies. The rewrite runs
 * with codec stripping and a transport change so every line path is
 * taken. */
#include "call/call_sdp.h"

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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

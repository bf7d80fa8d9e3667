/* libFuzzer target: Moat's own WebRTC offer to a call party
 * (call/call_webrtc_offer_sdp.h) from a hostile phone SDP: the offer it
 * answers to itself must parse, and its answer (Moat's offer) must be
 * written, whenever the phone's SDP was accepted. Compiled with the SDP
 * sources alone: GStreamer is replaced by the list of codecs a full
 * installation supports. */
#include "call/call_webrtc_offer_sdp.h"
#include "sdp/sdp.h"

#include <glib.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

bool moat_transcoder_supports(const char *name)
{
    static const char *const supported[] = {"opus", "PCMU", "PCMA", "G722"};
    for (size_t i = 0; name && i < G_N_ELEMENTS(supported); i++) {
        if (g_ascii_strcasecmp(name, supported[i]) == 0)
            return true;
    }
    return false;
}

#define FINGERPRINT                                                                                \
    "96:9C:61:6F:9B:31:80:AD:E5:9E:BA:46:9E:68:A5:DA:02:17:7C:02:81:D9:DA:01:42:F4:94:C4:7D:E3:"   \
    "2B:45"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const first[] = {"opus"};
    char error[160];
    char *offer_text = moat_call_webrtc_self_offer((const char *)data, size, first, 1, FINGERPRINT,
                                                   error, sizeof error);
    if (!offer_text)
        return 0;
    moat_sdp *offer = moat_sdp_parse(offer_text, strlen(offer_text), error, sizeof error);
    if (!offer) { /* Moat's own text must read back */
        fprintf(stderr, "%s\n%s\n", error, offer_text);
        __builtin_trap();
    }
    moat_sdp_candidate candidate = {.foundation = "1",
                                    .component = 1,
                                    .transport = "udp",
                                    .priority = 2130706431,
                                    .address = "192.0.2.1",
                                    .port = 40000,
                                    .type = "host"};
    moat_sdp_answer_params params = {
        .ice_ufrag = "abcdefgh",
        .ice_pwd = "abcdefghijklmnopqrstuvwx",
        .fingerprint_sha256 = FINGERPRINT,
        .setup = MOAT_SDP_SETUP_PASSIVE,
        .candidates = &candidate,
        .n_candidates = 1,
        .session_id = 1,
        .cname = "moat",
    };
    moat_sdp_negotiation *negotiation = g_new0(moat_sdp_negotiation, 1);
    char *answer = NULL;
    moat_sdp_answer_create(offer, &params, negotiation, &answer, error, sizeof error);
    g_free(answer);
    g_free(negotiation);
    moat_sdp_free(offer);
    g_free(offer_text);
    return 0;
}

/* libFuzzer target: Moat's own WebRTC offer to a call party
 * (call/call_webrtc_offer_sdp.h) from a hostile phone SDP: the offer it
 * answers to itself must parse, and its answer (Moat's offer) must be
 * written, whenever the phone's SDP was accepted. Compiled with the SDP
 * sources alone: GStreamer is replaced by the list of codecs a full
 * installation supports. */
#include "../../unit/call/call_webrtc_answer_fixture.h"
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

#define FINGERPRINT CALL_TEST_FINGERPRINT

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
    moat_sdp_negotiation *negotiation = NULL;
    char *answer = NULL;
    call_test_answer_self_offer(offer, "192.0.2.1", &negotiation, &answer, error, sizeof error);
    g_free(answer);
    g_free(negotiation);
    moat_sdp_free(offer);
    g_free(offer_text);
    return 0;
}

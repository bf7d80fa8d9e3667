/* Owns the SDP Moat answers to itself to write its own WebRTC offer to a
 * call party (call_webrtc_offer_sdp.h). */
#include "call/call_webrtc_offer_sdp.h"

#include "call/call_sdp.h"
#include "transcode/transcode_sdp.h"

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The codec-transcode names (`first`) come first: the party sends the
 * first codec it shares with the offer. */
static bool wanted_first(const char *const *first, size_t n_first, const char *name)
{
    for (size_t i = 0; i < n_first; i++)
        if (g_ascii_strcasecmp(first[i], name) == 0)
            return true;
    return false;
}

/* A name the SDP parser reads back (the phone's may be anything). */
static bool plain_name(const moat_transcode_sdp_codec *codec)
{
    if (!codec->name[0] || codec->clock_rate == 0)
        return false;
    for (const char *c = codec->name; *c; c++)
        if (!g_ascii_isalnum(*c) && *c != '-' && *c != '_' && *c != '.')
            return false;
    return true;
}

static void append_codec(GString *out, const moat_transcode_sdp_codec *codec)
{
    g_string_append_printf(out, "a=rtpmap:%u %s/%u", codec->payload_type, codec->name,
                           codec->clock_rate);
    if (codec->channels > 1)
        g_string_append_printf(out, "/%u", codec->channels);
    g_string_append(out, "\r\n");
    if (g_ascii_strcasecmp(codec->name, "opus") == 0)
        g_string_append_printf(out, "a=fmtp:%u minptime=10;useinbandfec=1\r\n",
                               codec->payload_type);
}

/* One audio m-line of the offer Moat answers to itself (its answer is
 * Moat's offer): the phone's codecs plus the transcoded ones. */
static int append_media(GString *out, const char *codecs_sdp, size_t index,
                        const char *const *first, size_t n_first, char *error, size_t error_size)
{
    moat_transcode_sdp_codecs codecs;
    if (moat_transcode_sdp_codecs_of(codecs_sdp, strlen(codecs_sdp), index, &codecs, error,
                                     error_size) != 0)
        return -1;
    const moat_transcode_sdp_codec *order[MOAT_TRANSCODE_SDP_MAX_CODECS];
    size_t n = 0;
    bool taken[256] = {false}; /* a phone may repeat a payload type */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < codecs.n_codecs; i++) {
            const moat_transcode_sdp_codec *codec = &codecs.codecs[i];
            if (!plain_name(codec) || taken[codec->payload_type] ||
                wanted_first(first, n_first, codec->name) != (pass == 0))
                continue;
            taken[codec->payload_type] = true;
            order[n++] = codec;
        }
    }
    if (n == 0) {
        snprintf(error, error_size, "m-line %zu: no codec to offer", index);
        return -1;
    }
    g_string_append(out, "m=audio 9 UDP/TLS/RTP/SAVPF");
    for (size_t i = 0; i < n; i++)
        g_string_append_printf(out, " %u", order[i]->payload_type);
    g_string_append_printf(out,
                           "\r\nc=IN IP4 0.0.0.0\r\na=mid:%zu\r\na=sendrecv\r\n"
                           "a=rtcp-mux\r\na=setup:actpass\r\n",
                           index);
    for (size_t i = 0; i < n; i++)
        append_codec(out, order[i]);
    return 0;
}

char *moat_call_webrtc_self_offer(const char *text, size_t length, const char *const *first,
                                  size_t n_first, const char *fingerprint, char *error,
                                  size_t error_size)
{
    moat_call_sdp sdp;
    if (moat_call_sdp_parse(text, length, &sdp, error, error_size) != 0)
        return NULL;
    for (size_t i = 0; i < sdp.n_media; i++) {
        if (strcmp(sdp.media[i].kind, "audio") != 0 || sdp.media[i].port == 0) {
            snprintf(error, error_size, "Moat offers WebRTC audio only (m-line %zu)", i);
            return NULL;
        }
    }
    GString *codecs_sdp = g_string_new(NULL);
    if (moat_transcode_sdp_add_codecs(text, length, first, n_first, codecs_sdp, error,
                                      error_size) != 0) {
        g_string_free(codecs_sdp, TRUE);
        return NULL;
    }
    GString *out = g_string_new("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
                                "a=group:BUNDLE");
    for (size_t i = 0; i < sdp.n_media; i++)
        g_string_append_printf(out, " %zu", i);
    g_string_append_printf(out,
                           "\r\na=ice-ufrag:selfoffr\r\na=ice-pwd:selfofferplaceholder00\r\n"
                           "a=fingerprint:sha-256 %s\r\n",
                           fingerprint);
    for (size_t i = 0; i < sdp.n_media; i++) {
        if (append_media(out, codecs_sdp->str, i, first, n_first, error, error_size) != 0) {
            g_string_free(codecs_sdp, TRUE);
            g_string_free(out, TRUE);
            return NULL;
        }
    }
    g_string_free(codecs_sdp, TRUE);
    return g_string_free(out, FALSE);
}

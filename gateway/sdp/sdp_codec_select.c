/* Chooses the offered payload types the gateway accepts on an RTP m-line
 * (best H.264 profile, opus fmtp, telephone-event only beside a media codec)
 * and which RTCP feedback types the answer echoes. */
#include "sdp_codec_select.h"

#include <string.h>

#include <glib.h>

#define OPUS_FMTP "minptime=10;useinbandfec=1"

/* Looks `key` up in an fmtp "k=v;k=v" list (spaces allowed around ';').
 * Copies its value into buf; false when absent or too long. */
static bool fmtp_value(const char *fmtp, const char *key, char *buf, size_t size)
{
    size_t key_len = strlen(key);
    const char *p = fmtp;
    while (*p != '\0') {
        while (*p == ' ' || *p == ';')
            p++;
        const char *end = strchr(p, ';');
        size_t item_len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (item_len > key_len && p[key_len] == '=' && g_ascii_strncasecmp(p, key, key_len) == 0) {
            size_t value_len = item_len - key_len - 1;
            while (value_len > 0 && p[key_len + 1 + value_len - 1] == ' ')
                value_len--;
            if (value_len >= size)
                return false;
            memcpy(buf, p + key_len + 1, value_len);
            buf[value_len] = '\0';
            return true;
        }
        p += item_len;
    }
    return false;
}

static bool fmtp_is(const char *fmtp, const char *key, const char *expected)
{
    char value[32];
    return fmtp_value(fmtp, key, value, sizeof value) && g_ascii_strcasecmp(value, expected) == 0;
}

/* Lower is better; -1 for an H264 the gateway cannot take (only
 * non-interleaved mode is packetized and depacketized). */
static int h264_rank(const moat_sdp_codec *codec)
{
    if (!fmtp_is(codec->fmtp, "packetization-mode", "1"))
        return -1;
    if (fmtp_is(codec->fmtp, "profile-level-id", "42e01f"))
        return 0;
    if (fmtp_is(codec->fmtp, "profile-level-id", "42001f"))
        return 1;
    return 2;
}

static const moat_sdp_codec *best_h264(const moat_sdp_media *m)
{
    const moat_sdp_codec *best = NULL;
    int best_rank = 3;
    for (size_t i = 0; i < m->n_codecs; i++) {
        const moat_sdp_codec *c = &m->codecs[i];
        if (g_ascii_strcasecmp(c->name, "H264") != 0 || c->clock_rate != 90000)
            continue;
        int rank = h264_rank(c);
        if (rank >= 0 && rank < best_rank) {
            best = c;
            best_rank = rank;
        }
    }
    return best;
}

/* Fills the choice for codec c, or returns false when the gateway does not
 * take it on this kind of m-line. */
static bool classify(const moat_sdp_media *m, const moat_sdp_codec *c, const moat_sdp_codec *h264,
                     moat_sdp_codec_choice *choice)
{
    memset(choice, 0, sizeof *choice);
    choice->offered = c;
    choice->clock_rate = c->clock_rate;
    choice->fmtp = c->fmtp;
    if (m->kind == MOAT_MEDIA_KIND_AUDIO) {
        if (g_ascii_strcasecmp(c->name, "opus") == 0 && c->clock_rate == 48000 &&
            c->channels == 2) {
            choice->name = "opus";
            choice->channels = 2;
            choice->fmtp = OPUS_FMTP;
        } else if (g_ascii_strcasecmp(c->name, "PCMU") == 0 && c->clock_rate == 8000 &&
                   c->channels <= 1) {
            choice->name = "PCMU";
        } else if (g_ascii_strcasecmp(c->name, "PCMA") == 0 && c->clock_rate == 8000 &&
                   c->channels <= 1) {
            choice->name = "PCMA";
        } else if (g_ascii_strcasecmp(c->name, "telephone-event") == 0 &&
                   (c->clock_rate == 8000 || c->clock_rate == 48000) && c->channels <= 1) {
            choice->name = "telephone-event";
            choice->telephone_event = true;
        }
    } else if (m->kind == MOAT_MEDIA_KIND_VIDEO && c->clock_rate == 90000) {
        if (g_ascii_strcasecmp(c->name, "VP8") == 0) {
            choice->name = "VP8";
        } else if (g_ascii_strcasecmp(c->name, "VP9") == 0) {
            char profile[8];
            /* RFC 9628: an absent profile-id means profile 0. */
            if (!fmtp_value(c->fmtp, "profile-id", profile, sizeof profile) ||
                strcmp(profile, "0") == 0)
                choice->name = "VP9";
        } else if (c == h264) {
            choice->name = "H264";
        }
    }
    return choice->name != NULL;
}

static bool already_chosen(const moat_sdp_codec_choice *out, size_t n,
                           const moat_sdp_codec_choice *candidate)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(out[i].name, candidate->name) == 0 && out[i].clock_rate == candidate->clock_rate)
            return true;
    return false;
}

size_t moat_sdp_codec_select(const moat_sdp_media *m, moat_sdp_codec_choice *out, size_t max)
{
    const moat_sdp_codec *h264 = m->kind == MOAT_MEDIA_KIND_VIDEO ? best_h264(m) : NULL;
    size_t n = 0;
    bool has_media_codec = false;
    for (size_t i = 0; i < m->n_codecs && n < max; i++) {
        moat_sdp_codec_choice choice;
        /* One payload type per codec: the gateway relays without
         * transcoding, so a second VP9 or opus PT would only add ambiguity. */
        if (!classify(m, &m->codecs[i], h264, &choice) || already_chosen(out, n, &choice))
            continue;
        has_media_codec = has_media_codec || !choice.telephone_event;
        out[n++] = choice;
    }
    return has_media_codec ? n : 0;
}

size_t moat_sdp_codec_filter(moat_sdp_codec_choice *choices, size_t n, size_t media_index,
                             moat_media_kind kind,
                             bool (*accept)(void *user, size_t media_index, moat_media_kind kind,
                                            const char *name, uint32_t clock_rate),
                             void *user)
{
    size_t kept = 0;
    bool has_media_codec = false;
    for (size_t i = 0; i < n; i++) {
        bool media = !choices[i].telephone_event;
        if (media && !accept(user, media_index, kind, choices[i].name, choices[i].clock_rate))
            continue;
        has_media_codec = has_media_codec || media;
        choices[kept++] = choices[i];
    }
    return has_media_codec ? kept : 0;
}

bool moat_sdp_rtcp_fb_supported(const char *feedback)
{
    return strcmp(feedback, "nack") == 0 || strcmp(feedback, "nack pli") == 0 ||
           strcmp(feedback, "ccm fir") == 0 || strcmp(feedback, "goog-remb") == 0 ||
           strcmp(feedback, "transport-cc") == 0;
}

/* The offer a session POSTs: one bundled sendrecv m-line for the chosen
 * media, our host candidate and the SRTP+ scheme asked for. */
#include "session_parts.h"
#include "target_policy.h"

#include "ice/ice_candidates.h"
#include "sdp/sdp_offer.h"

#include <arpa/inet.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

static const moat_sdp_offer_codec pcmu = {.pt = 0, .name = "PCMU", .clock_rate = 8000};
const moat_sdp_offer_codec session_offer_opus = {.pt = 111,
                                                 .name = "opus",
                                                 .clock_rate = 48000,
                                                 .channels = 2,
                                                 .fmtp = "minptime=10;useinbandfec=1"};
static const moat_sdp_offer_codec vp8 = {
    .pt = 96,
    .name = "VP8",
    .clock_rate = 90000,
    .rtcp_fb = {"nack", "nack pli", "ccm fir", "goog-remb"},
};

size_t session_offer_host_candidate(const flood_session *s, moat_sdp_candidate *c)
{
    memset(c, 0, sizeof *c);
    if (IN6_IS_ADDR_UNSPECIFIED(&s->local.sin6_addr) || s->local.sin6_port == 0)
        return 0;
    g_strlcpy(c->foundation, "1", sizeof c->foundation);
    c->component = 1;
    g_strlcpy(c->transport, "udp", sizeof c->transport);
    c->priority = moat_ice_host_priority(65535, 1);
    target_address_text((const struct sockaddr *)&s->local, c->address, sizeof c->address);
    c->port = ntohs(s->local.sin6_port);
    g_strlcpy(c->type, "host", sizeof c->type);
    return 1;
}

char *session_offer_create(const flood_session *s, const moat_sdp_offer_media *media,
                           size_t n_media, const moat_sdp_srtpplus *srtpplus, size_t n_srtpplus,
                           char *error, size_t error_size)
{
    moat_sdp_candidate candidate;
    size_t n_candidates = session_offer_host_candidate(s, &candidate);
    moat_sdp_offer_params params = {
        .session_id = ((uint64_t)s->ssrc << 16) | s->index,
        .ice_ufrag = s->local_ufrag,
        .ice_pwd = s->local_pwd,
        .fingerprint_sha256 = s->env->fingerprint,
        .setup = MOAT_SDP_SETUP_ACTPASS,
        .cname = "moat-flood",
        .candidates = &candidate,
        .n_candidates = n_candidates,
        .srtpplus = srtpplus,
        .n_srtpplus = n_srtpplus,
        .media = media,
        .n_media = n_media,
    };
    return moat_sdp_offer_create(&params, error, error_size);
}

char *session_offer_build(const flood_session *s, char *error, size_t error_size)
{
    const flood_options *o = s->env->options;
    moat_sdp_offer_media media = {
        .kind = o->media == FLOOD_MEDIA_VIDEO ? MOAT_MEDIA_KIND_VIDEO : MOAT_MEDIA_KIND_AUDIO,
        .mid = "0",
        .direction = MOAT_SDP_SENDRECV,
        .codecs = o->media == FLOOD_MEDIA_G711   ? &pcmu
                  : o->media == FLOOD_MEDIA_OPUS ? &session_offer_opus
                                                 : &vp8,
        .n_codecs = 1,
        .ssrc = s->ssrc,
    };
    moat_sdp_srtpplus scheme = {.depth = 0, .copies = 0};
    if (o->srtpplus == FLOOD_SRTPPLUS_CHAIN) {
        g_strlcpy(scheme.scheme, "chain", sizeof scheme.scheme);
        scheme.depth = SRTPPLUS_CHAIN_DEFAULT_DEPTH;
        scheme.copies = SRTPPLUS_CHAIN_DEFAULT_COPIES;
    } else {
        g_strlcpy(scheme.scheme, "prn", sizeof scheme.scheme);
    }
    return session_offer_create(s, &media, 1, &scheme, o->srtpplus == FLOOD_SRTPPLUS_NONE ? 0 : 1,
                                error, error_size);
}

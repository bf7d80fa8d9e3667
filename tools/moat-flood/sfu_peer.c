/* The fan-out roles of a session: its offer or answer, the publisher's
 * paced sending and the subscriber's counting, and the ICE-lite responder
 * of an answering subscriber. */
#include "sfu_peer.h"
#include "session_parts.h"
#include "target_policy.h"
#include "whip_session.h"

#include "ice/ice_candidates.h"
#include "rtp/rtp_packet.h"
#include "sdp/sdp.h"
#include "sdp/sdp_offer.h"

#include <arpa/inet.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const moat_sdp_offer_codec vp8 = {
    .pt = 96,
    .name = "VP8",
    .clock_rate = 90000,
    .rtcp_fb = {"nack", "nack pli", "ccm fir"},
};

sfu_peer *sfu_peer_new(sfu_role role)
{
    sfu_peer *p = g_new0(sfu_peer, 1);
    p->role = role;
    /* An offering peer is a full controlling agent: it also answers the
     * checks of a full peer (Janus), which needs them to select a pair. */
    p->checker = moat_ice_checker_new();
    if (p->checker != NULL)
        moat_ice_checker_set_controlling(p->checker, true);
    return p;
}

void sfu_peer_release(sfu_peer *p)
{
    if (p == NULL)
        return;
    moat_ice_checker_free(p->checker);
    p->checker = NULL;
}

void sfu_peer_free(sfu_peer *p)
{
    sfu_peer_release(p);
    g_free(p);
}

char *sfu_peer_build_offer(const flood_session *s, char *error, size_t error_size)
{
    const sfu_peer *p = s->sfu;
    bool publish = p->role == SFU_ROLE_PUBLISHER;
    moat_sdp_direction direction = publish ? MOAT_SDP_SENDONLY : MOAT_SDP_RECVONLY;
    moat_sdp_offer_media media[2] = {
        {.kind = MOAT_MEDIA_KIND_AUDIO,
         .mid = "0",
         .direction = direction,
         .codecs = &session_offer_opus,
         .n_codecs = 1,
         .ssrc = publish ? p->audio_ssrc : 0},
        {.kind = MOAT_MEDIA_KIND_VIDEO,
         .mid = "1",
         .direction = direction,
         .codecs = &vp8,
         .n_codecs = 1,
         .ssrc = publish ? p->video_ssrc : 0},
    };
    return session_offer_create(s, media, 2, NULL, 0, error, error_size);
}

int sfu_peer_take_answer(flood_session *s, const char *answer, char *error, size_t error_size)
{
    moat_sdp *sdp = moat_sdp_parse(answer, strlen(answer), error, error_size);
    if (sdp == NULL)
        return -1;
    bool audio = false, video = false;
    for (size_t i = 0; i < sdp->n_media; i++) {
        const moat_sdp_media *m = &sdp->media[i];
        if (m->port == 0 || m->n_codecs == 0)
            continue;
        if (m->kind == MOAT_MEDIA_KIND_AUDIO && !audio) {
            s->sfu->audio_pt = m->codecs[0].pt;
            audio = true;
        } else if (m->kind == MOAT_MEDIA_KIND_VIDEO && !video) {
            s->sfu->video_pt = m->codecs[0].pt;
            video = true;
        }
    }
    moat_sdp_free(sdp);
    if (s->sfu->role == SFU_ROLE_PUBLISHER && !(audio && video)) {
        snprintf(error, error_size, "the answer did not accept both audio and video");
        return -1;
    }
    return 0;
}

/* The payload type we receive on an offered m-line: Opus or VP8 when
 * offered, else the first. */
static const moat_sdp_codec *chosen_codec(const moat_sdp_media *m)
{
    const char *wanted = m->kind == MOAT_MEDIA_KIND_AUDIO ? "opus" : "VP8";
    for (size_t i = 0; i < m->n_codecs; i++)
        if (strcasecmp(m->codecs[i].name, wanted) == 0)
            return &m->codecs[i];
    return &m->codecs[0];
}

static void answer_media(GString *out, const flood_session *s, const moat_sdp_media *m, bool first)
{
    bool usable = m->is_rtp && m->port != 0 && m->n_codecs > 0 &&
                  (m->kind == MOAT_MEDIA_KIND_AUDIO || m->kind == MOAT_MEDIA_KIND_VIDEO);
    if (!usable) {
        g_string_append_printf(out, "m=%s 0 %s %s\r\nc=IN IP4 0.0.0.0\r\n", m->media, m->proto,
                               m->first_format);
        if (m->mid[0] != '\0')
            g_string_append_printf(out, "a=mid:%s\r\n", m->mid);
        return;
    }
    const moat_sdp_codec *codec = chosen_codec(m);
    g_string_append_printf(out, "m=%s 9 %s %u\r\nc=IN IP4 0.0.0.0\r\n", m->media, m->proto,
                           codec->pt);
    if (m->mid[0] != '\0')
        g_string_append_printf(out, "a=mid:%s\r\n", m->mid);
    g_string_append_printf(out, "a=recvonly\r\na=rtcp-mux\r\na=rtpmap:%u %s/%u", codec->pt,
                           codec->name, codec->clock_rate);
    if (codec->channels > 0)
        g_string_append_printf(out, "/%u", codec->channels);
    g_string_append_printf(out,
                           "\r\na=ice-ufrag:%s\r\na=ice-pwd:%s\r\na=fingerprint:sha-256 %s\r\n"
                           "a=setup:passive\r\n",
                           s->local_ufrag, s->local_pwd, s->env->fingerprint);
    moat_sdp_candidate c;
    if (first && session_offer_host_candidate(s, &c) == 1)
        g_string_append_printf(out, "a=candidate:%s 1 udp %u %s %u typ host\r\n", c.foundation,
                               c.priority, c.address, c.port);
    g_string_append(out, "a=end-of-candidates\r\n");
}

char *sfu_peer_build_answer(flood_session *s, const char *offer, char *error, size_t error_size)
{
    moat_sdp *sdp = moat_sdp_parse(offer, strlen(offer), error, error_size);
    if (sdp == NULL)
        return NULL;
    GString *out = g_string_new(NULL);
    g_string_append_printf(out,
                           "v=0\r\no=moat-flood %u 2 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"
                           "a=ice-lite\r\n",
                           s->ssrc);
    if (sdp->n_bundle_mids > 0) {
        g_string_append(out, "a=group:BUNDLE");
        for (size_t i = 0; i < sdp->n_bundle_mids; i++)
            g_string_append_printf(out, " %s", sdp->bundle_mids[i]);
        g_string_append(out, "\r\n");
    }
    for (size_t i = 0; i < sdp->n_media; i++)
        answer_media(out, s, &sdp->media[i], i == 0);
    moat_sdp_free(sdp);
    /* The SFU offered actpass; we answered passive: it is the DTLS client. */
    s->dtls_role = MOAT_DTLS_ROLE_SERVER;
    moat_ice_checker_set_controlling(s->sfu->checker, false);
    return g_string_free(out, FALSE);
}

void sfu_peer_on_stun_request(flood_session *s, const uint8_t *data, size_t length,
                              const struct sockaddr_in6 *from, uint64_t now_us)
{
    uint8_t reply[MOAT_ICE_REPLY_CAPACITY];
    size_t reply_length = sizeof reply;
    moat_ice_check_info info;
    if (s->sfu->checker == NULL)
        return;
    moat_ice_check_result result = moat_ice_checker_handle_request(
        s->sfu->checker, data, length, s->local_ufrag, s->local_pwd, s->remote_ufrag,
        (const struct sockaddr *)from, sizeof *from, reply, &reply_length, &info);
    if (reply_length > 0)
        flood_session_send(s, reply, reply_length, from);
    if (result != MOAT_ICE_CHECK_OK || !info.use_candidate || !s->sfu->answering ||
        s->state != FLOOD_SESSION_CHECKING)
        return;
    s->remote = *from;
    s->state = FLOOD_SESSION_DTLS;
    session_dtls_start(s, now_us);
}

void sfu_peer_start(flood_session *s, uint64_t now_us)
{
    sfu_peer *p = s->sfu;
    if (p->role == SFU_ROLE_SUBSCRIBER) {
        p->loss.counting = true;
        return;
    }
    sfu_source_init(&p->source, p->audio_ssrc, p->audio_pt, p->video_ssrc, p->video_pt,
                    s->env->options->video_pps, now_us);
    p->sending = true;
}

void sfu_peer_send_due(flood_session *s, uint64_t now_us)
{
    sfu_peer *p = s->sfu;
    if (!p->sending || s->state != FLOOD_SESSION_CONNECTED)
        return;
    sfu_stream *stream;
    while ((stream = sfu_source_due(&p->source, now_us)) != NULL) {
        uint8_t packet[FLOOD_PACKET_CAPACITY];
        size_t length = sfu_source_write(&p->source, stream, now_us, packet, sizeof packet);
        if (length == 0 ||
            moat_srtp_protect_rtp(s->srtp, packet, &length, sizeof packet) != MOAT_SRTP_OK) {
            p->send_errors++;
            continue;
        }
        if (flood_session_send(s, packet, length, NULL) == 0)
            p->sent++;
        else
            p->send_errors++;
    }
}

uint64_t sfu_peer_next_due_us(const flood_session *s)
{
    const sfu_peer *p = s->sfu;
    if (!p->sending || s->state != FLOOD_SESSION_CONNECTED)
        return UINT64_MAX;
    return sfu_source_next_us(&p->source);
}

void sfu_peer_on_srtp(flood_session *s, uint8_t *data, size_t length)
{
    sfu_peer *p = s->sfu;
    if (s->srtp == NULL)
        return;
    bool rtcp = moat_rtp_is_rtcp(data, length);
    int status = rtcp ? moat_srtp_unprotect_rtcp(s->srtp, data, &length)
                      : moat_srtp_unprotect_rtp(s->srtp, data, &length);
    if (status != MOAT_SRTP_OK) {
        p->loss.unprotect_failures++;
        return;
    }
    if (rtcp) {
        p->loss.rtcp_received++;
        return;
    }
    moat_rtp_header header;
    if (p->role == SFU_ROLE_SUBSCRIBER && moat_rtp_parse(data, length, &header) == MOAT_RTP_OK)
        sfu_loss_on_rtp(&p->loss, header.ssrc, header.sequence);
}

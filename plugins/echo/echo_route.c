/* Mapping incoming RTP to m-lines by mid, SSRC and payload type. */
#include "echo_route.h"

#include <string.h>

static int learned(const moat_echo_session *s, uint32_t ssrc)
{
    for (size_t i = 0; i < s->n_ssrcs; i++) {
        if (s->ssrcs[i].ssrc == ssrc)
            return (int)s->ssrcs[i].media_index;
    }
    return -1;
}

static void learn(moat_echo_session *s, uint32_t ssrc, int index)
{
    /* A full table only costs the slower lookup for further SSRCs. */
    if (s->n_ssrcs >= MOAT_ECHO_MAX_SSRCS)
        return;
    s->ssrcs[s->n_ssrcs].ssrc = ssrc;
    s->ssrcs[s->n_ssrcs].media_index = (size_t)index;
    s->n_ssrcs++;
}

static int by_mid(const moat_echo_session *s, const uint8_t *packet, const moat_rtp_header *h)
{
    for (size_t i = 0; i < s->n_media; i++) {
        const moat_media_info *m = &s->media[i];
        if (m->mid_extension_id == 0)
            continue;
        const uint8_t *value;
        size_t len;
        if (moat_rtp_find_extension(packet, h, m->mid_extension_id, &value, &len) != MOAT_RTP_OK)
            continue;
        size_t mid_len = strnlen(m->mid, sizeof(m->mid));
        if (len == mid_len && memcmp(value, m->mid, len) == 0)
            return (int)i;
    }
    return -1;
}

static int by_declared_ssrc(const moat_echo_session *s, uint32_t ssrc)
{
    for (size_t i = 0; i < s->n_media; i++) {
        const moat_media_info *m = &s->media[i];
        if ((m->remote_ssrc != 0 && m->remote_ssrc == ssrc) ||
            (m->remote_rtx_ssrc != 0 && m->remote_rtx_ssrc == ssrc))
            return (int)i;
    }
    return -1;
}

/* Bundled m-lines may share payload types; an m-line the peer sends on and
 * whose stream is not yet known is the better guess, so two new streams with
 * the same codec land on two m-lines. */
static int by_payload_type(const moat_echo_session *s, uint8_t pt)
{
    int first = -1;
    for (size_t i = 0; i < s->n_media; i++) {
        const moat_media_info *m = &s->media[i];
        if (!m->peer_sends)
            continue;
        size_t n = m->n_payload_types < 16 ? m->n_payload_types : 16;
        bool member = false;
        for (size_t k = 0; k < n && !member; k++)
            member = m->payload_types[k] == pt;
        if (!member)
            continue;
        if (!s->streams[i].primary_known)
            return (int)i;
        if (first < 0)
            first = (int)i;
    }
    return first;
}

int moat_echo_route(moat_echo_session *s, const uint8_t *packet, const moat_rtp_header *h)
{
    int index = learned(s, h->ssrc);
    if (index >= 0)
        return index;
    index = by_mid(s, packet, h);
    if (index < 0)
        index = by_declared_ssrc(s, h->ssrc);
    if (index < 0)
        index = by_payload_type(s, h->payload_type);
    if (index >= 0)
        learn(s, h->ssrc, index);
    return index;
}

int moat_echo_media_by_local_ssrc(const moat_echo_session *s, uint32_t ssrc)
{
    for (size_t i = 0; i < s->n_media; i++) {
        if (s->media[i].local_ssrc == ssrc)
            return (int)i;
    }
    return -1;
}

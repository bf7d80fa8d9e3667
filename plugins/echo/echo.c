/* The echo plugin: whatever a peer sends (RTP, data channel messages) comes
 * back to it on the same PeerConnection, and keyframe requests are relayed
 * so the echoed video recovers. */
#include <glib.h>

#include "echo_keyframe.h"
#include "echo_route.h"
#include "echo_session.h"
#include "plugin.h"
#include "rtp/rtcp_feedback.h"
#include "rtp/rtcp_packet.h"
#include "rtp/rtp_packet.h"

/* FIR entries looked at per packet; a FIR names one entry per stream. */
#define MAX_FIR_ENTRIES 16

/* The plugin API hands the gateway's calls to init only, so they are kept
 * here: written once by init before any attach, cleared by destroy after the
 * last detach, read-only in between. Sessions keep their own copy. */
static const moat_gateway_calls *echo_gateway;

static int echo_init(const moat_gateway_calls *gateway)
{
    if (gateway == NULL || gateway->send_rtp == NULL || gateway->send_rtcp == NULL ||
        gateway->send_data == NULL || gateway->now_us == NULL)
        return -1;
    echo_gateway = gateway;
    return 0;
}

static void echo_destroy(void)
{
    echo_gateway = NULL;
}

static void *echo_attach(moat_plugin_session *handle, const moat_session_info *info,
                         const char **error)
{
    if (echo_gateway == NULL) {
        *error = "echo plugin not initialised";
        return NULL;
    }
    if (info == NULL || info->n_media > MOAT_PLUGIN_MAX_MEDIA ||
        (info->n_media > 0 && info->media == NULL)) {
        *error = "bad session description";
        return NULL;
    }
    moat_echo_session *s = g_malloc0(sizeof *s + info->n_media * sizeof s->streams[0]);
    s->handle = handle;
    s->gateway = echo_gateway;
    s->n_media = info->n_media;
    for (size_t i = 0; i < info->n_media; i++) {
        s->streams[i].kind = info->media[i].kind;
        s->streams[i].peer_receives = info->media[i].peer_receives;
        s->streams[i].local_ssrc = info->media[i].local_ssrc;
        /* A declared SSRC is the stream; an undeclared one is learned. */
        s->streams[i].primary_known = info->media[i].remote_ssrc != 0;
        s->streams[i].primary_ssrc = info->media[i].remote_ssrc;
    }
    atomic_init(&s->echoed_rtp, 0);
    atomic_init(&s->echoed_data, 0);
    return s;
}

static void echo_detach(void *state)
{
    moat_echo_session *s = state;
    g_free(s);
}

static char *echo_handle_message(void *state, const char *json)
{
    moat_echo_session *s = state;
    uint64_t rtp = atomic_load_explicit(&s->echoed_rtp, memory_order_relaxed);
    uint64_t data = atomic_load_explicit(&s->echoed_data, memory_order_relaxed);
    return g_strdup_printf("{\"plugin\":\"echo\",\"echoed_rtp\":%" G_GUINT64_FORMAT
                           ",\"echoed_data\":%" G_GUINT64_FORMAT "}",
                           (guint64)rtp, (guint64)data);
}

/* Decides whether the packet is the stream echoed on its m-line, learning
 * the stream on its first payload-carrying packet when it was not declared.
 * RTX the core could not unwrap and repaired packets are not echoed: the
 * peer gets one sequence space per m-line, and never asked us to repair. */
static bool is_echoed_stream(moat_echo_session *s, const moat_rtp_packet *p)
{
    moat_echo_stream *st = &s->streams[p->media_index];
    if (p->rtx || p->repaired)
        return false;
    if (!st->primary_known) {
        /* Padding-only packets are bandwidth probes, often on the RTX SSRC;
         * they must not decide which stream is the media. */
        if (p->payload_length == 0)
            return false;
        st->primary_known = true;
        st->primary_ssrc = p->ssrc;
    }
    return p->ssrc == st->primary_ssrc;
}

/* Plugin API v2: the core demultiplexed the packet (rtp/rtp_demux.h). */
static void echo_on_media(void *state, moat_rtp_packet *p)
{
    moat_echo_session *s = state;
    if (s->hung_up || p->media_index < 0 || (size_t)p->media_index >= s->n_media ||
        !is_echoed_stream(s, p))
        return;
    size_t index = (size_t)p->media_index;
    moat_echo_stream *st = &s->streams[index];
    if (!st->seen) {
        st->seen = true;
        /* Echoed video must start on a keyframe the peer has not sent yet. */
        if (st->kind == MOAT_MEDIA_KIND_VIDEO && st->peer_receives)
            moat_echo_request_keyframe(s, index);
    }
    if (!st->peer_receives)
        return;
    moat_rtp_set_ssrc(p->data, st->local_ssrc);
    if (s->gateway->send_rtp(s->handle, p->data, p->length) == 0)
        atomic_fetch_add_explicit(&s->echoed_rtp, 1, memory_order_relaxed);
}

/* The peer asks us (the sender of its echoed stream) for a keyframe; only
 * the peer itself can make one, so the request goes back to it. */
static void relay_keyframe_request(moat_echo_session *s, uint32_t local_ssrc)
{
    int index = moat_echo_media_by_local_ssrc(s, local_ssrc);
    if (index >= 0 && s->streams[index].peer_receives)
        moat_echo_request_keyframe(s, (size_t)index);
}

static void echo_on_rtcp(void *state, const uint8_t *packet, size_t length)
{
    moat_echo_session *s = state;
    if (s->hung_up || moat_rtcp_check_compound(packet, length) <= 0)
        return;
    moat_rtcp_iter it;
    moat_rtcp_header h;
    moat_rtcp_iter_init(&it, packet, length);
    while (moat_rtcp_iter_next(&it, &h) > 0) {
        moat_rtcp_fb fb;
        if (h.type != MOAT_RTCP_PSFB || moat_rtcp_parse_fb(&h, &fb) != MOAT_RTP_OK)
            continue;
        if (moat_rtcp_fb_is_pli(&fb)) {
            relay_keyframe_request(s, fb.media_ssrc);
        } else if (moat_rtcp_fb_is_fir(&fb)) {
            moat_rtcp_fir_entry entries[MAX_FIR_ENTRIES];
            int n = moat_rtcp_parse_fir(&fb, entries, MAX_FIR_ENTRIES);
            for (int i = 0; i < n && i < MAX_FIR_ENTRIES; i++)
                relay_keyframe_request(s, entries[i].ssrc);
        }
    }
}

static void echo_on_data(void *state, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                         size_t length)
{
    moat_echo_session *s = state;
    if (s->hung_up)
        return;
    if (s->gateway->send_data(s->handle, stream_id, ppid, data, length) == 0)
        atomic_fetch_add_explicit(&s->echoed_data, 1, memory_order_relaxed);
}

static void echo_hangup(void *state)
{
    moat_echo_session *s = state;
    s->hung_up = true;
}

static const moat_plugin echo_plugin = {
    .api_version = MOAT_PLUGIN_API_VERSION,
    .name = "echo",
    .description = "sends every RTP packet and data channel message back to its sender",
    .init = echo_init,
    .destroy = echo_destroy,
    .attach = echo_attach,
    .detach = echo_detach,
    .handle_message = echo_handle_message,
    .on_media = echo_on_media,
    .on_rtcp = echo_on_rtcp,
    .on_data = echo_on_data,
    .hangup = echo_hangup,
};

/* The one symbol the module exports (it is built with hidden visibility). */
__attribute__((visibility("default"))) const moat_plugin *moat_plugin_entry(void);

const moat_plugin *moat_plugin_entry(void)
{
    return &echo_plugin;
}

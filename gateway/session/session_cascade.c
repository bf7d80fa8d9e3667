/* Owns the start of a cascade leg (session_cascade.h): no DTLS context, SRTP+
 * prn forced, a short consent kept alive by authenticated media, then the
 * session started on its worker with the given path and keys installed as a
 * finished handshake would; and the leg's entries on its link's tuple (its
 * routes, taken from an ordinary session that holds the tuple). */
#include "session/session_cascade.h"

#include "session/session_internal.h"

#include "engine/worker_receive.h"
#include "rtp/rtp_demux.h"

#include <string.h>

typedef struct {
    moat_session *session;
    moat_path path;
    moat_srtp_keying keys;
    uint32_t layer_ssrcs[MOAT_CASCADE_LAYERS];
    uint32_t layer_rtx_ssrcs[MOAT_CASCADE_LAYERS];
    size_t n_layers;
} cascade_start;

/* The other node's layer SSRCs, declared on the video m-line it sends with
 * that m-line's rids (the link's packets carry no rid extension). */
static void declare_layers(moat_session *session, const uint32_t *ssrcs, const uint32_t *rtx,
                           size_t n)
{
    for (size_t i = 0; i < session->n_media; i++) {
        const moat_media_info *m = &session->media[i];
        if (m->kind != MOAT_MEDIA_KIND_VIDEO || !m->peer_sends)
            continue;
        for (size_t l = 0; l < n && l < m->n_rids; l++) {
            moat_rtp_demux_declare(&session->demux, ssrcs[l], (int)i, m->rids[l], false);
            if (rtx[l])
                moat_rtp_demux_declare(&session->demux, rtx[l], (int)i, m->rids[l], true);
        }
        return;
    }
}

static void unbind_routes(moat_session *session, const struct sockaddr_in6 *remote)
{
    for (size_t i = 0; i < session->n_cascade_ssrcs; i++)
        moat_worker_unbind_route(session->worker, remote, session->cascade_ssrcs[i], session);
}

/* An ordinary session on the link's tuple got there by an ICE check from
 * the other node's worker address, which only the other node uses (for
 * links) or someone spoofing it: the link's leg takes the tuple. */
bool moat_session_cascade_bind(moat_session *session, const struct sockaddr_in6 *remote)
{
    moat_session *holder = moat_worker_session_by_tuple(session->worker, remote);
    if (holder && holder != session && !holder->cascade_leg)
        moat_session_yield_tuple(holder, remote);
    if (session->n_cascade_ssrcs == 0) {
        if (moat_worker_bind_tuple(session->worker, remote, session))
            return true;
        moat_session_log(session, MOAT_LOG_WARN, "session",
                         "session %s: cascade leg: its link's tuple is another leg's",
                         session->label);
        return false;
    }
    for (size_t i = 0; i < session->n_cascade_ssrcs; i++) {
        if (moat_worker_bind_route(session->worker, remote, session->cascade_ssrcs[i], session))
            continue;
        moat_session_log(session, MOAT_LOG_WARN, "session",
                         "session %s: cascade leg: SSRC %u on its link's tuple is another "
                         "leg's",
                         session->label, session->cascade_ssrcs[i]);
        unbind_routes(session, remote); /* only its own go */
        return false;
    }
    return true;
}

static void start_task(moat_worker *worker, void *data)
{
    cascade_start *start = data;
    moat_session_start(start->session);
    moat_session_bypass_handshake(start->session, &start->path, &start->keys);
    declare_layers(start->session, start->layer_ssrcs, start->layer_rtx_ssrcs, start->n_layers);
    memset(&start->keys, 0, sizeof start->keys);
    g_free(start);
}

static void release_start(void *data)
{
    cascade_start *start = data;
    memset(&start->keys, 0, sizeof start->keys);
    g_free(start);
}

void moat_session_start_cascade(moat_session *session, moat_worker *worker, const moat_path *path,
                                const moat_srtp_keying *keys, uint32_t consent_timeout_ms,
                                const uint32_t *remote_ssrcs, size_t n_remote_ssrcs,
                                const uint32_t *layer_ssrcs, const uint32_t *layer_rtx_ssrcs,
                                size_t n_layers)
{
    session->dtls_context = NULL;
    session->cascade_leg = true;
    session->consent_timeout_us = (uint64_t)consent_timeout_ms * 1000u;
    session->n_cascade_ssrcs = 0;
    for (size_t i = 0; i < n_remote_ssrcs && session->n_cascade_ssrcs < MOAT_SESSION_CASCADE_SSRCS;
         i++)
        if (remote_ssrcs[i])
            session->cascade_ssrcs[session->n_cascade_ssrcs++] = remote_ssrcs[i];
    session->negotiation.srtpplus = true;
    memset(&session->negotiation.srtpplus_scheme, 0, sizeof session->negotiation.srtpplus_scheme);
    strcpy(session->negotiation.srtpplus_scheme.scheme, "prn");
    cascade_start *start = g_new0(cascade_start, 1);
    start->session = session;
    start->path = *path;
    start->keys = *keys;
    for (size_t l = 0; l < n_layers && start->n_layers < MOAT_CASCADE_LAYERS; l++) {
        if (!layer_ssrcs[l])
            continue;
        start->layer_rtx_ssrcs[start->n_layers] = layer_rtx_ssrcs ? layer_rtx_ssrcs[l] : 0;
        start->layer_ssrcs[start->n_layers++] = layer_ssrcs[l];
    }
    moat_worker_post(worker, start_task, start, release_start);
}

uint32_t moat_session_rtcp_ssrc(const moat_session *session)
{
    return session->rtcp_ssrc;
}

/* The RTX SSRC of the outgoing stream on `ssrc`, 0 none. */
static uint32_t rtx_of_stream(const moat_session *session, uint32_t ssrc)
{
    for (size_t i = 0; i < session->n_outgoing; i++)
        if (session->outgoing[i].ssrc == ssrc)
            return session->outgoing[i].rtx_ssrc;
    return 0;
}

size_t moat_session_layer_ssrcs(const moat_session *session, uint32_t *out, uint32_t *rtx_out,
                                size_t max)
{
    for (size_t i = 0; i < session->n_media; i++) {
        const moat_media_info *m = &session->media[i];
        if (m->kind != MOAT_MEDIA_KIND_VIDEO || !m->peer_receives || m->n_local_layers == 0)
            continue;
        size_t n = m->n_local_layers < max ? m->n_local_layers : max;
        for (size_t l = 0; l < n; l++) {
            out[l] = m->local_layer_ssrcs[l];
            rtx_out[l] = rtx_of_stream(session, out[l]);
        }
        return n;
    }
    return 0;
}

uint32_t moat_session_video_rtx_ssrc(const moat_session *session)
{
    for (size_t i = 0; i < session->n_media; i++) {
        const moat_media_info *m = &session->media[i];
        if (m->kind == MOAT_MEDIA_KIND_VIDEO && m->peer_receives && m->local_ssrc)
            return rtx_of_stream(session, m->local_ssrc);
    }
    return 0;
}

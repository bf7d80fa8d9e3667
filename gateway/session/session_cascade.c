/* Owns the start of a cascade leg (session_cascade.h): no DTLS context, SRTP+
 * prn forced, a short consent kept alive by authenticated media, then the
 * session started on its worker with the given path and keys installed as a
 * finished handshake would. */
#include "session/session_cascade.h"

#include "session/session_internal.h"

#include <string.h>

typedef struct {
    moat_session *session;
    moat_path path;
    moat_srtp_keying keys;
} cascade_start;

static void start_task(moat_worker *worker, void *data)
{
    cascade_start *start = data;
    moat_session_start(start->session);
    moat_session_bypass_handshake(start->session, &start->path, &start->keys);
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
                                const uint32_t *remote_ssrcs, size_t n_remote_ssrcs)
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
    moat_worker_post(worker, start_task, start, release_start);
}

uint32_t moat_session_rtcp_ssrc(const moat_session *session)
{
    return session->rtcp_ssrc;
}

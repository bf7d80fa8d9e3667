/* Owns WHIP session setup and control on the control thread: the offer ->
 * answer -> session -> registry record path, the hand-over to the worker, ICE
 * restarts and hang-ups, independent of how the request arrived. */
#include "session/whip_session.h"

#include "session/session.h"
#include "session/session_handle.h"
#include "dtls/certificate.h"
#include "ice/ice_credentials.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

/* The session-ended hop needs the gateway on the control thread; it is set
 * once at start-up and read only there. */
static moat_gateway *bound_gateway;

void moat_whip_bind_gateway(moat_gateway *gateway)
{
    bound_gateway = gateway;
}

/* Queues fn(data) on the default main context, which the control thread
 * iterates. (g_main_context_invoke would run it right here, on a worker, when
 * nobody holds that context at the moment.) */
static void run_on_control_thread(GSourceFunc fn, gpointer data, GDestroyNotify destroy)
{
    GSource *source = g_idle_source_new();
    g_source_set_priority(source, G_PRIORITY_DEFAULT);
    g_source_set_callback(source, fn, data, destroy);
    g_source_attach(source, NULL);
    g_source_unref(source);
}

static gboolean remove_ended_session(gpointer data)
{
    if (bound_gateway)
        moat_session_registry_remove(bound_gateway->sessions, data);
    return G_SOURCE_REMOVE;
}

void moat_whip_session_ended(const char *session_id, const char *reason)
{
    run_on_control_thread(remove_ended_session, g_strdup(session_id), g_free);
}

static void new_etag(char *out, size_t size)
{
    char id[33];
    moat_session_registry_new_id(id);
    snprintf(out, size, "\"%.16s\"", id);
}

/* The mids an ICE-restart fragment names: the accepted m-lines' non-empty,
 * distinct mids (an offer may carry none, e.g. a single m-line). */
static void remember_mids(moat_session_record *record, const moat_sdp_negotiation *negotiation)
{
    for (size_t i = 0; i < negotiation->n_media && record->n_mids < G_N_ELEMENTS(record->mids);
         i++) {
        const moat_sdp_negotiated_media *media = &negotiation->media[i];
        if (!media->accepted || !media->mid[0])
            continue;
        bool seen = false;
        for (size_t j = 0; j < record->n_mids; j++)
            seen = seen || strcmp(record->mids[j], media->mid) == 0;
        if (!seen)
            g_strlcpy(record->mids[record->n_mids++], media->mid, sizeof record->mids[0]);
    }
}

/* The plugin's choice of worker (plugin API v2 place), else the gateway's. */
static moat_worker *place(moat_gateway *gateway, const moat_plugin *plugin, const char *endpoint,
                          const char *resource)
{
    int index = plugin->place ? plugin->place(endpoint, resource, gateway->n_workers) : -1;
    if (index >= 0 && (unsigned)index < gateway->n_workers)
        return gateway->workers[index];
    return moat_gateway_pick_worker(gateway);
}

typedef struct {
    const moat_plugin *plugin;
    const char *endpoint, *resource;
} codec_question;

/* The plugin shapes the answer's codecs (plugin API v2 accept_codec). */
static bool plugin_accepts_codec(void *user, size_t media_index, moat_media_kind kind,
                                 const char *name, uint32_t clock_rate)
{
    const codec_question *q = user;
    return q->plugin->accept_codec(q->endpoint, q->resource, media_index, kind, name, clock_rate);
}

static moat_whip_setup_result create(moat_gateway *gateway, const moat_plugin *plugin,
                                     const char *endpoint, const char *resource,
                                     const char *offer_text, size_t length,
                                     const moat_whip_local *local, int *source_pending,
                                     moat_whip_created *out, char *error, size_t error_size);

moat_whip_setup_result moat_whip_session_create(moat_gateway *gateway, const moat_plugin *plugin,
                                                const char *endpoint, const char *resource,
                                                const char *offer_text, size_t length,
                                                moat_whip_created *out, char *error,
                                                size_t error_size)
{
    return create(gateway, plugin, endpoint, resource, offer_text, length, NULL, NULL, out, error,
                  error_size);
}

moat_whip_setup_result moat_whip_session_create_counted(moat_gateway *gateway,
                                                        const moat_plugin *plugin,
                                                        const char *endpoint, const char *resource,
                                                        const char *offer_text, size_t length,
                                                        int *source_pending, moat_whip_created *out,
                                                        char *error, size_t error_size)
{
    return create(gateway, plugin, endpoint, resource, offer_text, length, NULL, source_pending,
                  out, error, error_size);
}

moat_whip_setup_result
moat_whip_session_create_local(moat_gateway *gateway, const moat_plugin *plugin,
                               const char *endpoint, const char *resource, const char *offer_text,
                               size_t length, const moat_whip_local *local, moat_whip_created *out,
                               char *error, size_t error_size)
{
    return create(gateway, plugin, endpoint, resource, offer_text, length, local, NULL, out, error,
                  error_size);
}

static moat_whip_setup_result create(moat_gateway *gateway, const moat_plugin *plugin,
                                     const char *endpoint, const char *resource,
                                     const char *offer_text, size_t length,
                                     const moat_whip_local *local, int *source_pending,
                                     moat_whip_created *out, char *error, size_t error_size)
{
    memset(out, 0, sizeof *out);
    moat_sdp *offer = moat_sdp_parse(offer_text, length, error, error_size);
    if (!offer)
        return MOAT_WHIP_SETUP_BAD_OFFER;
    moat_worker *worker = place(gateway, plugin, endpoint, resource);
    moat_session_record *record = g_new0(moat_session_record, 1);
    moat_session_registry_new_id(record->id);
    record->serial = ++gateway->session_serial;
    g_strlcpy(record->plugin, plugin->name, sizeof record->plugin);
    record->worker = worker;
    new_etag(record->etag, sizeof record->etag);
    char ufrag[MOAT_ICE_UFRAG_LENGTH + 1], pwd[MOAT_ICE_PWD_LENGTH + 1];
    moat_ice_credentials_generate(ufrag, pwd);
    if (local && local->ufrag && local->pwd) {
        g_strlcpy(ufrag, local->ufrag, sizeof ufrag);
        g_strlcpy(pwd, local->pwd, sizeof pwd);
    }
    g_strlcpy(record->local_ufrag, ufrag, sizeof record->local_ufrag);
    g_strlcpy(record->local_pwd, pwd, sizeof record->local_pwd);

    moat_sdp_candidate candidates[MOAT_MAX_CANDIDATE_ADDRESSES];
    size_t n_candidates =
        moat_gateway_candidates(gateway, worker, candidates, MOAT_MAX_CANDIDATE_ADDRESSES);
    moat_sdp_answer_params params = {
        .ice_ufrag = ufrag,
        .ice_pwd = pwd,
        .fingerprint_sha256 = moat_certificate_fingerprint(gateway->certificate),
        .setup = MOAT_SDP_SETUP_PASSIVE,
        .candidates = candidates,
        .n_candidates = n_candidates,
        .session_id = g_get_real_time(),
        .cname = "moat",
        .offer_srtpplus_prn = gateway->config.srtpplus,
        .offer_srtpplus_chain = gateway->config.srtpplus,
        .max_message_size = 262144,
        .local_ssrcs = local ? local->ssrcs : NULL,
        .n_local_ssrcs = local ? local->n_ssrcs : 0,
    };
    codec_question question = {plugin, endpoint, resource};
    if (plugin->accept_codec) {
        params.accept_codec = plugin_accepts_codec;
        params.accept_codec_user = &question;
    }
    moat_sdp_negotiation *negotiation = g_new0(moat_sdp_negotiation, 1);
    char *answer = NULL;
    int status = moat_sdp_answer_create(offer, &params, negotiation, &answer, error, error_size);
    moat_sdp_free(offer);
    if (status != 0 || !answer) {
        g_free(answer);
        g_free(negotiation);
        g_free(record);
        return MOAT_WHIP_SETUP_BAD_OFFER;
    }
    g_strlcpy(record->remote_ufrag, negotiation->remote_ufrag, sizeof record->remote_ufrag);
    g_strlcpy(record->remote_pwd, negotiation->remote_pwd, sizeof record->remote_pwd);
    remember_mids(record, negotiation);
    moat_session_params session_params = {
        .id = record->id,
        .worker = worker,
        .dtls_context = gateway->dtls_context,
        .negotiation = negotiation,
        .local_ufrag = ufrag,
        .local_pwd = pwd,
        .plugin = plugin,
        .consent_timeout_s = (uint32_t)gateway->config.consent_timeout_s,
        .lossy_playout_delay_max_ms = (uint32_t)gateway->config.lossy_playout_delay_max_ms,
        .pending_timeout_s = (uint32_t)gateway->config.pending_timeout_s,
        .pending_counter = &gateway->pending_sessions,
        .source_pending_counter = source_pending,
        .serial = record->serial,
        .prefilter = &gateway->prefilter,
        .on_ended = moat_whip_session_ended,
        .endpoint = endpoint,
        .resource = resource,
        .cascade = local && local->cascade,
        .relay_layers = local ? local->relay_layers : 0,
    };
    moat_session *session = moat_session_new(&session_params, error, error_size);
    g_free(negotiation);
    if (!session) {
        g_free(answer);
        g_free(record);
        return MOAT_WHIP_SETUP_REFUSED;
    }
    record->created_us = (uint64_t)g_get_monotonic_time();
    record->handle = moat_session_plugin_handle(session);
    if (record->handle)
        moat_session_handle_ref(record->handle);
    moat_session_registry_add(gateway->sessions, record);
    out->record = record;
    out->session = session;
    out->answer = answer;
    return MOAT_WHIP_SETUP_OK;
}

typedef struct {
    moat_session *session;
    char id[40];
    bool dropped;
    void (*started)(void *data);
    void *data;
    void (*destroy)(void *data);
} start_request;

static gboolean notify_started(gpointer data)
{
    start_request *request = data;
    if (request->dropped && bound_gateway)
        moat_session_registry_remove(bound_gateway->sessions, request->id);
    if (request->started)
        request->started(request->data);
    return G_SOURCE_REMOVE;
}

static void free_start_request(gpointer data)
{
    start_request *request = data;
    if (request->destroy)
        request->destroy(request->data);
    g_free(request);
}

static void start_task(moat_worker *worker, void *data)
{
    start_request *request = data;
    moat_session_start(request->session);
    request->session = NULL;
    run_on_control_thread(notify_started, request, free_start_request);
}

/* The worker has stopped: the session never runs. */
static void release_start(void *data)
{
    start_request *request = data;
    moat_session_free(request->session);
    request->session = NULL;
    request->dropped = true;
    run_on_control_thread(notify_started, request, free_start_request);
}

void moat_whip_session_start(moat_session *session, moat_worker *worker,
                             void (*started)(void *data), void *data, void (*destroy)(void *data))
{
    start_request *request = g_new0(start_request, 1);
    request->session = session;
    g_strlcpy(request->id, moat_session_id(session), sizeof request->id);
    request->started = started;
    request->data = data;
    request->destroy = destroy;
    moat_worker_post(worker, start_task, request, release_start);
}

typedef struct {
    char id[40];
    char local_ufrag[64], local_pwd[64], remote_ufrag[257], remote_pwd[257];
} restart_request;

static void restart_ice_task(moat_worker *worker, void *data)
{
    restart_request *request = data;
    moat_session *session = moat_worker_find_session(worker, request->id);
    if (session)
        moat_session_restart_ice(session, request->local_ufrag, request->local_pwd,
                                 request->remote_ufrag, request->remote_pwd);
    g_free(request);
}

char *moat_whip_session_restart(moat_gateway *gateway, moat_session_record *record,
                                const char *remote_ufrag, const char *remote_pwd, char *error,
                                size_t error_size)
{
    char ufrag[MOAT_ICE_UFRAG_LENGTH + 1], pwd[MOAT_ICE_PWD_LENGTH + 1];
    moat_ice_credentials_generate(ufrag, pwd);
    moat_sdp_candidate candidates[MOAT_MAX_CANDIDATE_ADDRESSES];
    size_t n_candidates =
        moat_gateway_candidates(gateway, record->worker, candidates, MOAT_MAX_CANDIDATE_ADDRESSES);
    const char *mids[G_N_ELEMENTS(record->mids)];
    for (size_t i = 0; i < record->n_mids; i++)
        mids[i] = record->mids[i];
    char *reply =
        moat_sdp_fragment_build(ufrag, pwd, candidates, n_candidates, mids, record->n_mids);
    /* Without usable mids the credentials and candidates still go at the
     * session level, which is all an ICE restart needs. */
    if (!reply && record->n_mids > 0)
        reply = moat_sdp_fragment_build(ufrag, pwd, candidates, n_candidates, NULL, 0);
    if (!reply) {
        snprintf(error, error_size, "cannot write the ICE restart answer");
        return NULL;
    }
    restart_request *request = g_new0(restart_request, 1);
    g_strlcpy(request->id, record->id, sizeof request->id);
    g_strlcpy(request->local_ufrag, ufrag, sizeof request->local_ufrag);
    g_strlcpy(request->local_pwd, pwd, sizeof request->local_pwd);
    g_strlcpy(request->remote_ufrag, remote_ufrag, sizeof request->remote_ufrag);
    g_strlcpy(request->remote_pwd, remote_pwd, sizeof request->remote_pwd);
    g_strlcpy(record->local_ufrag, ufrag, sizeof record->local_ufrag);
    g_strlcpy(record->local_pwd, pwd, sizeof record->local_pwd);
    g_strlcpy(record->remote_ufrag, remote_ufrag, sizeof record->remote_ufrag);
    g_strlcpy(record->remote_pwd, remote_pwd, sizeof record->remote_pwd);
    new_etag(record->etag, sizeof record->etag);
    moat_worker_post(record->worker, restart_ice_task, request, g_free);
    return reply;
}

static void end_session_task(moat_worker *worker, void *data)
{
    moat_session *session = moat_worker_find_session(worker, data);
    if (session)
        moat_session_end(session, "hang-up");
    g_free(data);
}

void moat_whip_session_hang_up(moat_gateway *gateway, moat_session_record *record)
{
    /* Before the DELETE is answered: a plugin asked from now on hears that
     * the session is ending (a tunnel gives its name to a newcomer). */
    if (record->handle)
        atomic_store(&record->handle->ending, true);
    moat_worker_post(record->worker, end_session_task, g_strdup(record->id), g_free);
    /* Counted until its worker reports the end (a drain takes a while). */
    moat_session_registry_hang_up(gateway->sessions, record->id);
}

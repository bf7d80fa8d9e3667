#include "core/whip_api.h"

#include "core/http_reply.h"
#include "core/ice_servers.h"
#include "core/log.h"
#include "core/session.h"
#include "dtls/certificate.h"
#include "ice/ice_credentials.h"
#include "record/record_api.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#define MAX_SDP_BYTES (64 * 1024)

/* The session-ended hop needs the gateway on the control thread; it is set
 * once at start-up and read only there. */
static moat_gateway *bound_gateway;

void moat_whip_bind_gateway(moat_gateway *gateway)
{
    bound_gateway = gateway;
}

static gboolean remove_ended_session(gpointer data)
{
    if (bound_gateway)
        moat_session_registry_remove(bound_gateway->sessions, data);
    return G_SOURCE_REMOVE;
}

void moat_whip_session_ended(const char *session_id, const char *reason)
{
    g_main_context_invoke_full(NULL, G_PRIORITY_DEFAULT, remove_ended_session, g_strdup(session_id),
                               g_free);
}

/* The 201 waits until the worker knows the session's ufrag: a client may
 * send its first check the moment it reads the answer. */
typedef struct {
    moat_session *session;
    SoupServerMessage *message;
} start_request;

static gboolean resume_reply(gpointer data)
{
    soup_server_message_unpause(data);
    return G_SOURCE_REMOVE;
}

static void start_session_task(moat_worker *worker, void *data)
{
    start_request *request = data;
    moat_session_start(request->session);
    g_main_context_invoke_full(NULL, G_PRIORITY_DEFAULT, resume_reply, request->message,
                               g_object_unref);
    g_free(request);
}

static void release_session(void *data)
{
    start_request *request = data;
    moat_session_free(request->session);
    g_main_context_invoke_full(NULL, G_PRIORITY_DEFAULT, resume_reply, request->message,
                               g_object_unref);
    g_free(request);
}

static void end_session_task(moat_worker *worker, void *data)
{
    moat_session *session = moat_worker_find_session(worker, data);
    if (session)
        moat_session_end(session, "hang-up");
    g_free(data);
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

static bool content_type_is(SoupServerMessage *message, const char *expected)
{
    const char *type = soup_message_headers_get_content_type(
        soup_server_message_get_request_headers(message), NULL);
    return type && g_ascii_strcasecmp(type, expected) == 0;
}

static void new_etag(char *out, size_t size)
{
    char id[33];
    moat_session_registry_new_id(id);
    snprintf(out, size, "\"%.16s\"", id);
}

void moat_whip_handle_offer(moat_gateway *gateway, SoupServerMessage *message,
                            const char *plugin_name)
{
    if (!content_type_is(message, "application/sdp")) {
        moat_http_reply_error(message, 415, "unsupported_media_type",
                              "a WHIP offer must be sent as Content-Type: application/sdp");
        return;
    }
    SoupMessageBody *body = soup_server_message_get_request_body(message);
    if (body->length == 0) {
        moat_http_reply_error(message, 400, "empty_offer", "the request has no SDP offer");
        return;
    }
    if (body->length > MAX_SDP_BYTES) {
        moat_http_reply_error(message, 413, "offer_too_large", "SDP offers are limited to %d bytes",
                              MAX_SDP_BYTES);
        return;
    }
    const moat_plugin *plugin = moat_plugin_registry_find(gateway->plugins, plugin_name);
    if (!plugin) {
        moat_http_reply_error(message, 404, "unknown_plugin", "no plugin named \"%s\"",
                              plugin_name);
        return;
    }
    char error[256] = "";
    moat_sdp *offer = moat_sdp_parse(body->data, (size_t)body->length, error, sizeof error);
    if (!offer) {
        moat_http_reply_error(message, 400, "bad_sdp", "%s", error);
        return;
    }
    moat_worker *worker = moat_gateway_pick_worker(gateway);
    moat_session_record *record = g_new0(moat_session_record, 1);
    moat_session_registry_new_id(record->id);
    g_strlcpy(record->plugin, plugin_name, sizeof record->plugin);
    record->worker = worker;
    new_etag(record->etag, sizeof record->etag);
    char ufrag[MOAT_ICE_UFRAG_LENGTH + 1], pwd[MOAT_ICE_PWD_LENGTH + 1];
    moat_ice_credentials_generate(ufrag, pwd);
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
    };
    moat_sdp_negotiation *negotiation = g_new0(moat_sdp_negotiation, 1);
    char *answer = NULL;
    int status = moat_sdp_answer_create(offer, &params, negotiation, &answer, error, sizeof error);
    moat_sdp_free(offer);
    if (status != 0) {
        moat_http_reply_error(message, 400, "bad_sdp", "%s", error);
        g_free(negotiation);
        g_free(record);
        return;
    }
    g_strlcpy(record->remote_ufrag, negotiation->remote_ufrag, sizeof record->remote_ufrag);
    g_strlcpy(record->remote_pwd, negotiation->remote_pwd, sizeof record->remote_pwd);
    for (size_t i = 0; i < negotiation->n_media && record->n_mids < 16; i++) {
        if (negotiation->media[i].accepted)
            g_strlcpy(record->mids[record->n_mids++], negotiation->media[i].mid, 32);
    }
    moat_session_params session_params = {
        .id = record->id,
        .worker = worker,
        .dtls_context = gateway->dtls_context,
        .negotiation = negotiation,
        .local_ufrag = ufrag,
        .local_pwd = pwd,
        .plugin = plugin,
        .consent_timeout_s = (uint32_t)gateway->config.consent_timeout_s,
        .prefilter = &gateway->prefilter,
        .on_ended = moat_whip_session_ended,
    };
    moat_session *session = moat_session_new(&session_params, error, sizeof error);
    g_free(negotiation);
    if (!session) {
        moat_http_reply_error(message, 503, "session_refused", "%s", error);
        g_free(answer);
        g_free(record);
        return;
    }
    moat_record_api_session_created(gateway, session, record->id);
    moat_log_info("whip", "session %s: created on worker %u for plugin %s", record->id,
                  moat_worker_index(worker), plugin_name);
    char location[96];
    snprintf(location, sizeof location, "/whip/resource/%s", record->id);
    SoupMessageHeaders *headers = soup_server_message_get_response_headers(message);
    soup_message_headers_replace(headers, "Location", location);
    soup_message_headers_replace(headers, "ETag", record->etag);
    soup_message_headers_replace(headers, "Accept-Patch", "application/trickle-ice-sdpfrag");
    char *link = moat_ice_servers_link_header(&gateway->config, g_get_real_time() / G_USEC_PER_SEC);
    if (link)
        soup_message_headers_replace(headers, "Link", link);
    g_free(link);
    moat_session_registry_add(gateway->sessions, record);
    moat_http_reply(message, 201, "application/sdp", answer, strlen(answer));
    start_request *request = g_new0(start_request, 1);
    request->session = session;
    request->message = g_object_ref(message);
    soup_server_message_pause(message);
    moat_worker_post(worker, start_session_task, request, release_session);
}

static void handle_patch(moat_gateway *gateway, SoupServerMessage *message,
                         moat_session_record *record)
{
    if (!content_type_is(message, "application/trickle-ice-sdpfrag")) {
        moat_http_reply_error(message, 415, "unsupported_media_type",
                              "PATCH bodies must be application/trickle-ice-sdpfrag");
        return;
    }
    const char *if_match =
        soup_message_headers_get_one(soup_server_message_get_request_headers(message), "If-Match");
    if (if_match && strcmp(if_match, "*") != 0 && strcmp(if_match, record->etag) != 0) {
        moat_http_reply_error(message, 412, "etag_mismatch",
                              "If-Match %s does not match the resource's ETag", if_match);
        return;
    }
    SoupMessageBody *body = soup_server_message_get_request_body(message);
    if (body->length > MAX_SDP_BYTES) {
        moat_http_reply_error(message, 413, "fragment_too_large", "fragment over %d bytes",
                              MAX_SDP_BYTES);
        return;
    }
    char error[256] = "";
    moat_sdp_fragment fragment;
    if (moat_sdp_fragment_parse(body->data ? body->data : "", (size_t)body->length, &fragment,
                                error, sizeof error) != 0) {
        moat_http_reply_error(message, 400, "bad_fragment", "%s", error);
        return;
    }
    bool restart = fragment.ice_ufrag[0] && fragment.ice_pwd[0] &&
                   (strcmp(fragment.ice_ufrag, record->remote_ufrag) != 0 ||
                    strcmp(fragment.ice_pwd, record->remote_pwd) != 0);
    if (!restart) {
        /* An ICE-lite agent learns the peer's addresses from its checks, so
         * trickled candidates need no action beyond being well-formed. */
        moat_http_reply(message, 204, NULL, NULL, 0);
        return;
    }
    restart_request *request = g_new0(restart_request, 1);
    g_strlcpy(request->id, record->id, sizeof request->id);
    char ufrag[MOAT_ICE_UFRAG_LENGTH + 1], pwd[MOAT_ICE_PWD_LENGTH + 1];
    moat_ice_credentials_generate(ufrag, pwd);
    g_strlcpy(request->local_ufrag, ufrag, sizeof request->local_ufrag);
    g_strlcpy(request->local_pwd, pwd, sizeof request->local_pwd);
    g_strlcpy(request->remote_ufrag, fragment.ice_ufrag, sizeof request->remote_ufrag);
    g_strlcpy(request->remote_pwd, fragment.ice_pwd, sizeof request->remote_pwd);
    g_strlcpy(record->local_ufrag, ufrag, sizeof record->local_ufrag);
    g_strlcpy(record->local_pwd, pwd, sizeof record->local_pwd);
    g_strlcpy(record->remote_ufrag, fragment.ice_ufrag, sizeof record->remote_ufrag);
    g_strlcpy(record->remote_pwd, fragment.ice_pwd, sizeof record->remote_pwd);
    new_etag(record->etag, sizeof record->etag);
    moat_worker_post(record->worker, restart_ice_task, request, g_free);

    moat_sdp_candidate candidates[MOAT_MAX_CANDIDATE_ADDRESSES];
    size_t n_candidates =
        moat_gateway_candidates(gateway, record->worker, candidates, MOAT_MAX_CANDIDATE_ADDRESSES);
    const char *mids[16];
    for (size_t i = 0; i < record->n_mids; i++)
        mids[i] = record->mids[i];
    char *reply =
        moat_sdp_fragment_build(ufrag, pwd, candidates, n_candidates, mids, record->n_mids);
    soup_message_headers_replace(soup_server_message_get_response_headers(message), "ETag",
                                 record->etag);
    moat_http_reply(message, 200, "application/trickle-ice-sdpfrag", reply, strlen(reply));
}

void moat_whip_handle_resource(moat_gateway *gateway, SoupServerMessage *message,
                               const char *session_id)
{
    moat_session_record *record = moat_session_registry_find(gateway->sessions, session_id);
    if (!record) {
        moat_http_reply_error(message, 404, "unknown_session", "no session \"%s\"", session_id);
        return;
    }
    const char *method = soup_server_message_get_method(message);
    if (strcmp(method, "PATCH") == 0) {
        handle_patch(gateway, message, record);
    } else if (strcmp(method, "DELETE") == 0) {
        moat_worker_post(record->worker, end_session_task, g_strdup(record->id), g_free);
        moat_session_registry_remove(gateway->sessions, session_id);
        moat_http_reply(message, 200, NULL, NULL, 0);
    } else {
        moat_http_reply_error(message, 405, "method_not_allowed",
                              "a WHIP resource accepts PATCH and DELETE");
    }
}

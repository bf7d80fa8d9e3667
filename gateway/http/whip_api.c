/* Owns WHIP's HTTP semantics: status codes, Location/ETag/If-Match, and the
 * admission checks that refuse offers before any SDP is parsed. */
#include "http/whip_api.h"

#include "http/http_router.h"
#include "session/whip_session.h"
#include "http/ice_servers.h"
#include "record/record_api.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

/* Retry-After for a refusal because of the session caps, in seconds. */
#define RETRY_AFTER_FULL_S 5

static void retry_after(moat_http_response *response, unsigned seconds)
{
    char text[16];
    snprintf(text, sizeof text, "%u", seconds);
    moat_http_response_header(response, "Retry-After", text);
}

bool moat_whip_admit(moat_gateway *gateway, const moat_http_request *request,
                     moat_http_response *response)
{
    /* A node that forwarded the offer counted its client already; here it
     * counts against that client too, not against the node (whose address
     * all its clients would share). */
    const char *source = moat_http_offer_source(gateway, request);
    unsigned wait_s =
        moat_admission_take(gateway->admission, source, (uint64_t)g_get_monotonic_time());
    if (wait_s == 0)
        return true;
    moat_http_note_refusal(gateway, MOAT_REFUSED_RATE_LIMITED, source);
    moat_http_response_error(response, 429, "rate_limited",
                             "too many offers from this address; retry in %u s", wait_s);
    retry_after(response, wait_s);
    return false;
}

bool moat_whip_admit_session_cap(moat_gateway *gateway, const moat_http_request *request,
                                 moat_http_response *response)
{
    const moat_config *config = &gateway->config;
    /* Sessions hung up but still draining hold their resources too. */
    size_t held = moat_session_registry_count(gateway->sessions) +
                  moat_session_registry_count_ending(gateway->sessions);
    if (config->max_sessions > 0 && held >= (size_t)config->max_sessions) {
        moat_http_note_refusal(gateway, MOAT_REFUSED_MAX_SESSIONS, request->peer);
        moat_http_response_error(response, 503, "max_sessions",
                                 "the gateway holds its maximum of %d sessions",
                                 config->max_sessions);
        retry_after(response, RETRY_AFTER_FULL_S);
        return false;
    }
    return true;
}

/* The pending caps, all sources' and this source's (IPv4 address, IPv6
 * /56); true when a new session may wait for ICE, with `source_pending` the
 * counter the session joins. Without the per-source cap a few sources at
 * the allowed offer rate could hold every pending slot. */
static bool admit_pending(moat_gateway *gateway, const moat_http_request *request,
                          moat_http_response *response, int **source_pending)
{
    const moat_config *config = &gateway->config;
    /* Pending sessions connect or are reaped within the pending timeout. */
    unsigned wait_s = (unsigned)config->pending_timeout_s / 2;
    wait_s = wait_s > 0 ? wait_s : 1;
    if (config->max_pending_sessions > 0 &&
        g_atomic_int_get(&gateway->pending_sessions) >= config->max_pending_sessions) {
        moat_http_note_refusal(gateway, MOAT_REFUSED_MAX_PENDING, request->peer);
        moat_http_response_error(response, 503, "max_pending_sessions",
                                 "%d sessions are still connecting (ICE, DTLS); try again shortly",
                                 config->max_pending_sessions);
        retry_after(response, wait_s);
        return false;
    }
    char key[64];
    moat_admission_source_key_prefix(request->peer, 56, key, sizeof key);
    int *count = moat_source_counts_get(gateway->pending_sources, key);
    if (config->max_pending_per_source > 0 &&
        g_atomic_int_get(count) >= config->max_pending_per_source) {
        moat_http_note_refusal(gateway, MOAT_REFUSED_MAX_PENDING_SRC, request->peer);
        moat_http_response_error(response, 429, "max_pending_per_source",
                                 "%d sessions from this address (IPv6: this /56) are still "
                                 "connecting (ICE, DTLS); connect them or try again shortly",
                                 config->max_pending_per_source);
        /* A source's own sessions usually connect within a second. */
        retry_after(response, 1);
        return false;
    }
    *source_pending = count;
    return true;
}

void moat_whip_reply_refused(moat_http_response *response, const char *error)
{
    if (g_str_has_prefix(error, MOAT_PLUGIN_ERROR_NOT_FOUND))
        moat_http_response_error(response, 404, "not_found", "%s",
                                 error + strlen(MOAT_PLUGIN_ERROR_NOT_FOUND));
    else if (g_str_has_prefix(error, MOAT_PLUGIN_ERROR_FULL))
        moat_http_response_error(response, 503, "full", "%s",
                                 error + strlen(MOAT_PLUGIN_ERROR_FULL));
    else if (g_str_has_prefix(error, MOAT_PLUGIN_ERROR_CONFLICT))
        moat_http_response_error(response, 409, "conflict", "%s",
                                 error + strlen(MOAT_PLUGIN_ERROR_CONFLICT));
    else if (g_str_has_prefix(error, MOAT_PLUGIN_ERROR_BAD_REQUEST))
        moat_http_response_error(response, 400, "bad_request", "%s",
                                 error + strlen(MOAT_PLUGIN_ERROR_BAD_REQUEST));
    else
        moat_http_response_error(response, 503, "session_refused", "%s", error);
}

void moat_whip_handle_offer(moat_gateway *gateway, const moat_http_request *request,
                            moat_http_response *response, const char *endpoint,
                            const char *plugin_name, const char *resource)
{
    if (!moat_http_request_content_type_is(request, "application/sdp")) {
        moat_http_response_error(response, 415, "unsupported_media_type",
                                 "a WHIP offer must be sent as Content-Type: application/sdp");
        return;
    }
    if (request->body_length == 0 || !request->body) {
        moat_http_response_error(response, 400, "empty_offer", "the request has no SDP offer");
        return;
    }
    const moat_plugin *plugin = moat_plugin_registry_find(gateway->plugins, plugin_name);
    if (!plugin) {
        moat_http_response_error(response, 404, "unknown_plugin", "no plugin named \"%s\"",
                                 plugin_name);
        return;
    }
    int *source_pending = NULL;
    if (!moat_whip_admit_session_cap(gateway, request, response) ||
        !admit_pending(gateway, request, response, &source_pending))
        return;
    char error[256] = "";
    moat_whip_created created;
    moat_whip_setup_result result = moat_whip_session_create_counted(
        gateway, plugin, endpoint, resource, request->body, request->body_length, source_pending,
        &created, error, sizeof error);
    if (result == MOAT_WHIP_SETUP_BAD_OFFER) {
        moat_http_response_error(response, 400, "bad_sdp", "%s", error);
        return;
    }
    if (result != MOAT_WHIP_SETUP_OK) {
        moat_whip_reply_refused(response, error);
        return;
    }
    moat_session_record *record = created.record;
    record->whip_resource = true;
    moat_record_api_session_created(gateway, created.session, record);
    /* The label, never the resource id: the id is the session's capability. */
    moat_http_log(gateway, "session %" G_GUINT64_FORMAT ": created on worker %u for %s",
                  record->serial, moat_worker_index(record->worker), plugin_name);
    /* In a cluster the Location is absolute (the node's advertised URL), so
     * that PATCH and DELETE of a redirected or forwarded offer come here. */
    const char *base =
        moat_config_cluster_enabled(&gateway->config) ? gateway->config.cluster_advertise_http : "";
    char location[512];
    snprintf(location, sizeof location, "%s/whip/resource/%s", base ? base : "", record->id);
    moat_http_response_header(response, "Location", location);
    moat_http_response_header(response, "ETag", record->etag);
    moat_http_response_header(response, "Accept-Patch", "application/trickle-ice-sdpfrag");
    /* TURN credentials of this session alone (RFC 9725 section 4.6). */
    char turn_user[33];
    moat_turn_new_user(turn_user);
    char *link = moat_ice_servers_link_header(&gateway->config, turn_user,
                                              g_get_real_time() / G_USEC_PER_SEC);
    if (link)
        moat_http_response_header(response, "Link", link);
    g_free(link);
    moat_http_response_set(response, 201, "application/sdp", created.answer,
                           strlen(created.answer));
    response->start_session = created.session;
    response->start_worker = record->worker;
}

/* One entity tag of an If-Match list matches `etag` by strong comparison
 * (RFC 9110 section 13.1.1); "*" matches any current representation. */
static bool if_match_matches(const char *if_match, const char *etag)
{
    bool matched = false;
    char **tags = g_strsplit(if_match, ",", -1);
    for (char **tag = tags; *tag && !matched; tag++) {
        const char *value = g_strstrip(*tag);
        matched = strcmp(value, "*") == 0 || strcmp(value, etag) == 0;
    }
    g_strfreev(tags);
    return matched;
}

static void handle_patch(moat_gateway *gateway, const moat_http_request *request,
                         moat_http_response *response, moat_session_record *record)
{
    if (!moat_http_request_content_type_is(request, "application/trickle-ice-sdpfrag")) {
        moat_http_response_error(response, 415, "unsupported_media_type",
                                 "PATCH bodies must be application/trickle-ice-sdpfrag");
        return;
    }
    const char *if_match = moat_http_request_header(request, "If-Match");
    if (if_match && !if_match_matches(if_match, record->etag)) {
        moat_http_response_error(response, 412, "etag_mismatch",
                                 "If-Match %s does not match the resource's ETag", if_match);
        return;
    }
    char error[256] = "";
    moat_sdp_fragment fragment;
    if (moat_sdp_fragment_parse(request->body ? request->body : "", request->body_length, &fragment,
                                error, sizeof error) != 0) {
        moat_http_response_error(response, 400, "bad_fragment", "%s", error);
        return;
    }
    bool new_ufrag = fragment.ice_ufrag[0] && strcmp(fragment.ice_ufrag, record->remote_ufrag) != 0;
    bool new_pwd = fragment.ice_pwd[0] && strcmp(fragment.ice_pwd, record->remote_pwd) != 0;
    bool restart = new_ufrag || new_pwd;
    /* RFC 8839 section 4.4.1.1: a restart changes both; half of one is
     * neither a trickle of this generation nor a restart. */
    if (restart && !(fragment.ice_ufrag[0] && fragment.ice_pwd[0])) {
        moat_http_response_error(response, 400, "incomplete_restart",
                                 "an ICE restart needs both a=ice-ufrag and a=ice-pwd");
        return;
    }
    if (!restart) {
        /* An ICE-lite agent learns the peer's addresses from its checks, so
         * trickled candidates need no action beyond being well-formed. */
        moat_http_response_set(response, 204, NULL, NULL, 0);
        return;
    }
    /* RFC 9725 section 4.3.2: an ICE restart carries If-Match. */
    if (!if_match) {
        moat_http_response_error(
            response, 428, "precondition_required",
            "an ICE restart must carry If-Match: \"*\" or the resource's ETag");
        return;
    }
    char *reply = moat_whip_session_restart(gateway, record, fragment.ice_ufrag, fragment.ice_pwd,
                                            error, sizeof error);
    if (!reply) {
        moat_http_response_error(response, 500, "restart_failed", "%s", error);
        return;
    }
    moat_http_response_header(response, "ETag", record->etag);
    moat_http_response_set(response, 200, "application/trickle-ice-sdpfrag", reply, strlen(reply));
}

void moat_whip_handle_resource(moat_gateway *gateway, const moat_http_request *request,
                               moat_http_response *response, const char *session_id)
{
    moat_session_record *record = moat_session_registry_find(gateway->sessions, session_id);
    /* An ingest, a call leg or a cascade leg is no WHIP resource, even to
     * whoever knows its id. */
    if (!record || !record->whip_resource) {
        moat_http_response_error(response, 404, "unknown_session", "no such WHIP resource");
        return;
    }
    if (strcmp(request->method, "PATCH") == 0) {
        handle_patch(gateway, request, response, record);
    } else if (strcmp(request->method, "DELETE") == 0) {
        moat_whip_session_hang_up(gateway, record);
        moat_http_response_set(response, 200, NULL, NULL, 0);
    } else {
        moat_http_response_not_allowed(response, "PATCH, DELETE",
                                       "a WHIP resource accepts PATCH and DELETE");
    }
}

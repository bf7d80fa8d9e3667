/* WHIP (RFC 9725) over HTTP: POST an offer to /whip/<plugin>, PATCH (trickle,
 * ICE restart) and DELETE the resource /whip/resource/<id>. Maps requests
 * onto whip_session.c and its results onto status codes; admission control
 * (rate per source, session caps) refuses offers before any work. Control
 * thread only. */
#ifndef MOAT_WHIP_API_H
#define MOAT_WHIP_API_H

#include "session/gateway_state.h"
#include "http/http_message.h"

/* Per-source offer rate: true when the request may go on, otherwise the
 * response is a 429 with Retry-After. Called before authentication so that
 * guessing tokens is rate-limited too. */
bool moat_whip_admit(moat_gateway *gateway, const moat_http_request *request,
                     moat_http_response *response);
/* The cap on live sessions ([limits] max_sessions): true when one more may
 * be created, otherwise the response is a 503 with Retry-After. Shared by
 * WHIP/WHEP offers and RTP ingest. */
bool moat_whip_admit_session_cap(moat_gateway *gateway, const moat_http_request *request,
                                 moat_http_response *response);
/* An offer to /<endpoint>/<plugin>[/<resource>]: endpoint "whip" or "whep"
 * (WHEP: the same exchange, the client receives). */
void moat_whip_handle_offer(moat_gateway *gateway, const moat_http_request *request,
                            moat_http_response *response, const char *endpoint,
                            const char *plugin_name, const char *resource);
void moat_whip_handle_resource(moat_gateway *gateway, const moat_http_request *request,
                               moat_http_response *response, const char *session_id);

/* A plugin's refusal to set up a session (plugin.h MOAT_PLUGIN_ERROR_*) as
 * the JSON answer: 404 not_found, 503 full, otherwise 503 session_refused.
 * Shared by WHIP/WHEP offers and RTP ingest. */
void moat_whip_reply_refused(moat_http_response *response, const char *error);

#endif

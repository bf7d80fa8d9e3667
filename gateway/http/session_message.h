/* POST /api/sessions/<id>/message: delivers a JSON object to the session's
 * plugin (moat_plugin.handle_message, called on the session's worker) and
 * answers with the plugin's reply: 200 and its JSON object (its status when
 * it is a refusal {"error": ..., "status": 4xx}), 204 when it
 * returned NULL, 400 for a body that is no JSON object, 404 when the session
 * is unknown or ended, 501 when its plugin takes no messages, 502 when the
 * plugin's reply is no JSON object. Control thread. */
#ifndef MOAT_SESSION_MESSAGE_H
#define MOAT_SESSION_MESSAGE_H

#include "session/gateway_state.h"
#include "http/http_message.h"
#include "session/session_registry.h"

#include <stdbool.h>
#include <stddef.h>

/* The session name of /api/sessions/<name>/message into `name` (`size`
 * bytes); false when `path` is not one. */
bool moat_session_message_path(const char *path, char *name, size_t size);
/* Sets a deferred reply on `response` (or an error). */
void moat_session_message_request(moat_gateway *gateway, const moat_http_request *request,
                                  moat_session_record *record, moat_http_response *response);

#endif

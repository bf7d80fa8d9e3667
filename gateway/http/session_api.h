/* The JSON API under /api/: list sessions, inspect one, live statistics,
 * plugins, message and record a session. Sessions are named by their public
 * label (a sequence number); WHIP resource ids are capabilities and appear
 * only when the caller proved it holds the API token (`privileged`). Acting
 * on a session (message, recording) takes its resource id or the token,
 * never the label (403). Recording replies name files relative to
 * [record] dir. Control thread only. */
#ifndef MOAT_SESSION_API_H
#define MOAT_SESSION_API_H

#include "session/gateway_state.h"
#include "http/http_message.h"

void moat_session_api_handle(moat_gateway *gateway, const moat_http_request *request,
                             moat_http_response *response, bool privileged);
/* POST/DELETE <api_path>/<resource>/recording of a plugin that names its
 * resources' publishers (moat_plugin.publisher_session, e.g. rooms): records
 * the current publisher's session, the file named
 * <plugin>-<resource>-<publisher>-<UTC start>.mkv. False when `path` is not
 * such a request. */
bool moat_session_api_plugin_recording(moat_gateway *gateway, const moat_plugin *plugin,
                                       const moat_http_request *request,
                                       moat_http_response *response, const char *path);

#endif

/* The HTTP API on libsoup-3: routes requests to WHIP, the JSON API, /metrics,
 * /healthz and the static demo pages; checks the bearer token. */
#ifndef MOAT_HTTP_SERVER_H
#define MOAT_HTTP_SERVER_H

#include "session/gateway_state.h"

#include <stddef.h>

moat_http_server *moat_http_server_start(moat_gateway *gateway, char *error, size_t error_size);
void moat_http_server_stop(moat_http_server *server);
/* Open API connections (http_listener.h); 0 for NULL. Control thread. */
size_t moat_http_server_connections(const moat_http_server *server);

#endif

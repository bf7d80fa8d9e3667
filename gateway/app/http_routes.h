/* The HTTP routes features answer, registered with the router by the app, so
 * that http/ includes no feature and no feature includes http/. Control
 * thread, at start-up, once the HTTP server started (moat_http_server_stop
 * drops them). */
#ifndef MOAT_HTTP_ROUTES_H
#define MOAT_HTTP_ROUTES_H

#include "session/gateway_state.h"

/* GET /api/calls (call/call_api.h). */
void moat_app_register_http_routes(moat_gateway *gateway);

#endif

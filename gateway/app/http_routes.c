/* Wires features' HTTP routes into the router (http_routes.h). */
#include "app/http_routes.h"

#include "call/call_api.h"
#include "http/http_router.h"

#include <string.h>

/* GET /api/calls: the calls Moat relays. */
static void serve_calls(void *user, const moat_http_request *request, moat_http_response *response)
{
    moat_gateway *gateway = user;
    char *body = moat_call_api_json(gateway->calls);
    moat_http_response_set(response, 200, "application/json", body, strlen(body));
}

void moat_app_register_http_routes(moat_gateway *gateway)
{
    moat_http_route_register(gateway, "GET", "/api/calls", serve_calls, gateway);
}

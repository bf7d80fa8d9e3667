/* The HTTP API's routing and policy, independent of the server library:
 * which handler answers a request (WHIP, the JSON API, /metrics, /healthz,
 * the static pages), the bearer tokens, CORS (WHIP open to every origin as
 * its RFC expects, /api/ only to configured origins and the page's own) and
 * the body limit. Control thread only. */
#ifndef MOAT_HTTP_ROUTER_H
#define MOAT_HTTP_ROUTER_H

#include "session/gateway_state.h"
#include "http/http_message.h"

/* A route a feature answers, registered by the app (app/http_routes.c) so
 * that the router includes no feature: exactly `method` and `path` under
 * /api/, after the router's policy (origin, token, body limit), before the
 * plugins' APIs and the session API. The handler fills `response`. */
typedef void (*moat_http_route_fn)(void *user, const moat_http_request *request,
                                   moat_http_response *response);
/* Before the first request; `method` and `path` are static strings. */
void moat_http_route_register(moat_gateway *gateway, const char *method, const char *path,
                              moat_http_route_fn handler, void *user);
/* The same for a route only other cluster nodes call (a cascade link): the
 * handler checks the caller's node credential itself, so the router does
 * not ask for this node's API token, which the other nodes need not share
 * (each node may have generated its own). Origin and body limit still
 * apply. */
void moat_http_node_route_register(moat_gateway *gateway, const char *method, const char *path,
                                   moat_http_route_fn handler, void *user);

/* A feature above this layer (cluster/) may answer a WHIP/WHEP offer for a
 * plugin's resource (a room: `resource` non-empty) itself: a redirect, an
 * error, or a deferred whole reply (response->deferred_reply), returning
 * true; false leaves the offer to this node. Called after the router's
 * policy (rate, tokens, body limit). One hook; before the first request. */
typedef bool (*moat_http_offer_hook_fn)(void *user, const moat_http_request *request,
                                        moat_http_response *response, const char *endpoint,
                                        const char *plugin, const char *resource);
void moat_http_offer_hook_set(moat_gateway *gateway, moat_http_offer_hook_fn hook, void *user);
/* The cluster's forward token (cluster.c; NULL or "": none): an offer that
 * carries it in X-Moat-Forwarded came through another node of the cluster,
 * which applied its own policy to the client and says who that is in
 * X-Forwarded-For. Before the first request, or from the control thread. */
void moat_http_forward_token_set(moat_gateway *gateway, const char *token);
/* The address an offer counts against (rate limit, pending caps, logs):
 * a forwarding node's client (above; an IP address), else the peer. Never
 * a privilege: only the peer's own address is. */
const char *moat_http_offer_source(const moat_gateway *gateway, const moat_http_request *request);
/* A feature above this layer (cluster/) may answer a request on a WHIP
 * resource path (/whip/resource/<rest>, PATCH or DELETE; `rest` may hold a
 * '/' when the feature made the Location) itself: an error or a deferred
 * whole reply, returning true; false leaves it to this node's sessions.
 * No token is asked (the resource URL is the capability). One hook; before
 * the first request. */
typedef bool (*moat_http_resource_hook_fn)(void *user, const moat_http_request *request,
                                           moat_http_response *response, const char *rest);
void moat_http_resource_hook_set(moat_gateway *gateway, moat_http_resource_hook_fn hook,
                                 void *user);
/* A feature above this layer (cluster/) may answer a plugin API request
 * (/api/rooms...) itself, a deferred whole reply from another node
 * (response->deferred_reply), returning true; false leaves it to this
 * node. Called after the router's policy (host, origin, token, body limit,
 * create rate). One hook; before the first request. */
typedef bool (*moat_http_api_hook_fn)(void *user, const moat_http_request *request,
                                      moat_http_response *response);
void moat_http_api_hook_set(moat_gateway *gateway, moat_http_api_hook_fn hook, void *user);
/* A plugin's JSON API answered on this node, the hook skipped (a request
 * another node forwarded here after its own policy): false when no plugin
 * serves `request->path`. */
bool moat_http_serve_plugin_api_local(moat_gateway *gateway, const moat_http_request *request,
                                      moat_http_response *response);
/* Appends a feature's Prometheus lines to /metrics. One hook. */
typedef void (*moat_http_metrics_hook_fn)(void *user, GString *out);
void moat_http_metrics_hook_set(moat_gateway *gateway, moat_http_metrics_hook_fn hook, void *user);
/* A feature's state for /healthz: a new JSON object (jansson's json_t,
 * passed as void * so this header names no JSON type) reported under
 * `name`, not judged (health.h). One hook. */
typedef void *(*moat_http_health_hook_fn)(void *user);
void moat_http_health_hook_set(moat_gateway *gateway, moat_http_health_hook_fn hook, void *user);

/* Fills `response` (status != 0 afterwards). A WHIP offer's response may
 * carry a session to start before the reply goes out (see http_message.h). */
void moat_http_route(moat_gateway *gateway, const moat_http_request *request,
                     moat_http_response *response);

/* Counts a refusal on /metrics and logs it, rate-limited. */
void moat_http_note_refusal(moat_gateway *gateway, moat_refusal_reason reason, const char *peer);
/* An info line per request-driven event, rate-limited so that a request flood
 * is never a log flood (suppressed lines are counted in the next one). */
void moat_http_log(moat_gateway *gateway, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* Admission state and the log limiter; before the first request. */
/* An event WebSocket upgrade (events.h) before it is accepted: the Host and
 * Origin checks of /api/ and the listener caps. False with the refusal in
 * `response` (421, 403, 429 or 503 JSON). */
bool moat_http_admit_events_upgrade(moat_gateway *gateway, const moat_http_request *request,
                                    moat_http_response *response);
void moat_http_router_init(moat_gateway *gateway);
void moat_http_router_clear(moat_gateway *gateway);

#endif

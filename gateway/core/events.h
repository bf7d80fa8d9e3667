/* Events pushed to WebSocket listeners: GET /api/events?topic=<topic> (a
 * WebSocket upgrade) receives every event published on that topic as one
 * JSON text message; a plugin's GET <api_path>/<resource>/events is the
 * same as topic "<api_path without /api/>/<resource>" (GET
 * /api/rooms/lobby/events: topic rooms/lobby). Plugins publish through
 * moat_gateway_calls.publish_event from any thread; delivery happens on the control thread. With
 * [http] token set, the upgrade must carry Authorization: Bearer <token>. */
#ifndef MOAT_EVENTS_H
#define MOAT_EVENTS_H

#include <libsoup/soup.h>
#include <stdbool.h>
#include <stddef.h>

/* Control thread: serve /api/events on `server` (token may be NULL or ""). */
void moat_events_start(SoupServer *server, const char *token);
/* Control thread: serve <prefix>/<resource>/events (prefix: a plugin's
 * api_path, "/api/..."). The prefix's plain requests must be routed by a
 * handler on the same path that leaves these upgrades alone
 * (moat_events_is_resource_upgrade). */
void moat_events_add_resource_path(SoupServer *server, const char *prefix);
/* Control thread: whether `message` is a WebSocket upgrade for a resource
 * path added above. */
bool moat_events_is_resource_upgrade(SoupServerMessage *message, const char *path);
/* The topic of <prefix>/<resource>/events into `topic` (`size` bytes);
 * false when `path` is not one (resource: one segment of printable ASCII). */
bool moat_events_resource_topic(const char *prefix, const char *path, char *topic, size_t size);
/* Control thread: close every listener. */
void moat_events_stop(void);
/* Any thread: queue `json` (a JSON object) for the topic's listeners. */
void moat_events_publish(const char *topic, const char *json);

#endif

/* Events pushed to WebSocket listeners: GET /api/events?topic=<topic> (a
 * WebSocket upgrade) receives every event published on that topic as one
 * JSON text message; a plugin's GET <api_path>/<resource>/events is the
 * same as topic "<api_path without /api/>/<resource>" (GET
 * /api/rooms/lobby/events: topic rooms/lobby). Plugins publish through
 * moat_gateway_calls.publish_event from any thread; delivery happens on the control thread. With
 * [http] token set, the upgrade must carry Authorization: Bearer <token>.
 *
 * Limits: an upgrade is checked like /api/ (Host and Origin, http_router.c)
 * before it is accepted; at most [http] max_event_listeners listeners at
 * once and [http] max_event_listeners_per_source from one IPv4 address or
 * IPv6 /64; a listener whose unsent events (its own queue plus what the
 * kernel has not delivered) would pass [http] event_queue_bytes is closed and
 * counted (moat_event_listeners_closed_total{reason="queue_full"}); one that
 * sends past a small budget or a refused frame is cut off
 * (event_socket.h; reason="sent_too_much" or "protocol"). */
#ifndef MOAT_EVENTS_H
#define MOAT_EVENTS_H

#include <libsoup/soup.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    size_t max_listeners;  /* 0: 256 */
    size_t max_per_source; /* 0: max_listeners */
    size_t queue_bytes;    /* 0: 1 MiB */
} moat_events_limits;

/* Control thread: serve /api/events on `server` (token may be NULL or ""). */
void moat_events_start(SoupServer *server, const char *token, const moat_events_limits *limits);

/* The GSocket of an upgrade's connection, set on its SoupServerMessage as
 * object data by the server's early handler (libsoup knows none for the
 * connections it was handed). */
#define MOAT_EVENTS_SOCKET_KEY "moat-events-socket"

typedef enum {
    MOAT_EVENTS_ADMITTED = 0,
    MOAT_EVENTS_FULL,
    MOAT_EVENTS_SOURCE_FULL,
} moat_events_verdict;

/* Control thread: whether one more listener from `peer` (an address as
 * text) fits under the caps. */
moat_events_verdict moat_events_admit(const char *peer);
/* Control thread: whether `message` is a WebSocket upgrade for events
 * (/api/events or a resource path added below). */
bool moat_events_is_upgrade(SoupServerMessage *message, const char *path);

/* What /metrics counts (moat_events_metrics). */
typedef enum {
    MOAT_EVENTS_REFUSED_FULL = 0,
    MOAT_EVENTS_REFUSED_SOURCE_FULL,
    MOAT_EVENTS_REFUSED_ORIGIN,
    MOAT_EVENTS_REFUSED_HOST,
    MOAT_EVENTS_CLOSED_QUEUE_FULL,
    MOAT_EVENTS_CLOSED_INBOUND,  /* it sent past its budget (event_socket.h) */
    MOAT_EVENTS_CLOSED_PROTOCOL, /* it sent a frame RFC 6455 or the limits refuse */
    MOAT_EVENTS_COUNT_KINDS
} moat_events_count;
/* Control thread. */
void moat_events_count_refusal(moat_events_count kind);
size_t moat_events_listeners(void);
void moat_events_metrics(GString *out);
/* Control thread: serve <prefix>/<resource>/events (prefix: a plugin's
 * api_path, "/api/..."). The prefix's plain requests must be routed by a
 * handler on the same path that leaves these upgrades alone
 * (moat_events_is_resource_upgrade). */
void moat_events_add_resource_path(SoupServer *server, const char *prefix);
/* Control thread: the handler of a resource path added above answers its
 * event upgrades with this (426, 400 or 101; then the listener). */
void moat_events_serve_resource_upgrade(SoupServerMessage *message, const char *path);
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
/* Any thread: the same for an event another node published (it is not
 * handed to the tap again). */
void moat_events_publish_relayed(const char *topic, const char *json);
/* Control thread: every event published on this node (not relayed ones) is
 * also handed to `tap` when it is delivered (cluster/: relayed to the other
 * nodes). NULL: none. One tap. */
typedef void (*moat_events_tap_fn)(void *user, const char *topic, const char *json);
void moat_events_set_tap(moat_events_tap_fn tap, void *user);

#endif

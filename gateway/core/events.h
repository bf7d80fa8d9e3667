/* Events pushed to WebSocket listeners: GET /api/events?topic=<topic> (a
 * WebSocket upgrade) receives every event published on that topic as one
 * JSON text message. Plugins publish through moat_gateway_calls.publish_event
 * from any thread; delivery happens on the control thread. With [http] token
 * set, the upgrade must carry Authorization: Bearer <token>. */
#ifndef MOAT_EVENTS_H
#define MOAT_EVENTS_H

#include <libsoup/soup.h>

/* Control thread: serve /api/events on `server` (token may be NULL or ""). */
void moat_events_start(SoupServer *server, const char *token);
/* Control thread: close every listener. */
void moat_events_stop(void);
/* Any thread: queue `json` (a JSON object) for the topic's listeners. */
void moat_events_publish(const char *topic, const char *json);

#endif

/* A client of Janus's HTTP API (the plain JSON protocol of Janus 1.x) on
 * libsoup's synchronous API: one Janus session, plugin handles attached to
 * it, messages with an optional JSEP, and the session's events read by long
 * polling. Enough to drive the videoroom plugin as a fan-out benchmark
 * needs (janus_videoroom.h). One thread uses a client. */
#ifndef JANUS_CLIENT_H
#define JANUS_CLIENT_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

typedef struct janus_client janus_client;

/* base_url: the API root, e.g. http://10.77.0.2:8088/janus. Creates the
 * Janus session. Each request ends within 35 s (a long poll's 30 s and
 * some), its reply read to 1 MiB, and at once when signals (the tool's
 * SIGINT/SIGTERM count, or NULL) changes (http_guard.h). NULL with a
 * message on failure. */
janus_client *janus_client_new(const char *base_url, const volatile sig_atomic_t *signals,
                               char *error, size_t error_size);
/* Destroys the Janus session (its handles go with it) and frees. */
void janus_client_free(janus_client *c);

/* Attaches a handle to plugin ("janus.plugin.videoroom"). */
int janus_client_attach(janus_client *c, const char *plugin, uint64_t *handle, char *error,
                        size_t error_size);

/* Sends body (stolen) to the handle's plugin, with a JSEP of jsep_type and
 * jsep_sdp when jsep_type is not NULL. On 0, *reply (may be NULL) holds the
 * synchronous reply ("success" with plugindata, or "ack"); -1 with a
 * message on a transport error or a Janus "error" reply. */
int janus_client_message(janus_client *c, uint64_t handle, json_t *body, const char *jsep_type,
                         const char *jsep_sdp, json_t **reply, char *error, size_t error_size);

/* Keeps the Janus session alive (it times out after 60 s without a
 * request by default). */
int janus_client_keepalive(janus_client *c, char *error, size_t error_size);

/* Long-polls the session's events until one from handle carries a JSEP
 * (returned in *event, a new reference) or reports a plugin error, within
 * timeout_s. Other events are dropped. */
int janus_client_wait_jsep(janus_client *c, uint64_t handle, double timeout_s, json_t **event,
                           char *error, size_t error_size);

#endif

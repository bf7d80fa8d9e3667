/* Transport-neutral WHIP session control on the control thread: create a
 * session from an offer (answer, plugin, registry record), start it on its
 * worker, restart its ICE, hang it up. Nothing here knows HTTP; whip_api.c
 * maps it onto requests and status codes. */
#ifndef MOAT_WHIP_SESSION_H
#define MOAT_WHIP_SESSION_H

#include "session/gateway_state.h"

#include <stddef.h>
#include <stdint.h>

typedef enum {
    MOAT_WHIP_SETUP_OK = 0,
    MOAT_WHIP_SETUP_BAD_OFFER, /* the offer does not parse or cannot be answered */
    MOAT_WHIP_SETUP_REFUSED,   /* the plugin (or a resource) refused the session */
} moat_whip_setup_result;

typedef struct {
    moat_session_record *record; /* already in the registry */
    moat_session *session;       /* not started: hand it to moat_whip_session_start */
    char *answer;                /* SDP, g_malloc'd */
} moat_whip_created;

/* endpoint ("whip", "whep") and resource (after the plugin name in the URL)
 * reach the plugin (placement, attach). */
moat_whip_setup_result moat_whip_session_create(moat_gateway *gateway, const moat_plugin *plugin,
                                                const char *endpoint, const char *resource,
                                                const char *offer, size_t length,
                                                moat_whip_created *out, char *error,
                                                size_t error_size);

/* moat_whip_session_create, the session counted in `source_pending` (the
 * offer's source's pending sessions, http_admission.h) until it connects. */
moat_whip_setup_result moat_whip_session_create_counted(moat_gateway *gateway,
                                                        const moat_plugin *plugin,
                                                        const char *endpoint, const char *resource,
                                                        const char *offer_text, size_t length,
                                                        int *source_pending, moat_whip_created *out,
                                                        char *error, size_t error_size);

/* What Moat already announced in an offer of its own (a call's WebRTC
 * leg that Moat offered): the session answers the party's SDP with these
 * ICE credentials (NULL: new ones) and per-m-line SSRCs instead of new
 * ones. cascade: the session is a cluster's cascade leg
 * (moat_session_info.cascade). */
typedef struct {
    const char *ufrag, *pwd; /* NULL: new ones */
    const uint32_t *ssrcs;
    size_t n_ssrcs;
    /* A cascade leg (moat_session_params.cascade, relay_layers). */
    bool cascade;
    size_t relay_layers;
} moat_whip_local;

/* moat_whip_session_create with `local` (NULL: new credentials and SSRCs). */
moat_whip_setup_result
moat_whip_session_create_local(moat_gateway *gateway, const moat_plugin *plugin,
                               const char *endpoint, const char *resource, const char *offer,
                               size_t length, const moat_whip_local *local, moat_whip_created *out,
                               char *error, size_t error_size);

/* Hands `session` to `worker`; `started(data)` runs on the control thread once
 * the worker has registered it (or dropped it, if the worker has stopped),
 * then `destroy(data)`. Both may be NULL. */
void moat_whip_session_start(moat_session *session, moat_worker *worker,
                             void (*started)(void *data), void *data, void (*destroy)(void *data));

/* ICE restart (RFC 9725 section 4.3.2): new local credentials for the record
 * and the worker. Returns the reply fragment (g_malloc'd) and commits the new
 * credentials and ETag, or returns NULL with a message and changes nothing. */
char *moat_whip_session_restart(moat_gateway *gateway, moat_session_record *record,
                                const char *remote_ufrag, const char *remote_pwd, char *error,
                                size_t error_size);

/* Ends the session and removes its record (the record is freed). */
void moat_whip_session_hang_up(moat_gateway *gateway, moat_session_record *record);

/* Worker-thread notification that a session ended; hops to the control thread. */
void moat_whip_session_ended(const char *session_id, const char *reason);
void moat_whip_bind_gateway(moat_gateway *gateway);

#endif

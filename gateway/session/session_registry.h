/* The control thread's view of sessions: which worker owns each one and the
 * WHIP resource state (ETag, ICE credentials) the HTTP API needs. The session
 * objects themselves belong to their workers. */
#ifndef MOAT_SESSION_REGISTRY_H
#define MOAT_SESSION_REGISTRY_H

#include "engine/worker.h"
#include "plugin.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char id[40];     /* the WHIP resource id: a capability, never published */
    uint64_t serial; /* public label for /metrics and /api (a sequence number) */
    char plugin[64];
    moat_worker *worker;
    char etag[48];
    char local_ufrag[64], local_pwd[64];
    char remote_ufrag[257], remote_pwd[257];
    char mids[16][32];
    size_t n_mids;
    uint64_t created_us;
    /* Made by a WHIP or WHEP offer: its resource URL (/whip/resource/<id>)
     * answers PATCH and DELETE. Ingests, call legs and cascade legs are
     * ended through their own APIs only. */
    bool whip_resource;
    /* A reference to the session's plugin handle (NULL: none), given back
     * with the record: its hang-up marks the handle ending at once, before
     * the worker ends the session. */
    moat_plugin_session *handle;
    /* RTP ingest (ingest_api.c): the plugin resource (room) it publishes to,
     * whose DELETE route alone ends it, and the source key it counts
     * against (http_admission.h). Empty for other sessions. */
    bool ingest;
    char ingest_resource[128];
    char ingest_source[48];
} moat_session_record;

typedef struct moat_session_registry moat_session_registry;

moat_session_registry *moat_session_registry_new(void);
void moat_session_registry_free(moat_session_registry *registry);
/* Takes ownership of `record` (g_malloc'd) and of its handle reference. */
void moat_session_registry_add(moat_session_registry *registry, moat_session_record *record);
moat_session_record *moat_session_registry_find(moat_session_registry *registry, const char *id);
/* Returns true when it was there (listed, or hung up and still ending). */
bool moat_session_registry_remove(moat_session_registry *registry, const char *id);
/* A hang-up the session's worker has yet to finish (a drain may keep the
 * session for up to a minute): the record is no longer found or listed,
 * but the session still counts until moat_session_registry_remove (its
 * end reported). Returns true when the record was listed. */
bool moat_session_registry_hang_up(moat_session_registry *registry, const char *id);
/* Listed records (sessions in use). */
size_t moat_session_registry_count(const moat_session_registry *registry);
/* Hung-up sessions still ending: with the listed ones, what the session
 * cap counts. */
size_t moat_session_registry_count_ending(const moat_session_registry *registry);
/* Calls fn for each record, in no particular order. */
void moat_session_registry_foreach(moat_session_registry *registry,
                                   void (*fn)(moat_session_record *record, void *user), void *user);
/* A fresh random identifier (hex, 32 chars). */
void moat_session_registry_new_id(char out[33]);

#endif

/* A session is one peer's bundled transport: ICE-lite checks, the DTLS
 * association, SRTP contexts, its RTP streams and the plugin it is attached
 * to. It is created on the control thread and, from moat_session_start on,
 * touched only by the worker that owns it. */
#ifndef MOAT_SESSION_H
#define MOAT_SESSION_H

#include "engine/session_port.h"
#include "engine/worker.h"
#include "plugin.h"
#include "prefilter/prefilter_settings.h"
#include "srtp/srtp_keying.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_session moat_session;
typedef struct moat_dtls_context moat_dtls_context;
/* The calls the worker makes into a session (receive, timers, end, tables,
 * description) are declared in engine/session_port.h. */

/* Called on the worker thread when a session ends for any reason. */
typedef void (*moat_session_ended_fn)(const char *session_id, const char *reason);

typedef struct {
    const char *id;
    moat_worker *worker;
    moat_dtls_context *dtls_context;
    const void *negotiation; /* const moat_sdp_negotiation *; copied */
    const char *local_ufrag;
    const char *local_pwd;
    const moat_plugin *plugin;
    uint32_t consent_timeout_s;
    /* The most playout delay asked of a lossy viewer (session_playout.c);
     * 0: never asked. */
    uint32_t lossy_playout_delay_max_ms;
    /* A session with no valid ICE check this long after its start ends
     * ("ice timeout"); 0 = only the DTLS setup timeout applies. */
    uint32_t pending_timeout_s;
    /* Sessions not yet ICE-connected (atomic, may be NULL): the session adds
     * itself when created and leaves once a check selects a pair or it goes. */
    int *pending_counter;
    /* The same count for the offer's source (may be NULL), for the
     * per-source cap on pending sessions (http_admission.h). */
    int *source_pending_counter;
    /* The public label (/api, /metrics); log lines name the session by it,
     * never by `id`, which is a capability. */
    uint64_t serial;
    const moat_prefilter_settings *prefilter; /* outlives the session */
    moat_session_ended_fn on_ended;
    const char *endpoint; /* plugin API v2 moat_session_info; NULL: "whip" */
    const char *resource; /* NULL: "" */
    /* A cascade leg (session_cascade.h): the plugin is told
     * (moat_session_info.cascade), and each video m-line the peer receives
     * gets `relay_layers` more outgoing SSRCs, one per simulcast layer of
     * its source (moat_media_info.local_layer_ssrcs; at most 3). */
    bool cascade;
    size_t relay_layers;
} moat_session_params;

/* Control thread. Attaches the plugin; NULL with a message on failure. */
moat_session *moat_session_new(const moat_session_params *params, char *error, size_t error_size);
/* Worker thread: registers the session in the worker's tables. */
void moat_session_start(moat_session *session);
/* The handle the plugin was given (session_handle.h); for in-process
 * harnesses that call the plugin API as the plugin would. */
moat_plugin_session *moat_session_plugin_handle(moat_session *session);

void moat_session_restart_ice(moat_session *session, const char *local_ufrag, const char *local_pwd,
                              const char *remote_ufrag, const char *remote_pwd);
/* Worker thread. For benchmarks that measure the packet path without ICE
 * and DTLS, and for cascade legs (session_cascade.c): make `path` the
 * selected pair and install SRTP keys as a finished DTLS handshake would.
 * A cascade leg binds its routes on the tuple first, taking it from an
 * ordinary session that holds it; when a route is another leg's it binds
 * nothing, installs nothing and ends ("cascade routes refused",
 * moat_cascade_legs_unrouted_total). */
void moat_session_bypass_handshake(moat_session *session, const moat_path *path,
                                   const void *keys /* const moat_srtp_keying * */);
/* Plain RTP ingest (session_plain.c). Control thread, before the session
 * starts: the session takes `fd` (a bound, non-blocking UDP socket), marks
 * its port as one of Moat's own until it closes it (the worker's
 * own_sockets.h: no call leg may aim there, and nothing sent from a port
 * Moat holds on this host is taken: dropped as "loop") and
 * receives plain RTP on it instead of ICE/DTLS/SRTP; `source` (NULL: none)
 * restricts the sender's address, otherwise the first
 * sender is latched. Without a valid RTP packet for `idle_timeout_s`
 * (0: never) the session ends ("ingest idle") and its socket closes. */
void moat_session_set_plain(moat_session *session, int fd, const struct sockaddr_in6 *source,
                            uint32_t idle_timeout_s);
/* Control thread, after moat_session_set_plain and before the session
 * starts: the ingest receives SRTP with these keys (remote: the sender's;
 * copied), through the same prefilter stages and srtp_unprotect as a
 * WebRTC publisher; only an authenticated packet latches the sender, and
 * only authenticated ones keep the ingest from its idle timeout. */
void moat_session_set_plain_keys(moat_session *session, const moat_srtp_keying *keys);
/* Wipes and frees keys set but never installed (the session never started). */
void moat_session_plain_clear_keys(moat_session *session);
/* Worker thread: registers / unregisters (unmarks) and closes the socket. */
void moat_session_plain_start(moat_session *session);
void moat_session_plain_stop(moat_session *session);
/* Worker thread: one datagram of `length` bytes (its real length: more than
 * capacity - 64 means it was truncated) from `from` on the plain socket, as
 * the receive loop hands it on; `data` has `capacity` bytes of room. */
void moat_session_plain_handle(moat_session *session, const struct sockaddr_in6 *from,
                               uint8_t *data, size_t length, size_t capacity);

#endif

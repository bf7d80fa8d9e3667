/* A live session in-process, for tests and fuzz targets: a media worker that
 * is never started (the calling thread plays its thread), one session on it
 * keyed with known SRTP keys (or through a real DTLS handshake), and a
 * loopback UDP socket playing the peer, which receives what the gateway
 * sends. Nothing here is shared between harnesses. */
#ifndef MOAT_SESSION_HARNESS_H
#define MOAT_SESSION_HARNESS_H

#include "session/session.h"
#include "engine/worker.h"
#include "engine/counters.h"
#include "dtls/dtls_transport.h"
#include "ice/ice_client.h"
#include "prefilter/prefilter_settings.h"
#include "sdp/sdp.h"
#include "srtp/srtp_session.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HARNESS_REMOTE_SSRC 0x11223344u                /* what the peer sends */
#define HARNESS_LOCAL_SSRC  0x55667788u                /* what the gateway sends */
#define HARNESS_GATEWAY_PWD "gatewaypasswordgatewaypa" /* the session's ICE password */

typedef struct {
    moat_worker *worker;
    moat_prefilter_settings settings;
    moat_sdp_negotiation negotiation;
    moat_session *session;
    int peer_fd;
    moat_path path;               /* the peer as the gateway sees it */
    moat_srtp_keying keys;        /* the gateway's side */
    moat_srtp_session *peer_srtp; /* the peer's side: protects what it sends */
    moat_srtp_session *peer_rx;   /* the peer's side: unprotects what it gets */
    bool ended;
    char ended_reason[64];
    /* Set before session_harness_create (session_harness_init gives the
     * defaults: "harness", "gwufrag1", the counting plugin, "whip", ""). */
    char id[32];
    char local_ufrag[32];
    const moat_plugin *plugin;
    const char *endpoint;
    const char *resource;
    bool owns_worker;
    int plain_fd; /* a plain RTP ingest session's socket (session_harness_create_plain), or -1 */
} session_harness;

/* Worker, peer socket, a one-video-m-line negotiation (the peer sends
 * HARNESS_REMOTE_SSRC and receives HARNESS_LOCAL_SSRC) and default prefilter
 * settings; edit h->negotiation before session_harness_create. */
void session_harness_init(session_harness *h);
/* The same on a worker made by another harness (or by the caller), which
 * this harness never frees; give each session on it its own h->id. */
void session_harness_init_on(session_harness *h, moat_worker *worker);
/* Creates the session (attached to a plugin that counts what it receives)
 * and starts it on the worker. dtls_context may be NULL. */
void session_harness_create(session_harness *h, void *dtls_context);
/* Creates a plain RTP ingest session instead (moat_session_set_plain on a
 * loopback socket, h->plain_fd; latched to the first sender unless
 * `source`), as POST .../ingest does, and starts it on the worker. */
void session_harness_create_plain(session_harness *h, const struct sockaddr_in6 *source);
/* The same for an SRTP ingest (moat_session_set_plain_keys, as "srtp" in
 * the request does): random keys, the peer's sessions protect with them. */
void session_harness_create_plain_srtp(session_harness *h, const struct sockaddr_in6 *source);
/* Creates the session as a cascade leg towards h->path (random keys,
 * consent 3 s) routing the peer SSRCs `ssrcs` (n; none: it owns the tuple)
 * and runs its start on the worker (moat_session_start_cascade). */
void session_harness_create_cascade(session_harness *h, const uint32_t *ssrcs, size_t n);
/* Random SRTP keys installed as a finished handshake would. */
void session_harness_key(session_harness *h);
/* Sends through the gateway's worker batch now. */
void session_harness_flush(session_harness *h);
/* Reads everything the peer socket holds; returns the bytes, *datagrams
 * (optional) the count. */
size_t session_harness_drain_peer(session_harness *h, size_t *datagrams);
/* A plaintext RTP packet the gateway sends on HARNESS_LOCAL_SSRC, as a
 * plugin would. */
int session_harness_gateway_send_rtp(session_harness *h, uint16_t sequence, size_t payload);
/* Protects an RTCP compound with the peer's keys into `out` (capacity
 * `capacity`) and returns its length. */
size_t session_harness_peer_protect_rtcp(session_harness *h, const uint8_t *plain, size_t length,
                                         uint8_t *out, size_t capacity);
/* An SRTP datagram from the peer's tuple on HARNESS_REMOTE_SSRC with
 * `payload` bytes (at most 1400) through the worker's receive path at
 * `now`; `forged` breaks its auth tag. */
void session_harness_dispatch_srtp(session_harness *h, uint16_t sequence, size_t payload,
                                   uint64_t now, bool forged);
/* One round of a DTLS peer against the session: the peer's datagrams queued
 * in `outbox` (GBytes, taken) into the session as the worker's dispatch
 * would, then the gateway's replies from the peer socket into `client`. */
void session_harness_exchange_dtls(session_harness *h, moat_dtls_transport *client, GQueue *outbox);
/* session_harness_create at 1 s on the worker's clock, keyed, with the
 * peer's tuple selected by a nominating ICE check (ufrag "gwufrag1",
 * password HARNESS_GATEWAY_PWD). */
void session_harness_create_selected(session_harness *h);
/* Ends the session if still there and frees everything. */
void session_harness_clear(session_harness *h);
/* The on_ended callback's last reason (session id is per harness). */
const char *session_harness_last_end(void);
/* The worker's drops of `reason` so far. */
uint64_t session_harness_dropped(session_harness *h, moat_drop_reason reason);
/* An ICE agent for the peer (ufrag "peerufrag") checking the gateway's
 * credentials. */
moat_ice_client *session_harness_ice_peer(const char *gateway_ufrag, const char *gateway_pwd);
/* One Binding request of `client` (nominating or not) into the worker as
 * if it came from `from`. */
void session_harness_send_check(session_harness *h, moat_ice_client *client, const moat_path *from,
                                bool nominate);

#endif

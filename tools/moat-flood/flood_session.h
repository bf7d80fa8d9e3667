/* One legitimate WHIP session: its UDP socket, the WHIP resource, ICE as the
 * controlling agent (ice/ice_client.h), DTLS (dtls/dtls_transport.h), SRTP
 * (srtp/srtp_session.h) with SRTP+ tags when the answer accepted them, its
 * media source and echo measurements. The media loop (main thread) owns it;
 * the attack thread only reads the fields under "for the attack thread",
 * fixed once the session is connected, and the atomic sequence number. */
#ifndef FLOOD_SESSION_H
#define FLOOD_SESSION_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture_ring.h"
#include "dtls/dtls_transport.h"
#include "echo_stats.h"
#include "flood_options.h"
#include "ice/ice_client.h"
#include "ice/ice_credentials.h"
#include "rtp_source.h"
#include "sdp/sdp_types.h"
#include "srtp/srtp_session.h"
#include "srtpplus.h"
#include "timeline.h"
#include "whip_client.h"

#define FLOOD_SESSION_MAX_REMOTES 8
/* Room for a packet and everything SRTP and SRTP+ add to it. */
#define FLOOD_PACKET_CAPACITY 1500

typedef enum {
    FLOOD_SESSION_NEW,
    FLOOD_SESSION_CHECKING, /* ICE checks in flight */
    FLOOD_SESSION_DTLS,     /* pair selected, handshake running */
    FLOOD_SESSION_CONNECTED,
    FLOOD_SESSION_FAILED,
} flood_session_state;

/* The fan-out role of a session (sfu_peer.h); NULL for echo sessions. */
typedef struct sfu_peer sfu_peer;

/* How an offer reaches the endpoint and its answer comes back, when not a
 * WHIP POST to options->whip_url (the Janus videoroom, janus_client.h).
 * Returns 0 with *answer (g_malloc'd) and, optionally, *resource_url; -1
 * with a message. */
typedef int (*flood_offer_exchange)(void *user, const char *offer, char **answer,
                                    char **resource_url, char *error, size_t error_size);

/* What every session shares: configuration, the DTLS identity and the HTTP
 * client, and the time series echoes are filed in. */
typedef struct {
    const flood_options *options;
    moat_dtls_context *dtls_context;
    const char *fingerprint; /* our certificate's sha-256 */
    whip_client *http;
    timeline *timeline; /* NULL until the run starts */
    /* The sessions' local address; NULL: any. */
    const struct sockaddr_in6 *bind_local;
    /* Where offers go: url (NULL: options->whip_url), or exchange when set. */
    const char *url;
    flood_offer_exchange exchange;
    void *exchange_user;
    /* 0, or when the run's setup ends (flood_now_us): no WHIP POST, nor
     * its Retry-After waits, runs past it (whip_client.h). */
    uint64_t setup_deadline_us;
} flood_session_env;

typedef struct {
    unsigned index;
    flood_session_state state;
    char error[256];
    const flood_session_env *env;

    int fd;                    /* dual-stack UDP socket, non-blocking */
    struct sockaddr_in6 local; /* the host candidate we announced */
    struct sockaddr_in6 remotes[FLOOD_SESSION_MAX_REMOTES]; /* the answer's UDP candidates */
    uint32_t remote_priorities[FLOOD_SESSION_MAX_REMOTES];
    size_t n_remotes;
    char *resource_url; /* WHIP resource, DELETEd at the end */
    uint64_t started_us;

    /* ICE */
    char local_ufrag[MOAT_ICE_UFRAG_LENGTH + 1], local_pwd[MOAT_ICE_PWD_LENGTH + 1];
    char remote_ufrag[MOAT_SDP_ICE_CREDENTIAL_MAX + 1], remote_pwd[MOAT_SDP_ICE_CREDENTIAL_MAX + 1];
    moat_ice_client *ice;
    uint64_t next_check_us, next_consent_us;
    uint64_t consent_responses;
    /* Regular nomination (RFC 8445 §8.1.1): every pair is checked, then the
     * highest-priority pair that answered is nominated. */
    bool answered[FLOOD_SESSION_MAX_REMOTES];
    uint64_t checks_started_us; /* 0 until the first check is sent */
    uint64_t first_answer_us;   /* 0 until a check succeeds */
    int nominated;              /* index in remotes, -1 before nomination */
    /* The latest nominating requests: only their answers complete a nomination. */
    uint8_t nomination_ids[8][MOAT_ICE_CLIENT_TRANSACTION_ID_LENGTH];
    size_t next_nomination_id;
    /* Address migration: after flood_session_migrate, nominated checks on the
     * selected pair until one is answered from the new socket. */
    bool migrating;
    uint64_t migrations;
    uint64_t received_at_migration; /* echo.received when the last migration began */

    /* DTLS and SRTP */
    moat_dtls_role dtls_role;
    char remote_fingerprint_alg[16], remote_fingerprint[160];
    moat_dtls_transport *dtls;
    moat_srtp_session *srtp;
    moat_srtp_profile profile;
    bool srtpplus_negotiated;
    moat_sdp_srtpplus srtpplus_scheme;
    struct srtpplus_sender *srtpplus;

    /* Media */
    rtp_source source;
    echo_stats echo;
    bool sending; /* between the start and the end of the run */
    uint64_t next_report_us;
    uint64_t octets_sent;
    uint64_t send_errors;
    uint64_t rtcp_sent;
    uint64_t reception_reports; /* report blocks on the echoed stream sent in our SRs */

    /* For the attack thread */
    struct sockaddr_in6 remote;    /* the selected gateway address */
    struct sockaddr_in6 reflexive; /* our address as the gateway saw it */
    uint32_t ssrc;
    uint8_t payload_type;
    size_t srtp_tag_length;      /* what srtp_protect adds to RTP */
    size_t srtcp_trailer_length; /* what srtp_protect_rtcp adds to RTCP */
    size_t typical_length;       /* a legitimate SRTP packet's size */
    _Atomic uint32_t next_sequence;
    capture_ring *capture; /* NULL unless the replay attack runs */

    /* Set by the caller after flood_session_init and before
     * flood_session_open (which keeps it); NULL for echo sessions */
    sfu_peer *sfu;
} flood_session;

#endif

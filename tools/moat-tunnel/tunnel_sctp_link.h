/* The state of moat-tunnel's link through the gateway (tunnel_sctp.c: DTLS,
 * SCTP and the loop; tunnel_whip.c: the WHIP session, the UDP socket and
 * ICE), private to those two files. The link is one or more lanes
 * (sctp_link: a WHIP session, its ICE path, DTLS and SCTP association)
 * under one sctp_tunnel that reads the TUN device and picks each packet's
 * lane (tunnel_lane.h). One thread (the tunnel's poll loop) owns it all. */
#ifndef TUNNEL_SCTP_LINK_H
#define TUNNEL_SCTP_LINK_H

#include "tunnel_flows.h"
#include "tunnel_lane.h"
#include "tunnel_run.h"
#include "tunnel_udp_batch.h"

#include "dtls/dtls_context.h"
#include "dtls/dtls_transport.h"
#include "ice/ice_client.h"
#include "ice/ice_credentials.h"
#include "sctp/sctp_association.h"
#include "sdp/sdp.h"
#include "whip_client.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_REMOTES 8

typedef enum { LINK_CHECKING, LINK_DTLS, LINK_UP, LINK_ENDED } link_state;

typedef struct sctp_tunnel sctp_tunnel;

typedef struct {
    tunnel_run *run;
    sctp_tunnel *tunnel;
    unsigned lane;     /* its index in the tunnel */
    char *url;         /* the WHIP URL this lane POSTs to */
    bool opened;       /* its offer was POSTed (lanes open one after another) */
    whip_client *http; /* the tunnel's */
    moat_dtls_context *dtls_context;
    int fd;
    struct sockaddr_in6 local;
    struct sockaddr_in6 remotes[MAX_REMOTES];
    size_t n_remotes;
    int selected; /* index in remotes, -1 before ICE picked one */
    int nominee;  /* the pair being nominated, -1 none */
    char *resource_url;
    char local_ufrag[MOAT_ICE_UFRAG_LENGTH + 1], local_pwd[MOAT_ICE_PWD_LENGTH + 1];
    char remote_ufrag[MOAT_SDP_ICE_CREDENTIAL_MAX + 1], remote_pwd[MOAT_SDP_ICE_CREDENTIAL_MAX + 1];
    moat_ice_client *ice;
    /* The latest nominating requests (a check goes out every 50 ms, more
     * often than a long path answers): only their answers nominate. */
    uint8_t nomination_ids[8][MOAT_ICE_CLIENT_TRANSACTION_ID_LENGTH];
    size_t next_nomination_id;
    bool migrating;          /* after an ICE restart: nominating from the new socket */
    bool recovering;         /* the path was lost: until an ICE restart completes */
    unsigned restarts_tried; /* in a row, since the path last answered */
    double next_restart_s;
    link_state state;
    moat_dtls_role role;
    char fingerprint_alg[16], fingerprint[160];
    uint16_t sctp_port;
    uint32_t max_message_size;
    moat_dtls_transport *dtls;
    moat_sctp_association *sctp;
    uint16_t stream_id;
    bool blocked;                         /* the SCTP send buffer is full: the TUN device waits */
    uint8_t pending[TUNNEL_MAX_MTU + 64]; /* the packet the send buffer refused */
    size_t pending_length;                /* 0: none */
    double next_check_s, last_answer_s, setup_deadline_s;
    bool failed;
    /* Datagrams sent while the loop handles a wake-up wait here and leave
     * together before it polls again (batching true meanwhile); outside
     * that (setup, hang-up) each leaves at once. */
    tunnel_udp_batch *batch;
    bool batching;
    tunnel_udp_reads *reads; /* the tunnel's */
    bool trace;              /* MOAT_TUNNEL_TRACE */
} sctp_link;

struct sctp_tunnel {
    tunnel_run *run;
    sctp_link lanes[TUNNEL_MAX_LANES];
    unsigned n_lanes;
    unsigned n_opened;  /* lanes 0 .. n_opened - 1 have POSTed their offers */
    unsigned n_up;      /* lanes whose association is up */
    double last_tick_s; /* the SCTP stack's timers (one stack for all lanes) */
    tunnel_flows flows; /* the lane of each flow we send */
};

/* tunnel_sctp.c */
/* Ends the run with a failure (what says why). */
void tunnel_link_fail(sctp_link *l, const char *what);
/* ICE nominated a pair: the DTLS handshake starts. */
void tunnel_link_start_dtls(sctp_link *l);

/* tunnel_whip.c */
/* The UDP socket, the offer POSTed to the WHIP URL and its answer taken:
 * ICE checks may start. 0, or -1 after tunnel_link_fail. */
int tunnel_whip_open(sctp_link *l);
void tunnel_link_send_to(sctp_link *l, const uint8_t *data, size_t length,
                         const struct sockaddr_in6 *to);
/* Connectivity checks, nomination and consent (keepalive), when due. */
void tunnel_ice_tick(sctp_link *l, double now);
/* The index in l->remotes of from, or -1: only the gateway speaks to us. */
int tunnel_ice_remote_index(const sctp_link *l, const struct sockaddr_in6 *from);
/* A STUN message from the gateway's candidate `from`. */
void tunnel_ice_on_stun(sctp_link *l, const uint8_t *data, size_t length,
                        const struct sockaddr_in6 *from, double now);
/* The path stopped answering: new credentials PATCHed to the resource and
 * checks from a new socket. 0, or -1 (tried again later). */
int tunnel_ice_restart(sctp_link *l, double now);

#endif

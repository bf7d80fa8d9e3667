/* Sets calls up and tears them down over ng, many commands in flight at
 * once on one UDP socket; a lost datagram is retransmitted unchanged (same
 * cookie), as Kamailio's module does. Owns nothing but its socket. */
#ifndef NG_CALLS_H
#define NG_CALLS_H

#include "voip_load.h"

#include <netinet/in.h>
#include <stdint.h>

typedef struct {
    int fd;
    struct sockaddr_in server;
    const char *run;      /* cookie and call-id prefix, unique per run */
    uint16_t media_port;  /* where every side of every call receives RTP */
    unsigned window;      /* commands in flight at most */
    uint64_t timeout_ns;  /* before a retransmission */
    unsigned tries;       /* transmissions of one command at most */
    uint64_t deadline_ns; /* the whole phase gives up then */
} ng_link;

typedef struct {
    unsigned ok, failed, retransmitted;
    double seconds;
    char first_error[160];
} ng_phase;

/* Opens the link's socket; 0 on success. */
int ng_link_open(ng_link *link);
void ng_link_close(ng_link *link);

/* Offers and answers calls[0..n): each ends READY or FAILED. */
void ng_setup_calls(ng_link *link, voip_call *calls, unsigned n, ng_phase *out);

/* Deletes every call that reached the relay (delete-delay 0). */
void ng_delete_calls(ng_link *link, voip_call *calls, unsigned n, ng_phase *out);

#endif

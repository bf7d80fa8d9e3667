/* The pure parts of a cascade link (a room spanning nodes, README.md here):
 * the link request an edge node sends the room's owner over HTTP (which
 * room, where the edge receives, the SRTP master keys of both directions),
 * its JSON both ways, the synthetic offers that describe the link's two
 * sessions to the ordinary session setup, and the edge's decision for a
 * link each poll. No I/O; unit-tested and fuzzed (the request comes from
 * the network). */
#ifndef MOAT_CASCADE_LINK_H
#define MOAT_CASCADE_LINK_H

#include "cluster/cluster_keys.h"

#include <jansson.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SRTP_AEAD_AES_128_GCM (RFC 7714): master key and salt of one direction. */
#define MOAT_CASCADE_KEY_LENGTH  16
#define MOAT_CASCADE_SALT_LENGTH 12
#define MOAT_CASCADE_KEYING      (MOAT_CASCADE_KEY_LENGTH + MOAT_CASCADE_SALT_LENGTH)
/* Payload types both synthetic offers use (so what one end sends is what
 * the other expects). */
#define MOAT_CASCADE_PT_OPUS 111
#define MOAT_CASCADE_PT_VP8  96
#define MOAT_CASCADE_PT_RTX  97
/* Simulcast over a link: the owner's leg sends layer l of its source
 * (in the publisher's a=simulcast order) on its own SSRC, answered as
 * "layer_ssrcs"; the edge's leg declares them as rids s0, s1, s2 (its
 * offer's a=simulcast:send), so the edge's copy of the room has a
 * simulcast publisher whose layers are named by position. */
#define MOAT_CASCADE_LINK_LAYERS   3
#define MOAT_CASCADE_RID_EXTENSION 4
extern const char *const moat_cascade_layer_rids[MOAT_CASCADE_LINK_LAYERS];
/* The request body is refused above this size. */
#define MOAT_CASCADE_REQUEST_MAX 2048

typedef struct {
    char plugin[MOAT_CLUSTER_NAME_MAX];
    char room[MOAT_CLUSTER_NAME_MAX];
    char edge[MOAT_CLUSTER_NAME_MAX];      /* the edge's node id */
    char media[128];                       /* the edge's media address (IPv4 or IPv6 text) */
    uint16_t port;                         /* its worker's port */
    uint8_t to_edge[MOAT_CASCADE_KEYING];  /* owner -> edge: key || salt */
    uint8_t to_owner[MOAT_CASCADE_KEYING]; /* edge -> owner */
    uint32_t ssrc; /* what the edge's leg sends from (its RTCP); 0: not said */
} moat_cascade_request;

/* The request as JSON (g_malloc'd); keys in base64. */
char *moat_cascade_request_to_json(const moat_cascade_request *request);
/* Parses a request from the network: a JSON object of at most
 * MOAT_CASCADE_REQUEST_MAX bytes whose names are valid, media an IP
 * address, port 1..65535 and keys exactly MOAT_CASCADE_KEYING bytes;
 * "ssrc" optional (1..2^32-1; absent: 0).
 * False with a reason otherwise. */
bool moat_cascade_request_parse(const char *body, size_t length, moat_cascade_request *out,
                                char *why, size_t why_size);

/* An IP address (v4 as v4-mapped) and port; false when `text` is none. */
bool moat_cascade_address(const char *text, uint16_t port, struct sockaddr_in6 *out);

/* The synthetic offer of a link session: `publisher` true for the edge's
 * side (sendonly: it publishes into the edge's room), false for the
 * owner's (recvonly: a subscriber of the owner's room). Opus and VP8 with
 * NACK, PLI, FIR and REMB; ICE and DTLS attributes are placeholders the
 * leg never uses. g_malloc'd. */
char *moat_cascade_offer(bool publisher);

/* "layer_ssrcs" of an owner's answer: up to `max` SSRCs, each 1..2^32-1;
 * how many (0 when absent or malformed: the link then carries no layers).
 * Its "rtx_ssrcs" too: [the plain video's RTX, then each layer's], read
 * the same way. */
size_t moat_cascade_layer_ssrcs_parse(const json_t *array, uint32_t *out, size_t max);

/* The first a=ssrc of each of the first two m-lines of an answer (the
 * owner's leg: audio, video), 0 where none. */
void moat_cascade_answer_ssrcs(const char *sdp, uint32_t ssrcs[2]);

/* What the edge does with a link at a poll. */
typedef enum {
    MOAT_CASCADE_KEEP,       /* subscribers left, or still connecting */
    MOAT_CASCADE_CLOSE_IDLE, /* the last edge subscriber left: close the link */
    MOAT_CASCADE_OWNER_LOST, /* the link session ended (the owner went quiet):
                                end the subscribers it fed */
} moat_cascade_action;

moat_cascade_action moat_cascade_link_decide(bool connecting, bool link_alive, size_t subscribers,
                                             size_t waiting);

#endif

/* The ng server's state, shared by ng_server.c (one datagram in, one reply
 * out) and ng_server_socket.c (the UDP socket on the main context). */
#ifndef MOAT_NG_SERVER_PRIVATE_H
#define MOAT_NG_SERVER_PRIVATE_H

#include "ng/ng_cookie_cache.h"
#include "ng/ng_server.h"

#include <stdint.h>

typedef enum {
    NG_ERROR_NO_COOKIE = 0,   /* no "<cookie> " prefix: dropped without reply */
    NG_ERROR_TOO_LARGE,       /* datagram over MOAT_NG_MAX_DATAGRAM */
    NG_ERROR_NOT_BENCODE,     /* malformed or truncated bencode */
    NG_ERROR_NOT_DICTIONARY,  /* a bencode value, but not a dictionary */
    NG_ERROR_BAD_REQUEST,     /* no command, or a key with a bad value */
    NG_ERROR_UNKNOWN_COMMAND, /* a command nobody handles */
    NG_ERROR_MISSING_KEY,     /* call-id, from-tag or sdp missing */
    NG_ERROR_HANDLER,         /* the handler answered "error" */
    NG_ERROR_SEND,            /* the reply could not be sent */
    NG_ERROR_OWN_SOURCE,      /* from one of Moat's own sockets: dropped without reply */
    NG_ERROR_REPLY_TOO_LARGE, /* the encoded reply over MOAT_NG_MAX_REPLY: an error instead */
    NG_ERROR_NOT_KEPT,        /* a retransmission whose reply the cache could not keep */
    NG_ERROR_COOKIE_TOO_LONG, /* a cookie over MOAT_NG_MAX_COOKIE: the command is not run */
    NG_ERROR_COUNT
} ng_error_reason;

#define NG_COMMAND_COUNT (MOAT_NG_LIST + 1)

struct moat_ng_server {
    moat_ng_handlers handlers;
    moat_ng_cookie_cache *cache;
    int fd; /* -1 when detached */
    GSource *source;
    uint8_t *buffer; /* MOAT_NG_MAX_DATAGRAM + 1 bytes */
    uint64_t requests[NG_COMMAND_COUNT];
    uint64_t errors[NG_ERROR_COUNT];
    uint64_t retransmissions;
};

#endif

/* The ng control socket: UDP datagrams "<cookie> <bencoded dict>", answered
 * "<cookie> <bencoded reply>". A repeated cookie (Kamailio retransmits the
 * identical datagram) gets the cached reply and the command does not run
 * twice. ping is answered here; everything else goes to the handlers (the
 * call layer, gateway/call/). Runs on the control thread's main context. */
#ifndef MOAT_NG_SERVER_H
#define MOAT_NG_SERVER_H

#include "ng/bencode.h"
#include "ng/ng_request.h"

#include <glib.h>
#include <stddef.h>
#include <sys/socket.h>

typedef struct moat_ng_server moat_ng_server;

/* Datagrams longer than this get an error reply ("message too large"). */
#define MOAT_NG_MAX_DATAGRAM 65535
/* The longest cookie whose command runs: its reply is cached under it, so
 * a retransmission gets the same reply and the command never runs twice
 * (Kamailio's cookies are ~30 bytes). A longer cookie gets the error
 * "cookie too long" and its command is not run ("cookie_too_long"); the
 * reply budget (MOAT_NG_MAX_REPLY_SDP) counts a cookie of this length. */
#define MOAT_NG_MAX_COOKIE 256
/* The longest reply (cookie included) one UDP datagram carries over IPv4:
 * a longer one could never be sent (EMSGSIZE), so it is replaced by an
 * error reply ("reply too large"), counted as reply_too_large. */
#define MOAT_NG_MAX_REPLY 65507
/* Reply cache: entries, their bytes (keys, replies and ~160 bytes each;
 * the oldest go first) and how long a reply is kept for retransmissions.
 * A reply over MOAT_NG_CACHE_BYTES / 64 is not kept (none is: replies end
 * at MOAT_NG_MAX_REPLY); its retransmission gets an error, not a second
 * run ("reply_not_kept"). */
#define MOAT_NG_CACHE_ENTRIES     4096
#define MOAT_NG_CACHE_BYTES       ((size_t)16 << 20)
#define MOAT_NG_CACHE_LIFETIME_US (30 * G_USEC_PER_SEC)

/* A handler fills `reply` (an empty dictionary) with "result" ("ok" or
 * "error"), "error-reason", "warning", "sdp" and whatever the command
 * returns; a reply left without "result" is sent as an error. The server
 * has already checked the keys the command requires (moat_ng_request_check:
 * call-id, and from-tag and sdp for offer/answer). Control thread. */
typedef void (*moat_ng_handler_fn)(void *context, const moat_ng_request *request,
                                   moat_bencode *reply);

/* Optional: true for a source that must never speak ng (one of Moat's own
 * media sockets, should media ever be relayed to the ng socket): the
 * datagram is dropped unanswered and counted. Control thread. */
typedef bool (*moat_ng_source_filter_fn)(void *context, const struct sockaddr *from,
                                         socklen_t from_length);

typedef struct {
    void *context;
    moat_ng_handler_fn offer;
    moat_ng_handler_fn answer;
    moat_ng_handler_fn delete_call;
    moat_ng_handler_fn query;
    moat_ng_handler_fn list;
    moat_ng_source_filter_fn refuse_source;
} moat_ng_handlers;

/* Binds bind:port (port 0: NULL without error, the protocol is off). NULL
 * with a message naming the address on failure. `handlers` is copied. */
moat_ng_server *moat_ng_server_start(const char *bind, int port, const moat_ng_handlers *handlers,
                                     char *error, size_t error_size);
void moat_ng_server_stop(moat_ng_server *server);

/* The whole exchange for one datagram, without I/O (for tests and fuzzing):
 * appends the reply datagram to `reply` (nothing for a datagram without a
 * cookie). */
void moat_ng_server_process(moat_ng_server *server, const uint8_t *datagram, size_t length,
                            GByteArray *reply);
/* The same for a datagram from `from` (cached replies are keyed by source
 * address and cookie; NULL: the cookie alone). */
void moat_ng_server_process_from(moat_ng_server *server, const uint8_t *datagram, size_t length,
                                 const struct sockaddr *from, socklen_t from_length,
                                 GByteArray *reply);
/* A server with no socket, for moat_ng_server_process. */
moat_ng_server *moat_ng_server_new_detached(const moat_ng_handlers *handlers);

/* /metrics: moat_ng_requests_total{command}, moat_ng_errors_total{reason},
 * moat_ng_retransmissions_total. NULL (ng off): every series at 0. */
void moat_ng_server_metrics(const moat_ng_server *server, GString *out);

#endif

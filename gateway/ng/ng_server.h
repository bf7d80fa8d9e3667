/* The ng control socket: UDP datagrams "<cookie> <bencoded dict>", answered
 * "<cookie> <bencoded reply>". A repeated cookie (Kamailio retransmits the
 * identical datagram) gets the cached reply and the command does not run
 * twice. ping is answered here; everything else goes to the handlers (the
 * call layer, gateway/call/). Runs on the control thread's main context. */
#ifndef MOAT_NG_SERVER_H
#define MOAT_NG_SERVER_H

#include "ng/bencode.h"
#include "ng/ng_request.h"

#include <stddef.h>

typedef struct moat_ng_server moat_ng_server;

/* A handler fills `reply` (an empty dictionary) with "result" ("ok" or
 * "error"), "error-reason", "warning", "sdp" and whatever the command
 * returns. Control thread. */
typedef void (*moat_ng_handler_fn)(void *context, const moat_ng_request *request,
                                   moat_bencode *reply);

typedef struct {
    void *context;
    moat_ng_handler_fn offer;
    moat_ng_handler_fn answer;
    moat_ng_handler_fn delete_call;
    moat_ng_handler_fn query;
    moat_ng_handler_fn list;
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
/* A server with no socket, for moat_ng_server_process. */
moat_ng_server *moat_ng_server_new_detached(const moat_ng_handlers *handlers);

#endif

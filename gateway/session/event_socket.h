/* A send-only WebSocket (RFC 6455, server side) over an upgraded HTTP
 * connection, for event listeners: text messages out, and of what the client
 * sends only what the protocol asks to be answered. libsoup's own WebSocket
 * connection (3.2) reads everything a client sends in one loop on the
 * control thread, keeps unfinished messages, inflates compressed ones and
 * queues a pong per ping, none of it bounded; this one reads at most
 * READ_CHUNK bytes per main-loop turn, keeps nothing (data frames are
 * skipped as they arrive, a ping gets its pong, a close is answered), and
 * ends a client that sends more than its budget. While earlier output is
 * still unsent, only the latest ping's pong waits (RFC 6455 §5.5.3), so a
 * client that pings and does not read holds at most one pong here. A close
 * frame with a 1-byte payload, a code no peer may send or a reason that is
 * not UTF-8, a continuation outside a message and a new message inside one
 * fail the connection with close 1002 (1007 for the reason); a text
 * message's UTF-8 is not checked (its frames are skipped unread).
 *
 * Control thread only (the default main context). The stream is owned from
 * moat_event_socket_new on; `ended` is called at most once, from the
 * socket's own main-loop sources, never from inside a call into it. */
#ifndef MOAT_EVENT_SOCKET_H
#define MOAT_EVENT_SOCKET_H

#include <gio/gio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_event_socket moat_event_socket;

typedef enum {
    MOAT_EVENT_SOCKET_PEER_CLOSED,   /* a close frame, or the connection ended */
    MOAT_EVENT_SOCKET_FAILED,        /* a read or write error */
    MOAT_EVENT_SOCKET_PROTOCOL,      /* a frame RFC 6455 or our limits refuse */
    MOAT_EVENT_SOCKET_SENT_TOO_MUCH, /* past inbound_burst + inbound_per_s */
} moat_event_socket_end;

typedef void (*moat_event_socket_ended_fn)(void *user, moat_event_socket_end why);

typedef struct {
    size_t inbound_burst; /* bytes a client may send at once */
    size_t inbound_per_s; /* and then per second since it opened */
    size_t max_frame;     /* the longest data frame it may send (skipped) */
} moat_event_socket_limits;

moat_event_socket *moat_event_socket_new(GIOStream *stream, const moat_event_socket_limits *limits,
                                         moat_event_socket_ended_fn ended, void *user);

/* Queues one text message and writes what the connection takes now. */
void moat_event_socket_send_text(moat_event_socket *s, const char *text);

/* Bytes queued here and not yet taken by the connection. */
size_t moat_event_socket_unsent(const moat_event_socket *s);

/* Sends a close frame (code, reason up to 123 bytes) and stops reading;
 * `ended` is not called for it. */
void moat_event_socket_close(moat_event_socket *s, uint16_t code, const char *reason);

/* Whether it still sends (not closed, not ended). */
bool moat_event_socket_open(const moat_event_socket *s);

/* Closes the connection (without a close frame when none was sent). */
void moat_event_socket_free(moat_event_socket *s);

#endif

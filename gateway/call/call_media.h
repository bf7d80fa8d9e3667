/* The media of a call: a stream is one m-line relayed between two legs, each
 * leg one RTP/RTCP port pair of Moat facing one SIP party. What leg 0
 * receives from its party leaves from leg 1's sockets towards leg 1's party,
 * and back. Both legs of a stream live on one worker (no ring, no copy: the
 * received buffer is the one sent).
 *
 * Threads: streams are created, configured and freed by the control thread,
 * which posts each change to the worker as a task (FIFO); the packet path
 * runs on the worker alone. Counters are single-writer atomics the control
 * thread may read until it frees the stream; after moat_call_stream_free the
 * control thread must not touch it (the worker frees it). */
#ifndef MOAT_CALL_MEDIA_H
#define MOAT_CALL_MEDIA_H

#include "call/call_learning.h"
#include "call/call_ports.h"
#include "engine/own_sockets.h"
#include "engine/worker.h"
#include "plugin.h"
#include "srtp/srtp_keying.h"
#include "srtp/srtp_session.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum {
    MOAT_CALL_DROP_MALFORMED = 0,  /* not RTP/RTCP version 2, too short */
    MOAT_CALL_DROP_TRUNCATED,      /* larger than the receive buffer */
    MOAT_CALL_DROP_SOURCE,         /* not from the latched (or, strict, the SDP) address */
    MOAT_CALL_DROP_NO_DESTINATION, /* the other party's address is not known yet */
    MOAT_CALL_DROP_SEND,           /* the kernel refused the datagram */
    MOAT_CALL_DROP_STOPPED,        /* the call was deleted (delete-delay 0) */
    MOAT_CALL_DROP_SRTP_AUTH,      /* SDES leg: srtp_unprotect refused it (forged, replayed) */
    MOAT_CALL_DROP_SRTP_PROTECT,   /* SDES leg: could not protect it for its party */
    MOAT_CALL_DROP_SRTP_INDEX,     /* SDES leg, before the HMAC: index outside the window */
    MOAT_CALL_DROP_SRTP_REPLAY,    /* SDES leg, before the HMAC: index already authenticated */
    MOAT_CALL_DROP_SRTP_SSRC,      /* SDES leg, before the HMAC: unknown SSRC over its allowance */
    MOAT_CALL_DROP_SRTP_BUDGET,    /* SDES leg, before the HMAC: unverifiable, over budget */
    MOAT_CALL_DROP_SRTP_TAG,       /* SDES leg with SRTP+, before the HMAC: wrong tag */
    MOAT_CALL_DROP_LOOP,           /* sent by one of Moat's own sockets (engine/own_sockets.h) */
    MOAT_CALL_DROP_TOO_BIG,        /* larger than the relay MTU (MOAT_RELAY_MTU) */
    MOAT_CALL_DROP_SOCKET_QUEUE,   /* the kernel's: the leg's receive queue was full */
    MOAT_CALL_DROP_REASON_COUNT
} moat_call_drop_reason;

const char *moat_call_drop_reason_name(moat_call_drop_reason reason);

/* One worker's share of the call layer: its counters and receive/send
 * scratch (no allocation per packet). Written by that worker only. */
typedef struct {
    uint64_t rtp_relayed;
    uint64_t rtcp_relayed;
    uint64_t bytes_relayed;
    /* Legs latched to another port of their SDP's IP that their exact SDP
     * address took over (call_learning.h): a stranger spoke first. */
    uint64_t moved_to_sdp_address;
    /* SDES legs' libsrtp streams removed (least recently used) to make room
     * for a new SSRC's (srtp_session.h: at most 64 a direction). */
    uint64_t srtp_streams_evicted;
    uint64_t dropped[MOAT_CALL_DROP_REASON_COUNT];
} moat_call_worker_counters;

typedef struct moat_call_worker moat_call_worker;
moat_call_worker *moat_call_worker_new(moat_worker *worker);
void moat_call_worker_free(moat_call_worker *context);
moat_worker *moat_call_worker_worker(const moat_call_worker *context);
/* Control thread, before the context's first stream: the record of Moat's
 * own sockets the loop guard reads (a datagram from one of them is dropped,
 * counted "loop"); it outlives the context. NULL: no guard. */
void moat_call_worker_set_own(moat_call_worker *context, const moat_own_sockets *own);
/* Control thread, before the context's first stream: the learning of legs
 * whose party's SDP is not known yet (default sdp: they accept nothing). */
void moat_call_worker_set_learning(moat_call_worker *context, moat_call_learning learning);
/* Worker: whether `source` is one of Moat's own sockets (the loop guard:
 * a port Moat holds, a leg's, an ingest's or a worker's, on loopback or
 * this host's address). */
bool moat_call_worker_is_own_source(const moat_call_worker *context,
                                    const struct sockaddr_in6 *source);
const moat_call_worker_counters *moat_call_worker_counters_of(const moat_call_worker *context);
/* Streams on this worker (control thread's count). */
unsigned moat_call_worker_streams(const moat_call_worker *context);

/* Where a party receives, as its SDP says, and how its leg treats sources. */
typedef struct {
    struct sockaddr_in6 rtp;  /* sin6_family 0: not known yet (or held, 0.0.0.0) */
    struct sockaddr_in6 rtcp; /* sin6_family 0: RTP port + 1 */
    bool rtcp_mux;
    bool latching;               /* symmetric RTP (not ng asymmetric): learn the party's port */
    bool strict_source;          /* ng strict-source */
    moat_call_learning learning; /* [call] learning (call_learning.h) */
} moat_call_endpoint;

/* Counters of what one leg received from its party. */
typedef struct {
    uint64_t packets, bytes, errors;
} moat_call_flow_counters;

typedef struct {
    moat_call_flow_counters rtp, rtcp;
    uint64_t relayed; /* packets of this party sent on to the other */
    uint64_t dropped;
    uint32_t last_ssrc;
    bool has_ssrc;
    bool latched;
    /* An SDES leg's RTP streams: what Moat last protected for this party
     * and last authenticated from it (srtp_session.h), for a restart. */
    moat_srtp_position srtp_sent, srtp_received;
} moat_call_leg_counters;

typedef struct moat_call_stream moat_call_stream;

/* Allocates two port pairs and registers them on the context's worker:
 * anywhere in the range, or (`at` non-NULL) the pairs at at[0] (side 0)
 * and at[1] (a restored call's). NULL when the range is exhausted or a
 * wanted pair is not free. */
moat_call_stream *moat_call_stream_new(moat_call_worker *context, moat_call_ports *ports,
                                       const uint16_t *at);
/* The RTP port of leg `side` (0 or 1); RTCP is port + 1. */
uint16_t moat_call_stream_port(const moat_call_stream *stream, int side);
void moat_call_stream_set_endpoint(moat_call_stream *stream, int side,
                                   const moat_call_endpoint *endpoint);
/* SDES-SRTP on leg `side` (srtp/sdes_keys.h): what its party sends is
 * unprotected (and only an authenticated packet can latch its address),
 * what it is sent is protected, with the leg's prefilter before the HMAC
 * (call_leg_guard.h; SRTP+ prn tags both ways when `srtpplus`). NULL: plain
 * RTP again. The keying is not kept. `resume` (NULL: none): where this
 * leg's streams stood in the process before a restart, [0] sent to the
 * party, [1] received from it (moat_srtp_session_resume). 0, or -1 with
 * error (the leg is unchanged). */
int moat_call_stream_set_srtp(moat_call_stream *stream, int side, const moat_srtp_keying *keying,
                              bool srtpplus, const moat_srtp_position *resume, char *error,
                              size_t error_size);
/* Stops relaying at once (delete with delay 0 before the free, or a held
 * call); packets are then counted as stopped. */
void moat_call_stream_stop(moat_call_stream *stream);
/* Transcoding between the legs (call_transcode.h), or NULL to relay
 * packets as received; the stream owns it from here (a previous one is
 * released). */
typedef struct moat_call_transcode moat_call_transcode;
void moat_call_stream_set_transcode(moat_call_stream *stream, moat_call_transcode *transcode);
/* Leg `side`'s RTP socket (fixed for the stream's life). */
int moat_call_stream_rtp_fd(const moat_call_stream *stream, int side);
void moat_call_stream_read(const moat_call_stream *stream, int side, moat_call_leg_counters *out);
/* RTP and RTCP packets both legs accepted from their parties so far (the
 * media timeout's activity: four counter reads). */
uint64_t moat_call_stream_received(const moat_call_stream *stream);
/* WebRTC leg `side`, before its session belongs to the worker (created,
 * not started): its port pair accepts nothing and nothing is relayed to
 * it until moat_call_stream_set_webrtc. The worker never touches a session
 * the control thread may still free. */
void moat_call_stream_reserve_webrtc(moat_call_stream *stream, int side);
/* WebRTC leg `side` (call_media_webrtc.c): its party is the core session
 * behind `handle`, which must run on the stream's worker and be owned by
 * it already (posted after the session's start, same worker, FIFO). What the leg
 * receives (relayed or transcoded RTP) goes to the session through
 * calls->relay_rtp, SRTP-protected by the core; its port pair accepts
 * nothing. Takes a reference on the handle (released with the stream). */
void moat_call_stream_set_webrtc(moat_call_stream *stream, int side, moat_plugin_session *handle,
                                 const moat_gateway_calls *calls);
/* Worker: a decrypted RTP packet the WebRTC party behind leg `side` sent
 * (the session's on_media): counted on the leg, then transcoded or sent on
 * to the other party like a packet received on the leg's socket. */
void moat_call_stream_inject(moat_call_stream *stream, int side, const uint8_t *packet,
                             size_t length);
/* Worker: one datagram received on leg `side`'s RTP (or RTCP) socket from
 * `source`, as its receive batch hands it on: `length` is its real length
 * (past CALL_BUFFER - 64 it was truncated and is dropped), `data` has 2048
 * bytes of room. For tests and fuzz targets, which have no socket to read. */
void moat_call_stream_receive(moat_call_stream *stream, int side, bool on_rtcp_socket,
                              const struct sockaddr_in6 *source, uint8_t *data, size_t length);
void moat_call_stream_free(moat_call_stream *stream);

#endif

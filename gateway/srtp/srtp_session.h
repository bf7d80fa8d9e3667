/* One SRTP session per DTLS-SRTP transport (or SDES call leg): an outbound
 * libsrtp context keyed with our key and an inbound one keyed with the
 * peer's. Each context makes a stream for every new SSRC it sees; a session
 * keeps at most MOAT_SRTP_MAX_STREAMS (srtp_stream_table.h) per direction
 * and removes the least recently used one to make room. A session is used
 * by one media worker only; libsrtp contexts are not thread-safe. */
#ifndef MOAT_SRTP_SESSION_H
#define MOAT_SRTP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "srtp/srtp_keying.h"

typedef struct moat_srtp_session moat_srtp_session;

enum {
    MOAT_SRTP_OK = 0,
    MOAT_SRTP_ERR_AUTH = -1,    /* authentication tag did not verify */
    MOAT_SRTP_ERR_REPLAY = -2,  /* index already seen or older than the replay window */
    MOAT_SRTP_ERR_OTHER = -3,   /* malformed packet, unknown stream, cipher failure */
    MOAT_SRTP_ERR_NOSPACE = -4, /* the buffer cannot hold the tag (protect only) */
    MOAT_SRTP_ERR_INVALID = -5  /* bad argument (length out of range) */
};

/* Calls srtp_init() exactly once per process; safe from any thread.
 * moat_srtp_session_new() calls it too, so explicit use is optional.
 * Returns MOAT_SRTP_OK or MOAT_SRTP_ERR_OTHER. */
int moat_srtp_library_init(void);

/* Outbound from keys->local_*, inbound from keys->remote_*, replay window
 * 1024, repeated transmission of an index allowed (NACK retransmissions are
 * re-protected with the same index). The keying is copied. */
moat_srtp_session *moat_srtp_session_new(const moat_srtp_keying *keys, char *error,
                                         size_t error_size);
void moat_srtp_session_free(moat_srtp_session *s);

/* Bytes protect adds to an RTP / RTCP packet for this session's profile. */
size_t moat_srtp_session_rtp_overhead(const moat_srtp_session *s);
size_t moat_srtp_session_rtcp_overhead(const moat_srtp_session *s);

/* In place. *length is the plain packet's length on entry and the protected
 * one on return; capacity (the buffer's size) must be at least
 * *length + the overhead above. */
int moat_srtp_protect_rtp(moat_srtp_session *s, uint8_t *packet, size_t *length, size_t capacity);
int moat_srtp_protect_rtcp(moat_srtp_session *s, uint8_t *packet, size_t *length, size_t capacity);

/* In place; on success *length is the plain packet's length. Returns
 * MOAT_SRTP_OK, MOAT_SRTP_ERR_AUTH, MOAT_SRTP_ERR_REPLAY or
 * MOAT_SRTP_ERR_OTHER. */
int moat_srtp_unprotect_rtp(moat_srtp_session *s, uint8_t *packet, size_t *length);
int moat_srtp_unprotect_rtcp(moat_srtp_session *s, uint8_t *packet, size_t *length);

/* Where an RTP stream stands: its SSRC, rollover counter and highest
 * sequence number (the packet index is roc << 16 | seq, RFC 3711 3.3.1). */
typedef struct {
    uint32_t ssrc;
    uint32_t roc;
    uint16_t seq;
    bool valid; /* a packet of this direction went through */
} moat_srtp_position;

/* Positions are kept only on sessions that ask (a call's SDES legs; a
 * room's sessions never pay for them). */
void moat_srtp_session_track_positions(moat_srtp_session *s);
/* The position of the stream the last RTP packet protected (inbound false)
 * or authenticated (inbound true) belonged to; a stream that wraps its
 * sequence number (in order, a step back of more than half the space)
 * counts a rollover. Invalid unless tracked. */
moat_srtp_position moat_srtp_session_position(const moat_srtp_session *s, bool inbound);

/* A session that takes over a stream another process ran with the same
 * keys (a restored call: call/call_restore.c): the stream of `ssrc` in
 * that direction stood at (roc, seq). A fresh libsrtp stream would assume
 * rollover 0; instead each packet of that SSRC, until one goes through, is
 * taken at the rollover its sequence number implies against seq (roc + 1
 * after a wrap since); until then its stream is never the one evicted for a
 * new SSRC's. `keys` must be the session's own. MOAT_SRTP_OK, or
 * MOAT_SRTP_ERR_OTHER (libsrtp refused the stream). */
int moat_srtp_session_resume(moat_srtp_session *s, const moat_srtp_keying *keys, bool inbound,
                             moat_srtp_position at);

/* Streams each direction holds (at most MOAT_SRTP_MAX_STREAMS between
 * packets), and how many were removed to make room for a new SSRC's. An
 * evicted stream that comes back starts afresh (rollover 0, an empty replay
 * window), as a new SSRC would. */
size_t moat_srtp_session_streams(const moat_srtp_session *s, bool inbound);
uint64_t moat_srtp_session_evictions(const moat_srtp_session *s, bool inbound);
/* Before first use: each eviction, either direction, also adds 1 to
 * *counter (NULL: none), a counter of the worker that uses the session
 * (single writer, relaxed, as engine/counters.h's); it must outlive the
 * session. */
void moat_srtp_session_count_evictions(moat_srtp_session *s, uint64_t *counter);

/* "libsrtp2 2.5.0" */
const char *moat_srtp_library_version(void);

#endif

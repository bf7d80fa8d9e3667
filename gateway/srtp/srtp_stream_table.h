/* The SSRCs one direction of an SRTP session holds a libsrtp stream for, in
 * least-recently-used order, at most MOAT_SRTP_MAX_STREAMS: libsrtp makes a
 * stream for every new SSRC a template context sees and never frees one (a
 * plain party sending a fresh SSRC per packet grew an SDES leg by ~380 B a
 * packet, and libsrtp's list lookup slowed the whole worker). The table
 * knows nothing of libsrtp: it names the SSRC whose stream to remove.
 * Plain data, used by the session's one media worker. */
#ifndef MOAT_SRTP_STREAM_TABLE_H
#define MOAT_SRTP_STREAM_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Above what anything in Moat runs on one SRTP direction: a WebRTC session
 * sends at most 16 streams plus their RTX (session_internal.h), takes at most
 * 16 incoming ones; SRTP+ follows 16 received and 64 sent SSRCs. */
#define MOAT_SRTP_MAX_STREAMS 64

/* About 0.5 KB; a session has two. The clock counts packets and may wrap:
 * ages are taken modulo 2^32. */
typedef struct {
    uint32_t ssrc[MOAT_SRTP_MAX_STREAMS];
    uint32_t used[MOAT_SRTP_MAX_STREAMS]; /* `clock` at the SSRC's last packet */
    uint32_t clock;
    uint32_t n;
    uint32_t last; /* the slot of the last SSRC touched (valid when n > 0) */
} moat_srtp_stream_table;

/* A packet of `ssrc` went through: true (and it becomes the most recently
 * used) when the table holds it. O(1) for the same SSRC as the last call,
 * otherwise a scan of at most MOAT_SRTP_MAX_STREAMS. */
bool moat_srtp_stream_table_touch(moat_srtp_stream_table *t, uint32_t ssrc);

/* Whether the table holds `ssrc`; no use is stamped. */
bool moat_srtp_stream_table_holds(const moat_srtp_stream_table *t, uint32_t ssrc);

/* Adds `ssrc` (not held yet; touch said so) as the most recently used. When
 * the table was full, the least recently used SSRC other than *keep (keep
 * NULL: any) gives up its slot: true, with it in *evicted. */
bool moat_srtp_stream_table_add(moat_srtp_stream_table *t, uint32_t ssrc, const uint32_t *keep,
                                uint32_t *evicted);

size_t moat_srtp_stream_table_count(const moat_srtp_stream_table *t);

#endif

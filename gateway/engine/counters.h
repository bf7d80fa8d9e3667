/* Packet counters. Each media worker owns one moat_counters and is its only
 * writer; the control thread sums them for /metrics. Increments are relaxed
 * atomic load+store pairs (no lock prefix: a single writer needs none) so a
 * reader on another core never sees a torn value. */
#ifndef MOAT_COUNTERS_H
#define MOAT_COUNTERS_H

#include <stdint.h>

typedef enum {
    MOAT_DROP_MALFORMED = 0, /* too short, bad version, unknown first octet */
    MOAT_DROP_UNKNOWN_TUPLE, /* non-STUN from a 5-tuple that passed no check */
    MOAT_DROP_STUN_AUTH,     /* STUN check with bad credentials or integrity */
    MOAT_DROP_NOT_READY,     /* SRTP before DTLS finished */
    MOAT_DROP_UNKNOWN_SSRC,  /* SSRC this transport does not know */
    MOAT_DROP_INDEX,         /* implausible sequence / packet index */
    MOAT_DROP_TAG,           /* SRTP+ tag mismatch */
    MOAT_DROP_REPLAY,        /* index already authenticated */
    MOAT_DROP_BUDGET,        /* verification budget exhausted */
    MOAT_DROP_AUTH,          /* srtp_unprotect failed */
    MOAT_DROP_DTLS,          /* DTLS record rejected */
    MOAT_DROP_ICE_PAIR,      /* authenticated check refused: another session's tuple, replay */
    MOAT_DROP_TRUNCATED,     /* datagram longer than the receive buffer */
    MOAT_DROP_STUN_RATE,     /* STUN check over its rate, refused before the HMAC */
    MOAT_DROP_NACK_LIMIT,    /* retransmission refused: stream's or packet's budget spent */
    MOAT_DROP_DATA_LIMIT,    /* data channel message refused: memory limit reached */
    MOAT_DROP_SEND_EAGAIN,   /* outgoing: socket send buffer still full after a wait */
    MOAT_DROP_SEND_ERROR,    /* outgoing: the kernel refused this datagram (route, size) */
    MOAT_DROP_DATA_STALLED,  /* data relayed to a session whose peer took nothing for 10 s */
    MOAT_DROP_NACK_GONE,     /* NACK of a forwarded packet whose shared source copy is gone */
    MOAT_DROP_DATA_REFUSED,  /* a queued data message the association refused in its turn */
    MOAT_DROP_LOOP,          /* from one of Moat's own sockets (engine/own_sockets.h) */
    MOAT_DROP_NO_CONSENT,    /* outgoing: the selected pair's consent lapsed, a move pending */
    MOAT_DROP_RATE_LIMIT,    /* authenticated RTP over the session's [limits] session_media_kbps */
    MOAT_DROP_DATA_ENDED,    /* a relayed data message still queued when its target session ended */
    MOAT_DROP_RTCP_IGNORED,  /* RTCP from an ingest's sender: nothing is sent back to it */
    MOAT_DROP_PAYLOAD_TYPE,  /* authenticated RTP of a payload type its m-line did not accept */
    MOAT_DROP_REASON_COUNT
} moat_drop_reason;

const char *moat_drop_reason_name(moat_drop_reason reason);

typedef struct {
    uint64_t rtp_received;
    uint64_t rtp_sent;
    uint64_t rtcp_received;
    uint64_t rtcp_sent;
    uint64_t bytes_received;
    uint64_t bytes_sent;
    uint64_t datagrams_received;
    uint64_t stun_requests;
    uint64_t nacked_retransmissions;
    /* Second copies of those, to peers whose NACKs show a lossy path. */
    uint64_t nacked_retransmission_copies;
    /* Retransmissions of packets transport-cc feedback reported lost before
     * a NACK for them came (their NACK lost, or a lost retransmission). */
    uint64_t feedback_repairs;
    /* Times a viewer's video stream began to carry a playout delay for its
     * jitter buffer (session_playout.c: its NACKs showed a lossy path). */
    uint64_t playout_delays_asked;
    /* RTX (RFC 4588) packets received and unwrapped onto their stream
     * (session_media.c: a peer or a cascade link repairing a loss). */
    uint64_t rtx_received;
    uint64_t dtls_handshakes_completed;
    uint64_t dtls_handshakes_failed;
    /* Media-only sessions whose DTLS dropped OpenSSL's SSL (session.c). */
    uint64_t dtls_retired;
    uint64_t consent_expired;
    /* ICE nominations that would move an established session to another
     * remote address, held until its media came from there (ice_pairs.h),
     * and the moves that then happened. */
    uint64_t ice_moves_pending;
    uint64_t ice_moves_confirmed;
    /* Pairs of ordinary sessions on a cascade link's address, dropped when a
     * leg of the link started there (session_cascade.c: a check spoofed
     * from the other node's address before the link existed), and legs
     * ended at their start because their address or an SSRC they route by
     * was another leg's (a leg never runs without its routes). */
    uint64_t ice_pairs_taken_by_cascade;
    /* Pairs a session's peer had left (ice_pairs.h: no check or media for
     * the consent timeout, or of the generation before a completed ICE
     * restart), removed with their tuples' bindings (session_ice.c). */
    uint64_t ice_pairs_expired;
    uint64_t cascade_legs_unrouted;
    uint64_t detector_switches_on;
    uint64_t detector_switches_off;
    uint64_t worker_detector_switches_on;
    uint64_t overloaded_ticks; /* worker ticks that saw overload (load_monitor.h) */
    uint64_t data_messages_received;
    uint64_t data_messages_sent;
    uint64_t data_bytes_received;
    uint64_t data_bytes_sent;
    uint64_t data_messages_abandoned;
    /* Times a session stopped reading its data channels (backpressure). */
    uint64_t data_receive_pauses;
    /* Path MTU discovery, added when an association ends (session_data.c). */
    uint64_t data_pmtu_probes_sent;
    uint64_t data_pmtu_probes_acked;
    uint64_t data_pmtu_raised; /* associations that ended above 1200-byte packets */
    uint64_t data_pmtu_black_holes;
    /* Transport-wide congestion control feedback packets sent (session_media.c). */
    uint64_t transport_cc_feedback_sent;
    /* The sender-side estimator toward transport-cc peers (session_bwe.c):
     * feedback packets taken in, the packets they reported lost, overuse
     * verdicts, probes started and their outcome, and the padding sent. */
    uint64_t bwe_feedback_received;
    uint64_t bwe_packets_reported_lost;
    uint64_t bwe_overuse_events;
    uint64_t bwe_probes_started;
    uint64_t bwe_probes_confirmed;
    uint64_t bwe_probes_failed;
    uint64_t bwe_padding_packets;
    uint64_t bwe_padding_bytes;
    /* malloc_trim calls after handshake bursts, and their time (heap_trim.h). */
    /* Datagrams the kernel dropped at the worker's media socket (and at its
     * plain RTP ingests' sockets): the receive queue was full (the worker
     * fell behind), or the kernel prefilter refused them (those are also
     * in its own counters). */
    uint64_t socket_drops;
    /* libsrtp streams a session removed to make room for a new SSRC's: a
     * direction holds at most MOAT_SRTP_MAX_STREAMS (srtp_session.h). */
    uint64_t srtp_streams_evicted;
    uint64_t heap_trims;
    uint64_t heap_trim_ns;
    uint64_t dropped[MOAT_DROP_REASON_COUNT];
} moat_counters;

static inline void moat_counter_add(uint64_t *counter, uint64_t amount)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + amount,
                     __ATOMIC_RELAXED);
}

static inline uint64_t moat_counter_read(const uint64_t *counter)
{
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

#endif

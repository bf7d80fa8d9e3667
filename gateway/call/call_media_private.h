/* Internals of call_media.c shared with call_stream.c and call_media_webrtc.c: the worker's
 * scratch, the legs and the stream, and the packet-path helpers both use.
 * Worker thread unless a field says otherwise. Not for other modules. */
#ifndef MOAT_CALL_MEDIA_PRIVATE_H
#define MOAT_CALL_MEDIA_PRIVATE_H

#include "call/call_leg_guard.h"
#include "call/call_media.h"
#include "plugin.h"
#include "srtp/srtp_session.h"

#include <sys/socket.h>

#define CALL_BATCH    32
#define CALL_BUFFER   2048
#define CALL_HEADROOM 64 /* kept free after a received datagram: the SRTP tag protect adds */
#define CALL_MAX_READ 4  /* batches per wake-up and socket, then other work runs */

struct moat_call_worker {
    moat_worker *worker;
    unsigned streams;
    moat_call_worker_counters counters;
    /* loop guard (moat_call_worker_set_own): set before the first stream */
    const moat_own_sockets *own;
    moat_call_learning learning; /* of new legs, until their SDP */
    struct mmsghdr rx[CALL_BATCH];
    struct iovec rx_iov[CALL_BATCH];
    struct sockaddr_in6 rx_from[CALL_BATCH];
    /* each datagram's SO_RXQ_OVFL count (note_queue_drops) */
    union {
        struct cmsghdr align;
        uint8_t bytes[CMSG_SPACE(sizeof(uint32_t))];
    } rx_control[CALL_BATCH];
    /* Send slots: RTP, RTCP on the RTCP socket, RTCP on the RTP socket (mux). */
    struct mmsghdr tx[3][CALL_BATCH];
    struct iovec tx_iov[3][CALL_BATCH];
    struct sockaddr_in6 tx_to[3][CALL_BATCH];
    uint8_t buffers[CALL_BATCH][CALL_BUFFER];
};

typedef struct call_leg call_leg;
struct call_leg {
    moat_call_stream *stream;
    call_leg *other;
    int rtp_fd, rtcp_fd;
    uint16_t port;
    /* worker thread */
    moat_call_endpoint endpoint;
    struct sockaddr_in6 rtp_to, rtcp_to; /* where this party receives */
    struct sockaddr_in6 sdp_rtcp;        /* RTCP's address as the SDP names it */
    bool latched, rtcp_latched;
    moat_srtp_session *srtp;    /* SDES leg (moat_call_stream_set_srtp); NULL: plain RTP */
    moat_call_leg_guard *guard; /* with srtp: its prefilter (call_leg_guard.h) */
    /* WebRTC leg (call_webrtc.h): its party is a core session; what it
     * receives goes there through webrtc_calls->relay_rtp and nothing is
     * accepted on the port pair. NULL: a leg of its own sockets. The leg
     * holds one reference on the handle. */
    moat_plugin_session *webrtc;
    const moat_gateway_calls *webrtc_calls;
    /* Its party will be a core session that its worker does not own yet
     * (moat_call_stream_reserve_webrtc): nothing enters, nothing is sent. */
    bool webrtc_reserved;
    /* single writer (the worker), read by the control thread */
    moat_call_flow_counters rtp, rtcp;
    uint64_t relayed, dropped;
    /* worker thread: each socket's SO_RXQ_OVFL count already counted */
    uint32_t rtp_queue_drops, rtcp_queue_drops;
    uint32_t last_ssrc;
    uint32_t flags; /* bit 0: has_ssrc, bit 1: latched */
    /* SDES leg: its streams' positions (moat_call_srtp_pack), [0] sent to
     * the party, [1] received; 0: none. Worker writes, control reads. */
    uint64_t srtp_at[2];
};

/* A stream position in one word: SSRC, the rollover's low 16 bits, the
 * sequence number (a rollover past 65535 is four billion packets). */
static inline uint64_t moat_call_srtp_pack(moat_srtp_position at)
{
    return at.valid ? (uint64_t)at.ssrc << 32 | (uint64_t)(at.roc & 0xffff) << 16 | at.seq : 0;
}

static inline moat_srtp_position moat_call_srtp_unpack(uint64_t word)
{
    return (moat_srtp_position){(uint32_t)(word >> 32), (uint32_t)(word >> 16) & 0xffff,
                                (uint16_t)word, word != 0};
}

struct moat_call_stream {
    moat_call_worker *context;
    moat_call_ports *ports;
    call_leg legs[2];
    bool stopped;                   /* worker thread */
    moat_call_transcode *transcode; /* worker thread; NULL: relayed as received */
};

void moat_call_leg_drop(call_leg *leg, moat_call_drop_reason reason);
void moat_call_count_flow(moat_call_flow_counters *flow, size_t length);
void moat_call_leg_note_ssrc(call_leg *leg, const uint8_t *data);
/* SDES legs: protect in place for the party this leg faces (true when the
 * leg has no SRTP). */
bool moat_call_leg_protect(call_leg *leg, uint8_t *data, size_t *length, bool rtcp);
void moat_call_send_batch(call_leg *from, struct mmsghdr *headers, unsigned count, int fd,
                          bool rtcp);
/* Sends one plaintext RTP packet (worker scratch allowed) to the party
 * behind `to`, a WebRTC leg; counted as relayed by `from`. */
void moat_call_send_webrtc(call_leg *from, call_leg *to, const uint8_t *data, size_t length);
/* Worker socket callbacks (call_media.c), attached by call_stream.c: a leg's
 * RTP or RTCP socket is readable (data: the call_leg), or the stream's
 * transcoders queued packets (data: the moat_call_stream). */
void moat_call_rtp_readable(void *data);
void moat_call_rtcp_readable(void *data);
void moat_call_transcoded_readable(void *data);

#endif

/* Owns the packet path of call legs: receiving a batch on one leg's socket,
 * checking its source (latching), counting it, and sending it on from the
 * other leg's socket in one sendmmsg, from the worker's scratch buffers. */
#include "call/call_media.h"
#include "call/call_media_private.h"

#include "call/call_leg_guard.h"
#include "call/call_transcode.h"

#include "engine/counters.h"
#include "engine/packet_info.h"
#include "engine/relay.h"
#include "rtp/rtp_packet.h"
#include "srtp/srtp_session.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static const char *drop_names[MOAT_CALL_DROP_REASON_COUNT] = {
    [MOAT_CALL_DROP_MALFORMED] = "malformed",
    [MOAT_CALL_DROP_TRUNCATED] = "truncated",
    [MOAT_CALL_DROP_SOURCE] = "source",
    [MOAT_CALL_DROP_NO_DESTINATION] = "no_destination",
    [MOAT_CALL_DROP_SEND] = "send_failed",
    [MOAT_CALL_DROP_STOPPED] = "stopped",
    [MOAT_CALL_DROP_SRTP_AUTH] = "srtp_auth",
    [MOAT_CALL_DROP_SRTP_PROTECT] = "srtp_protect",
    [MOAT_CALL_DROP_SRTP_INDEX] = "srtp_index",
    [MOAT_CALL_DROP_SRTP_REPLAY] = "srtp_replay",
    [MOAT_CALL_DROP_SRTP_SSRC] = "srtp_unknown_ssrc",
    [MOAT_CALL_DROP_SRTP_BUDGET] = "srtp_budget",
    [MOAT_CALL_DROP_SRTP_TAG] = "srtp_tag",
    [MOAT_CALL_DROP_LOOP] = "loop",
    [MOAT_CALL_DROP_TOO_BIG] = "too_big",
    [MOAT_CALL_DROP_SOCKET_QUEUE] = "socket_queue",
};

const char *moat_call_drop_reason_name(moat_call_drop_reason reason)
{
    return reason < MOAT_CALL_DROP_REASON_COUNT ? drop_names[reason] : "unknown";
}

static void drop_many(call_leg *leg, moat_call_drop_reason reason, uint64_t n)
{
    moat_counter_add(&leg->dropped, n);
    moat_counter_add(&leg->stream->context->counters.dropped[reason], n);
}

void moat_call_leg_drop(call_leg *leg, moat_call_drop_reason reason)
{
    drop_many(leg, reason, 1);
}

/* What the kernel dropped at this socket while its queue was full: each
 * datagram carries the socket's running drop count at its queueing
 * (SO_RXQ_OVFL, call_ports.c), so the batch's last one that has it tells
 * the drops before it; counted once, as they first show. */
static void note_queue_drops(call_leg *leg, bool on_rtcp_socket, int n)
{
    moat_call_worker *w = leg->stream->context;
    uint32_t *seen = on_rtcp_socket ? &leg->rtcp_queue_drops : &leg->rtp_queue_drops;
    uint32_t drops;
    for (int i = n - 1; i >= 0; i--) {
        if (!moat_packet_info_get_queue_drops(&w->rx[i].msg_hdr, &drops))
            continue;
        if (drops != *seen)
            drop_many(leg, MOAT_CALL_DROP_SOCKET_QUEUE, (uint32_t)(drops - *seen));
        *seen = drops;
        return;
    }
}

/* Whether a datagram from `from` may enter this leg (call_learning.h); the
 * decision alone, nothing moves. RTCP muxed on the RTP socket is RTCP. */
static moat_call_source_verdict source_verdict(const call_leg *leg, const struct sockaddr_in6 *from,
                                               bool rtcp)
{
    moat_call_source_rule rule = {
        .learning = leg->endpoint.learning,
        .latching = leg->endpoint.latching,
        .strict_source = leg->endpoint.strict_source,
        .rtcp = rtcp,
        .sdp = rtcp ? &leg->sdp_rtcp : &leg->endpoint.rtp,
        .latched = rtcp ? (leg->rtcp_latched ? &leg->rtcp_to : NULL)
                        : (leg->latched ? &leg->rtp_to : NULL),
        .rtp_latched = leg->latched ? &leg->rtp_to : NULL,
    };
    return moat_call_source_decide(&rule, from);
}

/* The leg sends to `from` from now on: after its packet passed the leg's
 * authentication (SDES legs), so that a forged packet never moves it.
 * Only this leg: a packet never latches the other one. Muxed RTCP follows
 * RTP, also when RTP moves to its exact SDP address (call_learning.h). */
static void latch(call_leg *leg, const struct sockaddr_in6 *from, bool rtcp)
{
    if (rtcp) {
        if (leg->rtcp_latched)
            moat_counter_add(&leg->stream->context->counters.moved_to_sdp_address, 1);
        leg->rtcp_to = *from;
        leg->rtcp_latched = true;
        return;
    }
    bool moving = leg->latched;
    if (moving)
        moat_counter_add(&leg->stream->context->counters.moved_to_sdp_address, 1);
    leg->rtp_to = *from;
    leg->latched = true;
    if (leg->endpoint.rtcp_mux && (!leg->rtcp_latched || moving)) {
        leg->rtcp_to = *from;
        leg->rtcp_latched = true;
    }
    __atomic_fetch_or(&leg->flags, 2u, __ATOMIC_RELAXED);
}

static bool plausible(const uint8_t *data, size_t length, bool rtcp)
{
    if (length < (rtcp ? 8u : 12u))
        return false;
    return (data[0] >> 6) == 2;
}

void moat_call_count_flow(moat_call_flow_counters *flow, size_t length)
{
    moat_counter_add(&flow->packets, 1);
    moat_counter_add(&flow->bytes, length);
}

void moat_call_leg_note_ssrc(call_leg *leg, const uint8_t *data)
{
    uint32_t ssrc =
        (uint32_t)data[8] << 24 | (uint32_t)data[9] << 16 | (uint32_t)data[10] << 8 | data[11];
    __atomic_store_n(&leg->last_ssrc, ssrc, __ATOMIC_RELAXED);
    if (!(leg->flags & 1u))
        __atomic_fetch_or(&leg->flags, 1u, __ATOMIC_RELAXED);
}

static moat_call_drop_reason guard_reason(moat_call_guard_verdict verdict)
{
    switch (verdict) {
    case MOAT_CALL_GUARD_REPLAY:
        return MOAT_CALL_DROP_SRTP_REPLAY;
    case MOAT_CALL_GUARD_SSRC:
        return MOAT_CALL_DROP_SRTP_SSRC;
    case MOAT_CALL_GUARD_BUDGET:
        return MOAT_CALL_DROP_SRTP_BUDGET;
    case MOAT_CALL_GUARD_TAG:
        return MOAT_CALL_DROP_SRTP_TAG;
    case MOAT_CALL_GUARD_MALFORMED:
        return MOAT_CALL_DROP_MALFORMED;
    default:
        return MOAT_CALL_DROP_SRTP_INDEX;
    }
}

/* SDES leg, inbound, after the source check (a source the leg would not
 * accept is dropped before the HMAC): the leg's prefilter
 * (call_leg_guard.h); what is left must authenticate (and not be a replay)
 * before it may latch or go on. In place; *length shrinks. */
static bool unprotect_from(call_leg *from, uint8_t *data, size_t *length, bool rtcp,
                           moat_call_flow_counters *flow)
{
    moat_worker *worker = from->stream->context->worker;
    uint64_t now = moat_worker_now_us(worker);
    moat_call_guard_state state;
    moat_call_guard_verdict verdict =
        moat_call_leg_guard_check(from->guard, worker, data, length, rtcp, now, &state);
    if (verdict != MOAT_CALL_GUARD_PASS)
        return moat_call_leg_drop(from, guard_reason(verdict)), false;
    int status = rtcp ? moat_srtp_unprotect_rtcp(from->srtp, data, length)
                      : moat_srtp_unprotect_rtp(from->srtp, data, length);
    moat_call_leg_guard_result(from->guard, data, length, rtcp, status == MOAT_SRTP_OK, &state,
                               now);
    if (status == MOAT_SRTP_OK && !rtcp)
        __atomic_store_n(&from->srtp_at[1],
                         moat_call_srtp_pack(moat_srtp_session_position(from->srtp, true)),
                         __ATOMIC_RELAXED);
    if (status == MOAT_SRTP_OK)
        return true;
    moat_counter_add(&flow->errors, 1);
    return moat_call_leg_drop(from, MOAT_CALL_DROP_SRTP_AUTH), false;
}

/* SDES leg, outbound: protected (and SRTP+ tagged when negotiated) in the
 * receive buffer (CALL_BUFFER bytes). */
static bool protect_for(call_leg *to, uint8_t *data, size_t *length, bool rtcp)
{
    if (moat_call_leg_guard_prepare(to->guard, data, length, CALL_BUFFER, rtcp) != 0)
        return false;
    int status = rtcp ? moat_srtp_protect_rtcp(to->srtp, data, length, CALL_BUFFER)
                      : moat_srtp_protect_rtp(to->srtp, data, length, CALL_BUFFER);
    if (status == MOAT_SRTP_OK && !rtcp)
        __atomic_store_n(&to->srtp_at[0],
                         moat_call_srtp_pack(moat_srtp_session_position(to->srtp, false)),
                         __ATOMIC_RELAXED);
    return status == MOAT_SRTP_OK &&
           moat_call_leg_guard_tag(to->guard, data, length, CALL_BUFFER, rtcp) == 0;
}

/* Classifies one received datagram; returns its send slot (0: RTP, 1: RTCP
 * on the other leg's RTCP socket, 2: RTCP muxed on its RTP socket) or -1
 * when dropped. On SDES legs *length changes (unprotect, protect). */
bool moat_call_leg_protect(call_leg *leg, uint8_t *data, size_t *length, bool rtcp)
{
    return !leg->srtp || protect_for(leg, data, length, rtcp);
}

static int classify(call_leg *from, unsigned flags, uint8_t *data, size_t *length_inout,
                    const struct sockaddr_in6 *source, bool on_rtcp_socket)
{
    size_t length = *length_inout;
    call_leg *to = from->other;
    if (from->stream->stopped)
        return moat_call_leg_drop(from, MOAT_CALL_DROP_STOPPED), -1;
    if (from->webrtc || from->webrtc_reserved) /* its party talks to the session */
        return moat_call_leg_drop(from, MOAT_CALL_DROP_SOURCE), -1;
    if (flags & MSG_TRUNC)
        return moat_call_leg_drop(from, MOAT_CALL_DROP_TRUNCATED), -1;
    if (moat_call_worker_is_own_source(from->stream->context, source))
        return moat_call_leg_drop(from, MOAT_CALL_DROP_LOOP), -1;
    bool rtcp = on_rtcp_socket || (length >= 2 && moat_rtp_is_rtcp(data, length));
    moat_call_flow_counters *flow = rtcp ? &from->rtcp : &from->rtp;
    if (!plausible(data, length, rtcp)) {
        moat_counter_add(&flow->errors, 1);
        return moat_call_leg_drop(from, MOAT_CALL_DROP_MALFORMED), -1;
    }
    moat_call_source_verdict verdict = source_verdict(from, source, rtcp);
    if (verdict == MOAT_CALL_SOURCE_DROP)
        return moat_call_leg_drop(from, MOAT_CALL_DROP_SOURCE), -1;
    if (from->srtp && !unprotect_from(from, data, &length, rtcp, flow))
        return -1;
    if (verdict == MOAT_CALL_SOURCE_LATCH)
        latch(from, source, rtcp);
    moat_call_count_flow(flow, length);
    if (!rtcp)
        moat_call_leg_note_ssrc(from, data);
    if (length > MOAT_RELAY_MTU)
        return moat_call_leg_drop(from, MOAT_CALL_DROP_TOO_BIG), -1;
    if (from->stream->transcode) {
        /* Its output comes back through transcoded_readable. RTCP would
         * describe the other codec's stream: not forwarded. */
        if (!rtcp)
            moat_call_transcode_push(from->stream->transcode, from == &from->stream->legs[1], data,
                                     length);
        return -1;
    }
    if (to->webrtc) {
        /* The session sends its own RTCP; RTP goes through it. */
        if (!rtcp)
            moat_call_send_webrtc(from, to, data, length);
        return -1;
    }
    if (to->webrtc_reserved)
        return moat_call_leg_drop(from, MOAT_CALL_DROP_NO_DESTINATION), -1;
    const struct sockaddr_in6 *destination = rtcp ? &to->rtcp_to : &to->rtp_to;
    if (destination->sin6_family != AF_INET6)
        return moat_call_leg_drop(from, MOAT_CALL_DROP_NO_DESTINATION), -1;
    if (to->srtp && !protect_for(to, data, &length, rtcp))
        return moat_call_leg_drop(from, MOAT_CALL_DROP_SRTP_PROTECT), -1;
    *length_inout = length;
    if (!rtcp)
        return 0;
    return to->endpoint.rtcp_mux ? 2 : 1;
}

void moat_call_send_batch(call_leg *from, struct mmsghdr *headers, unsigned count, int fd,
                          bool rtcp)
{
    moat_call_worker_counters *counters = &from->stream->context->counters;
    unsigned sent = 0;
    while (sent < count) {
        int n = sendmmsg(fd, headers + sent, count - sent, MSG_DONTWAIT);
        if (n <= 0) {
            /* the kernel refused the head datagram: count it, go on with the rest */
            moat_call_leg_drop(from, MOAT_CALL_DROP_SEND);
            sent++;
            continue;
        }
        for (int i = 0; i < n; i++)
            moat_counter_add(&counters->bytes_relayed, headers[sent + (unsigned)i].msg_len);
        moat_counter_add(rtcp ? &counters->rtcp_relayed : &counters->rtp_relayed, (uint64_t)n);
        moat_counter_add(&from->relayed, (uint64_t)n);
        sent += (unsigned)n;
    }
}

/* One batch from one socket of `from`; returns how many datagrams it read. */
static int relay_batch(call_leg *from, bool on_rtcp_socket)
{
    moat_call_worker *w = from->stream->context;
    int fd = on_rtcp_socket ? from->rtcp_fd : from->rtp_fd;
    for (int i = 0; i < CALL_BATCH; i++) {
        w->rx[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in6);
        w->rx[i].msg_hdr.msg_controllen = sizeof w->rx_control[i];
    }
    int n = recvmmsg(fd, w->rx, CALL_BATCH, MSG_DONTWAIT, NULL);
    if (n <= 0)
        return 0;
    note_queue_drops(from, on_rtcp_socket, n);
    call_leg *to = from->other;
    unsigned count[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        size_t length = w->rx[i].msg_len;
        int slot = classify(from, (unsigned)w->rx[i].msg_hdr.msg_flags, w->buffers[i], &length,
                            &w->rx_from[i], on_rtcp_socket);
        if (slot < 0)
            continue;
        unsigned k = count[slot]++;
        w->tx_iov[slot][k] = (struct iovec){w->buffers[i], length};
        w->tx_to[slot][k] = slot == 0 ? to->rtp_to : to->rtcp_to;
    }
    if (count[0])
        moat_call_send_batch(from, w->tx[0], count[0], to->rtp_fd, false);
    if (count[1])
        moat_call_send_batch(from, w->tx[1], count[1], to->rtcp_fd, true);
    if (count[2])
        moat_call_send_batch(from, w->tx[2], count[2], to->rtp_fd, true);
    moat_call_leg_guard_maintain(from->guard);
    return n;
}

void moat_call_stream_receive(moat_call_stream *stream, int side, bool on_rtcp_socket,
                              const struct sockaddr_in6 *source, uint8_t *data, size_t length)
{
    call_leg *from = &stream->legs[side], *to = from->other;
    moat_call_worker *w = stream->context;
    bool truncated = length > CALL_BUFFER - CALL_HEADROOM;
    int slot = classify(from, truncated ? MSG_TRUNC : 0, data, &length, source, on_rtcp_socket);
    if (slot < 0)
        return;
    w->tx_iov[slot][0] = (struct iovec){data, length};
    w->tx_to[slot][0] = slot == 0 ? to->rtp_to : to->rtcp_to;
    moat_call_send_batch(from, w->tx[slot], 1, slot == 1 ? to->rtcp_fd : to->rtp_fd, slot != 0);
}

static void relay_readable(call_leg *from, bool on_rtcp_socket)
{
    for (int round = 0; round < CALL_MAX_READ; round++) {
        if (relay_batch(from, on_rtcp_socket) < CALL_BATCH)
            return;
    }
}

void moat_call_rtp_readable(void *data)
{
    relay_readable(data, false);
}

void moat_call_rtcp_readable(void *data)
{
    relay_readable(data, true);
}

/* Transcoded RTP for the party behind each leg, queued by the transcoders'
 * threads: protected and sent like relayed packets. */
void moat_call_transcoded_readable(void *data)
{
    moat_call_stream *stream = data;
    moat_call_worker *w = stream->context;
    if (!stream->transcode)
        return;
    moat_call_transcode_woken(stream->transcode);
    for (int side = 0; side < 2; side++) {
        call_leg *to = &stream->legs[side], *from = to->other;
        size_t length;
        while ((length = moat_call_transcode_pop(stream->transcode, side, w->buffers[0],
                                                 CALL_BUFFER - 128)) > 0) {
            if (to->webrtc && !stream->stopped) {
                moat_call_send_webrtc(from, to, w->buffers[0], length);
                continue;
            }
            if (length > MOAT_RELAY_MTU) {
                moat_call_leg_drop(from, MOAT_CALL_DROP_TOO_BIG);
                continue;
            }
            if (stream->stopped || to->webrtc_reserved || to->rtp_to.sin6_family != AF_INET6) {
                moat_call_leg_drop(from, stream->stopped ? MOAT_CALL_DROP_STOPPED
                                                         : MOAT_CALL_DROP_NO_DESTINATION);
                continue;
            }
            if (to->srtp && !protect_for(to, w->buffers[0], &length, false)) {
                moat_call_leg_drop(from, MOAT_CALL_DROP_SRTP_PROTECT);
                continue;
            }
            w->tx_iov[0][0] = (struct iovec){w->buffers[0], length};
            w->tx_to[0][0] = to->rtp_to;
            moat_call_send_batch(from, w->tx[0], 1, to->rtp_fd, false);
        }
    }
}

/* Owns the life of call streams and of each worker's call context: the
 * worker's scratch buffers and own-source checks, and every change a control
 * thread makes to a stream (attach, endpoints, SRTP keys, transcoding, stop),
 * posted to the stream's worker so the packet path (call_media.c) never
 * takes a lock. */
#include "call/call_media.h"
#include "call/call_media_private.h"

#include "call/call_leg_guard.h"
#include "call/call_ports.h"
#include "call/call_transcode.h"

#include "engine/counters.h"
#include "srtp/srtp_session.h"

#include <arpa/inet.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

static bool same_address(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b)
{
    return a->sin6_port == b->sin6_port &&
           memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
}

moat_call_worker *moat_call_worker_new(moat_worker *worker)
{
    moat_call_worker *context = g_new0(moat_call_worker, 1);
    context->worker = worker;
    for (int i = 0; i < CALL_BATCH; i++) {
        context->rx_iov[i] = (struct iovec){context->buffers[i], CALL_BUFFER - CALL_HEADROOM};
        context->rx[i].msg_hdr.msg_iov = &context->rx_iov[i];
        context->rx[i].msg_hdr.msg_iovlen = 1;
        context->rx[i].msg_hdr.msg_name = &context->rx_from[i];
        context->rx[i].msg_hdr.msg_control = &context->rx_control[i];
        for (int k = 0; k < 3; k++) {
            context->tx[k][i].msg_hdr.msg_iov = &context->tx_iov[k][i];
            context->tx[k][i].msg_hdr.msg_iovlen = 1;
            context->tx[k][i].msg_hdr.msg_name = &context->tx_to[k][i];
            context->tx[k][i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in6);
        }
    }
    return context;
}

void moat_call_worker_free(moat_call_worker *context)
{
    g_free(context);
}

moat_worker *moat_call_worker_worker(const moat_call_worker *context)
{
    return context->worker;
}

void moat_call_worker_set_own(moat_call_worker *context, const moat_own_sockets *own)
{
    context->own = own;
}

void moat_call_worker_set_learning(moat_call_worker *context, moat_call_learning learning)
{
    context->learning = learning;
}

bool moat_call_worker_is_own_source(const moat_call_worker *context,
                                    const struct sockaddr_in6 *source)
{
    return moat_own_sockets_is_source(context->own, source);
}

const moat_call_worker_counters *moat_call_worker_counters_of(const moat_call_worker *context)
{
    return &context->counters;
}

unsigned moat_call_worker_streams(const moat_call_worker *context)
{
    return context->streams;
}

/* ---- control thread: lifecycle, posted to the worker ---- */

static void attach_task(moat_worker *worker, void *data)
{
    moat_call_stream *stream = data;
    for (int side = 0; side < 2; side++) {
        call_leg *leg = &stream->legs[side];
        moat_worker_add_socket(worker, leg->rtp_fd, moat_call_rtp_readable, leg);
        moat_worker_add_socket(worker, leg->rtcp_fd, moat_call_rtcp_readable, leg);
    }
}

static void release_stream(void *data)
{
    moat_call_stream *stream = data;
    moat_call_transcode_release(stream->transcode, false);
    for (int side = 0; side < 2; side++) {
        call_leg *leg = &stream->legs[side];
        moat_call_ports_release(stream->ports, leg->port, leg->rtp_fd, leg->rtcp_fd);
        moat_srtp_session_free(leg->srtp);
        moat_call_leg_guard_free(leg->guard);
        if (leg->webrtc)
            leg->webrtc_calls->handle_unref(leg->webrtc);
    }
    g_free(stream);
}

static void detach_task(moat_worker *worker, void *data)
{
    moat_call_stream *stream = data;
    for (int side = 0; side < 2; side++) {
        moat_worker_remove_socket(worker, stream->legs[side].rtp_fd);
        moat_worker_remove_socket(worker, stream->legs[side].rtcp_fd);
    }
    if (stream->transcode)
        moat_worker_remove_socket(worker, moat_call_transcode_fd(stream->transcode));
    moat_call_transcode_release(stream->transcode, true);
    stream->transcode = NULL;
    release_stream(stream);
}

moat_call_stream *moat_call_stream_new(moat_call_worker *context, moat_call_ports *ports,
                                       const uint16_t *at)
{
    moat_call_stream *stream = g_new0(moat_call_stream, 1);
    stream->context = context;
    stream->ports = ports;
    for (int side = 0; side < 2; side++) {
        call_leg *leg = &stream->legs[side];
        leg->stream = stream;
        leg->other = &stream->legs[1 - side];
        leg->rtp_fd = leg->rtcp_fd = -1;
        leg->endpoint.latching = true;
        leg->endpoint.learning = context->learning;
        leg->port = at ? moat_call_ports_allocate_at(ports, at[side], &leg->rtp_fd, &leg->rtcp_fd)
                       : moat_call_ports_allocate(ports, &leg->rtp_fd, &leg->rtcp_fd);
        if (leg->port == 0) {
            release_stream(stream);
            return NULL;
        }
    }
    context->streams++;
    /* no release: a stopped worker leaves the stream to moat_call_stream_free */
    moat_worker_post(context->worker, attach_task, stream, NULL);
    return stream;
}

uint16_t moat_call_stream_port(const moat_call_stream *stream, int side)
{
    return stream->legs[side & 1].port;
}

typedef struct {
    moat_call_stream *stream;
    int side;
    moat_call_endpoint endpoint;
} endpoint_update;

/* A new SDP address for a party: sending goes there until (again) a packet
 * latches; a re-INVITE that moves the party moves the relay. Hold
 * (0.0.0.0): nothing is sent to the party, which may still send (music on
 * hold) from the IP it had, and that IP stays the one accepted. */
static void endpoint_task(moat_worker *worker, void *data)
{
    endpoint_update *update = data;
    call_leg *leg = &update->stream->legs[update->side];
    bool moved = !same_address(&leg->endpoint.rtp, &update->endpoint.rtp);
    bool hold = update->endpoint.rtp.sin6_family != AF_INET6;
    struct sockaddr_in6 known = leg->endpoint.rtp, known_rtcp = leg->sdp_rtcp;
    leg->endpoint = update->endpoint;
    if (moved || !leg->latched) {
        leg->latched = leg->rtcp_latched = false;
        __atomic_fetch_and(&leg->flags, ~2u, __ATOMIC_RELAXED);
        leg->rtp_to = update->endpoint.rtp;
        leg->rtcp_to = update->endpoint.rtcp;
        if (leg->rtcp_to.sin6_family != AF_INET6 && leg->rtp_to.sin6_family == AF_INET6) {
            leg->rtcp_to = leg->rtp_to;
            if (!update->endpoint.rtcp_mux)
                leg->rtcp_to.sin6_port = htons((uint16_t)(ntohs(leg->rtp_to.sin6_port) + 1));
        }
        leg->sdp_rtcp = leg->rtcp_to;
    }
    if (hold && known.sin6_family == AF_INET6) {
        leg->endpoint.rtp = known;
        leg->sdp_rtcp = known_rtcp;
    }
    update->stream->stopped = false;
    g_free(update);
}

void moat_call_stream_set_endpoint(moat_call_stream *stream, int side,
                                   const moat_call_endpoint *endpoint)
{
    endpoint_update *update = g_new(endpoint_update, 1);
    *update = (endpoint_update){stream, side & 1, *endpoint};
    moat_worker_post(stream->context->worker, endpoint_task, update, g_free);
}

typedef struct {
    moat_call_stream *stream;
    int side;
    moat_srtp_session *srtp;
    moat_call_leg_guard *guard;
} srtp_update;

static void srtp_update_free(void *data)
{
    srtp_update *update = data;
    moat_srtp_session_free(update->srtp);
    moat_call_leg_guard_free(update->guard);
    g_free(update);
}

/* The leg's new SRTP session and a fresh prefilter (or none); the old ones
 * are freed here, on the worker that used them. */
static void srtp_task(moat_worker *worker, void *data)
{
    srtp_update *update = data;
    call_leg *leg = &update->stream->legs[update->side];
    if (update->guard)
        moat_call_leg_guard_init(update->guard, moat_worker_prefilter(worker),
                                 moat_worker_now_us(worker));
    moat_srtp_session *old = leg->srtp;
    moat_call_leg_guard *old_guard = leg->guard;
    /* New keys, new streams: no position until a packet goes through. */
    __atomic_store_n(&leg->srtp_at[0], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&leg->srtp_at[1], 0, __ATOMIC_RELAXED);
    leg->srtp = update->srtp;
    leg->guard = update->guard;
    update->srtp = old;
    update->guard = old_guard;
    srtp_update_free(update);
}

int moat_call_stream_set_srtp(moat_call_stream *stream, int side, const moat_srtp_keying *keying,
                              bool srtpplus, const moat_srtp_position *resume, char *error,
                              size_t error_size)
{
    moat_srtp_session *srtp = NULL;
    moat_call_leg_guard *guard = NULL;
    if (keying) {
        srtp = moat_srtp_session_new(keying, error, error_size);
        if (!srtp)
            return -1;
        moat_srtp_session_track_positions(srtp); /* for a restart (call_restore.c) */
        moat_srtp_session_count_evictions(srtp, &stream->context->counters.srtp_streams_evicted);
        /* Not used by the worker yet: the streams it takes over are set now. */
        if (resume && (moat_srtp_session_resume(srtp, keying, false, resume[0]) != MOAT_SRTP_OK ||
                       moat_srtp_session_resume(srtp, keying, true, resume[1]) != MOAT_SRTP_OK)) {
            moat_srtp_session_free(srtp);
            snprintf(error, error_size, "cannot resume the SRTP streams");
            return -1;
        }
        guard = moat_call_leg_guard_new(keying, srtpplus);
        if (!guard) {
            moat_srtp_session_free(srtp);
            snprintf(error, error_size, "cannot key SRTP+");
            return -1;
        }
        if (resume)
            moat_call_leg_guard_resume(guard, resume);
    }
    srtp_update *update = g_new(srtp_update, 1);
    *update = (srtp_update){stream, side & 1, srtp, guard};
    moat_worker_post(stream->context->worker, srtp_task, update, srtp_update_free);
    return 0;
}

typedef struct {
    moat_call_stream *stream;
    moat_call_transcode *transcode;
} transcode_update;

static void transcode_task(moat_worker *worker, void *data)
{
    transcode_update *update = data;
    moat_call_stream *stream = update->stream;
    if (stream->transcode) {
        moat_worker_remove_socket(worker, moat_call_transcode_fd(stream->transcode));
        moat_call_transcode_release(stream->transcode, true);
    }
    stream->transcode = update->transcode;
    if (stream->transcode)
        moat_worker_add_socket(worker, moat_call_transcode_fd(stream->transcode),
                               moat_call_transcoded_readable, stream);
    g_free(update);
}

static void transcode_update_release(void *data)
{
    transcode_update *update = data;
    moat_call_transcode_release(update->transcode, false);
    g_free(update);
}

void moat_call_stream_set_transcode(moat_call_stream *stream, moat_call_transcode *transcode)
{
    transcode_update *update = g_new(transcode_update, 1);
    *update = (transcode_update){stream, transcode};
    moat_worker_post(stream->context->worker, transcode_task, update, transcode_update_release);
}

static void stop_task(moat_worker *worker, void *data)
{
    moat_call_stream *stream = data;
    stream->stopped = true;
}

void moat_call_stream_stop(moat_call_stream *stream)
{
    moat_worker_post(stream->context->worker, stop_task, stream, NULL);
}

static void read_flow(const moat_call_flow_counters *flow, moat_call_flow_counters *out)
{
    out->packets = moat_counter_read(&flow->packets);
    out->bytes = moat_counter_read(&flow->bytes);
    out->errors = moat_counter_read(&flow->errors);
}

void moat_call_stream_read(const moat_call_stream *stream, int side, moat_call_leg_counters *out)
{
    const call_leg *leg = &stream->legs[side & 1];
    read_flow(&leg->rtp, &out->rtp);
    read_flow(&leg->rtcp, &out->rtcp);
    out->relayed = moat_counter_read(&leg->relayed);
    out->dropped = moat_counter_read(&leg->dropped);
    unsigned flags = __atomic_load_n(&leg->flags, __ATOMIC_RELAXED);
    out->last_ssrc = __atomic_load_n(&leg->last_ssrc, __ATOMIC_RELAXED);
    out->has_ssrc = flags & 1u;
    out->latched = flags & 2u;
    out->srtp_sent = moat_call_srtp_unpack(__atomic_load_n(&leg->srtp_at[0], __ATOMIC_RELAXED));
    out->srtp_received = moat_call_srtp_unpack(__atomic_load_n(&leg->srtp_at[1], __ATOMIC_RELAXED));
}

uint64_t moat_call_stream_received(const moat_call_stream *stream)
{
    uint64_t total = 0;
    for (int side = 0; side < 2; side++)
        total += moat_counter_read(&stream->legs[side].rtp.packets) +
                 moat_counter_read(&stream->legs[side].rtcp.packets);
    return total;
}

void moat_call_stream_free(moat_call_stream *stream)
{
    if (!stream)
        return;
    stream->context->streams--;
    moat_worker_post(stream->context->worker, detach_task, stream, release_stream);
}

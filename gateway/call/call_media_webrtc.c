/* Owns the packet path of WebRTC call legs: what the party's core session
 * decrypted enters the stream here, and what the leg receives leaves
 * through the session (relay_rtp: the core protects and sends it). */
#include "call/call_media.h"
#include "call/call_media_private.h"

#include "call/call_transcode.h"
#include "engine/counters.h"
#include "engine/relay.h"

#include <glib.h>
#include <string.h>

void moat_call_send_webrtc(call_leg *from, call_leg *to, const uint8_t *data, size_t length)
{
    moat_call_worker_counters *counters = &from->stream->context->counters;
    if (length > MOAT_RELAY_MTU) {
        moat_call_leg_drop(from, MOAT_CALL_DROP_TOO_BIG);
        return;
    }
    if (to->webrtc_calls->relay_rtp(to->webrtc, data, length) != 0) {
        moat_call_leg_drop(from, MOAT_CALL_DROP_SEND);
        return;
    }
    moat_counter_add(&counters->rtp_relayed, 1);
    moat_counter_add(&counters->bytes_relayed, length);
    moat_counter_add(&from->relayed, 1);
}

/* Plain (or SDES) party behind `to`: out of its leg's socket. */
static void send_to_socket(call_leg *from, call_leg *to, const uint8_t *packet, size_t length)
{
    moat_call_worker *w = from->stream->context;
    if (to->webrtc_reserved || to->rtp_to.sin6_family != AF_INET6) {
        moat_call_leg_drop(from, MOAT_CALL_DROP_NO_DESTINATION);
        return;
    }
    if (length > MOAT_RELAY_MTU) { /* protect adds at most CALL_BUFFER - MTU */
        moat_call_leg_drop(from, MOAT_CALL_DROP_TOO_BIG);
        return;
    }
    memcpy(w->buffers[0], packet, length);
    if (!moat_call_leg_protect(to, w->buffers[0], &length, false)) {
        moat_call_leg_drop(from, MOAT_CALL_DROP_SRTP_PROTECT);
        return;
    }
    w->tx_iov[0][0] = (struct iovec){w->buffers[0], length};
    w->tx_to[0][0] = to->rtp_to;
    moat_call_send_batch(from, w->tx[0], 1, to->rtp_fd, false);
}

void moat_call_stream_inject(moat_call_stream *stream, int side, const uint8_t *packet,
                             size_t length)
{
    call_leg *from = &stream->legs[side & 1], *to = from->other;
    if (stream->stopped) {
        moat_call_leg_drop(from, MOAT_CALL_DROP_STOPPED);
        return;
    }
    if (length < 12) {
        moat_call_leg_drop(from, MOAT_CALL_DROP_MALFORMED);
        return;
    }
    /* A WebRTC party's decrypted RTP can exceed what a plain leg, the
     * transcoder's ring or the relay carries: the same limit as classify. */
    if (length > MOAT_RELAY_MTU) {
        moat_call_leg_drop(from, MOAT_CALL_DROP_TOO_BIG);
        return;
    }
    moat_call_count_flow(&from->rtp, length);
    moat_call_leg_note_ssrc(from, packet);
    if (!(from->flags & 2u))
        __atomic_fetch_or(&from->flags, 2u, __ATOMIC_RELAXED); /* ICE and DTLS are up */
    if (stream->transcode) {
        moat_call_transcode_push(stream->transcode, side & 1, packet, length);
        return;
    }
    if (to->webrtc)
        moat_call_send_webrtc(from, to, packet, length);
    else
        send_to_socket(from, to, packet, length);
}

typedef struct {
    moat_call_stream *stream;
    int side;
    moat_plugin_session *handle;
    const moat_gateway_calls *calls;
} webrtc_update;

static void webrtc_task(moat_worker *worker, void *data)
{
    webrtc_update *update = data;
    call_leg *leg = &update->stream->legs[update->side];
    if (leg->webrtc)
        leg->webrtc_calls->handle_unref(leg->webrtc);
    leg->webrtc = update->handle;
    leg->webrtc_calls = update->calls;
    leg->webrtc_reserved = false;
    g_free(update);
}

static void reserve_task(moat_worker *worker, void *data)
{
    webrtc_update *update = data;
    update->stream->legs[update->side].webrtc_reserved = true;
    g_free(update);
}

void moat_call_stream_reserve_webrtc(moat_call_stream *stream, int side)
{
    webrtc_update *update = g_new0(webrtc_update, 1);
    update->stream = stream;
    update->side = side & 1;
    moat_worker_post(stream->context->worker, reserve_task, update, g_free);
}

static void webrtc_release(void *data)
{
    webrtc_update *update = data;
    update->calls->handle_unref(update->handle);
    g_free(update);
}

void moat_call_stream_set_webrtc(moat_call_stream *stream, int side, moat_plugin_session *handle,
                                 const moat_gateway_calls *calls)
{
    webrtc_update *update = g_new(webrtc_update, 1);
    *update = (webrtc_update){stream, side & 1, handle, calls};
    calls->handle_ref(handle);
    moat_worker_post(stream->context->worker, webrtc_task, update, webrtc_release);
}

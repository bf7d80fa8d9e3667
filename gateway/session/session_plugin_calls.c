/* The calls plugins make into the core (moat_gateway_calls), on the
 * session's worker: sending RTP (into the retransmission cache, sized to the
 * stream's rate), RTCP and data, timers, and keyframe requests coalesced per
 * m-line. */
#include "session/session_internal.h"

#include "session/events.h"
#include "rtp/rtcp_feedback.h"
#include "rtp/rtcp_packet.h"
#include "rtp/rtp_bytes.h"
#include "rtp/rtp_packet.h"

#include <glib.h>

/* Retransmission caches are taken when a stream that negotiated NACK first
 * sends, sized for its kind, and follow its packet and byte rates to hold
 * the horizon a NACK can still be useful in: while the round-trip time is
 * unknown RETRANSMIT_HORIZON_US; once the peer's reception reports give it,
 * RETRANSMIT_HORIZON_BASE_US plus RETRANSMIT_HORIZON_RTTS round trips (the
 * first NACK comes one RTT and a gap after the send, its repeats an RTT
 * apart), between RETRANSMIT_HORIZON_MIN_US and RETRANSMIT_HORIZON_US. */
#define RETRANSMIT_AUDIO_SLOTS     32
#define RETRANSMIT_VIDEO_SLOTS     128
#define RETRANSMIT_MAX_SLOTS       512
#define RETRANSMIT_HORIZON_US      1000000ull
#define RETRANSMIT_HORIZON_MIN_US  300000ull
#define RETRANSMIT_HORIZON_BASE_US 200000ull
#define RETRANSMIT_HORIZON_RTTS    4u
/* A cache shrinks at most once in this long: a peer whose reports make the
 * RTT swing cannot have the arena copied over and over (growth is not held
 * back: that would cost retransmissions). */
#define RETRANSMIT_SHRINK_AFTER_US 10000000ull
/* The packets' bytes: an arena sized to the horizon (above) of the
 * measured byte rate plus a quarter, at least this much at first (an
 * audio packet takes its size, not a 1500-byte slot). */
#define RETRANSMIT_AUDIO_BYTES (8u * 1024u)
#define RETRANSMIT_VIDEO_BYTES (48u * 1024u)
#define RETRANSMIT_BYTES_STEP  (4u * 1024u)
/* The cache's size is checked against the packet rate every this many packets
 * (a power of two), not on every send: the check is floating-point work done
 * once per packet and subscriber on a fan-out. */
#define RETRANSMIT_RESIZE_EVERY 16u
/* At most one keyframe request per m-line in this interval (request_keyframe). */
#define KEYFRAME_INTERVAL_US 300000ull

static size_t power_of_two_at_least(double value)
{
    size_t n = 1;
    while ((double)n < value && n < RETRANSMIT_MAX_SLOTS)
        n <<= 1;
    return n;
}

/* The seconds of the stream a cache holds, from the session's round-trip
 * time (0: unknown). */
static double horizon_s(uint64_t rtt_us)
{
    if (rtt_us == 0)
        return (double)RETRANSMIT_HORIZON_US / 1e6;
    uint64_t h = RETRANSMIT_HORIZON_BASE_US + RETRANSMIT_HORIZON_RTTS * rtt_us;
    if (h < RETRANSMIT_HORIZON_MIN_US)
        h = RETRANSMIT_HORIZON_MIN_US;
    if (h > RETRANSMIT_HORIZON_US)
        h = RETRANSMIT_HORIZON_US;
    return (double)h / 1e6;
}

/* Bytes for the horizon at the measured rate, a quarter more, in whole
 * steps. */
static size_t arena_wanted(const moat_retransmit_budget *budget, double horizon)
{
    /* Complete windows only: a keyframe burst early in a window would
     * extrapolate to several times the stream's rate. */
    double rate = moat_retransmit_budget_window_rate_bytes(budget);
    size_t bytes = (size_t)(rate * horizon * 1.25);
    return (bytes + RETRANSMIT_BYTES_STEP - 1) / RETRANSMIT_BYTES_STEP * RETRANSMIT_BYTES_STEP;
}

/* The first packet takes a cache sized for the stream's kind; it then grows
 * to hold the horizon at the measured packet and byte rates, and shrinks
 * (never under the kind's first size) when it holds more than twice that,
 * keeping its newest packets. When memory is short the stream goes on
 * without one (or with the old one): NACKs then go unanswered, media does
 * not stop. */
void moat_session_size_cache(moat_retransmit_cache **cache, uint64_t *shrunk_us,
                             const moat_retransmit_budget *budget, bool video, uint64_t rtt_us,
                             uint64_t now_us)
{
    double horizon = horizon_s(rtt_us);
    size_t initial = video ? RETRANSMIT_VIDEO_SLOTS : RETRANSMIT_AUDIO_SLOTS;
    size_t initial_bytes = video ? RETRANSMIT_VIDEO_BYTES : RETRANSMIT_AUDIO_BYTES;
    size_t wanted =
        power_of_two_at_least(moat_retransmit_budget_rate_packets(budget, now_us) * horizon);
    size_t bytes = arena_wanted(budget, horizon);
    wanted = wanted > initial ? wanted : initial;
    bytes = bytes > initial_bytes ? bytes : initial_bytes;
    if (!*cache) {
        *cache = moat_retransmit_cache_new_bytes(wanted, bytes, 10000,
                                                 MOAT_SESSION_RETRANSMIT_MAX_AGE_US);
        return;
    }
    size_t slots = moat_retransmit_cache_slots(*cache);
    size_t arena = moat_retransmit_cache_bytes(*cache);
    bool grow = wanted > slots || bytes > arena;
    bool shrink = (wanted < slots / 2 || bytes < arena / 2) &&
                  (*shrunk_us == 0 || now_us - *shrunk_us >= RETRANSMIT_SHRINK_AFTER_US);
    if (!grow && !shrink)
        return;
    /* Each dimension moves only past its own threshold. */
    size_t new_slots = wanted > slots || (shrink && wanted < slots / 2) ? wanted : slots;
    size_t new_bytes = bytes > arena || (shrink && bytes < arena / 2) ? bytes : arena;
    moat_retransmit_cache *resized =
        moat_retransmit_cache_resized_bytes(*cache, new_slots, new_bytes);
    if (!resized)
        return;
    moat_retransmit_cache_free(*cache);
    *cache = resized;
    if (shrink)
        *shrunk_us = now_us;
}

static void size_cache(moat_outgoing_stream *stream, uint64_t rtt_us, uint64_t now_us)
{
    moat_session_size_cache(&stream->cache, &stream->cache_shrunk_us, &stream->budget,
                            stream->kind == MOAT_MEDIA_KIND_VIDEO, rtt_us, now_us);
}

int moat_session_send_rtp_accounted(moat_session *session, moat_outgoing_stream *stream,
                                    const uint8_t *packet, size_t length, size_t payload_length)
{
    if (stream) {
        stream->packets_sent++;
        stream->octets_sent += (uint32_t)payload_length;
        stream->last_rtp_timestamp = moat_rd32(packet + 4);
        stream->last_sent_us = moat_worker_now_us(session->worker);
        stream->has_sent = true;
    }
    return moat_session_send_protected(session, packet, length, false);
}

static int gateway_send_rtp(moat_plugin_session *handle, const uint8_t *packet, size_t length)
{
    moat_session *session = moat_session_handle_get(handle);
    if (!session)
        return -1;
    moat_rtp_header header;
    if (moat_rtp_parse(packet, length, &header) != 0)
        return -1;
    moat_outgoing_stream *stream = moat_session_outgoing_stream(session, header.ssrc);
    if (stream) {
        uint64_t now = moat_worker_now_us(session->worker);
        moat_retransmit_budget_on_send(&stream->budget, length, now);
        if (stream->nack && (!stream->cache || stream->packets_sent % RETRANSMIT_RESIZE_EVERY == 0))
            size_cache(stream, session->rtt_us, now);
        if (stream->cache)
            moat_retransmit_cache_store(stream->cache, packet, length, now);
    }
    return moat_session_send_rtp_accounted(session, stream, packet, length, header.payload_length);
}

/* Plugin RTCP a cascade leg rewrites at most (larger goes out as it is). */
#define MOAT_RTCP_CASCADE_MAX 1500

/* A cascade leg's RTCP goes out from the one SSRC the other node routes
 * its packets by (session_cascade.h): the plugin's NACKs and REMB name a
 * media SSRC of the m-line as their sender, which the other node would
 * drop as unknown_ssrc. Every packet of the compound has its sender SSRC
 * at offset 4; false when the compound is malformed. */
static bool cascade_sender(const moat_session *session, uint8_t *packet, size_t length)
{
    size_t at = 0;
    while (at < length) {
        if (length - at < 8)
            return false;
        size_t size = ((size_t)packet[at + 2] << 8 | packet[at + 3]) * 4 + 4;
        if (size > length - at)
            return false;
        packet[at + 4] = (uint8_t)(session->rtcp_ssrc >> 24);
        packet[at + 5] = (uint8_t)(session->rtcp_ssrc >> 16);
        packet[at + 6] = (uint8_t)(session->rtcp_ssrc >> 8);
        packet[at + 7] = (uint8_t)session->rtcp_ssrc;
        at += size;
    }
    return true;
}

static int gateway_send_rtcp(moat_plugin_session *handle, const uint8_t *packet, size_t length)
{
    moat_session *session = moat_session_handle_get(handle);
    if (!session)
        return -1;
    if (session->cascade_leg && length <= MOAT_RTCP_CASCADE_MAX) {
        uint8_t copy[MOAT_RTCP_CASCADE_MAX];
        memcpy(copy, packet, length);
        if (!cascade_sender(session, copy, length))
            return -1;
        return moat_session_send_protected(session, copy, length, true);
    }
    return moat_session_send_protected(session, packet, length, true);
}

static int gateway_send_data(moat_plugin_session *handle, uint16_t stream_id, uint32_t ppid,
                             const uint8_t *data, size_t length)
{
    moat_session *session = moat_session_handle_get(handle);
    return session ? moat_session_data_send(session, stream_id, ppid, data, length) : -1;
}

static void gateway_push_event(moat_plugin_session *handle, const char *json)
{
    moat_session *session = moat_session_handle_get(handle);
    if (!session)
        return;
    moat_log_debug("plugin", "session %s event %s", session->label, json);
}

static void gateway_close_session(moat_plugin_session *handle)
{
    moat_session *session = moat_session_handle_get(handle);
    if (!session)
        return;
    session->end_reason = "closed by plugin";
    session->ending = true;
}

static uint64_t gateway_now_us(void)
{
    return (uint64_t)g_get_monotonic_time();
}

/* From attach the session does not run on its worker yet (its start task
 * comes after): the worker's clock is read from the same monotonic clock. */
static void gateway_set_timer(moat_plugin_session *handle, uint64_t delay_us)
{
    moat_session *session = moat_session_handle_get(handle);
    if (!session)
        return;
    uint64_t now = moat_worker_is_current(session->worker) ? moat_worker_now_us(session->worker)
                                                           : gateway_now_us();
    session->plugin_timer_us = delay_us == 0 ? 0 : now + delay_us;
}

/* PLI for the m-line's media SSRC, or each of its simulcast layers (FIR
 * when only FIR was negotiated), at most one per KEYFRAME_INTERVAL_US:
 * requests in between are coalesced. */
static int send_keyframe_request(moat_session *session, int media_index, uint64_t now);

/* Requests within KEYFRAME_INTERVAL_US of the last one are merged into one
 * pending request, which media_tick sends when the interval is over. */
static int gateway_request_keyframe(moat_plugin_session *handle, int media_index)
{
    moat_session *session = moat_session_handle_get(handle);
    if (!session || media_index < 0 || (size_t)media_index >= session->n_media)
        return -1;
    uint32_t ssrc = session->demux.primary[media_index];
    if (ssrc == 0 || session->media[media_index].kind != MOAT_MEDIA_KIND_VIDEO)
        return -1;
    uint64_t now = moat_worker_now_us(session->worker);
    uint64_t last = session->keyframe_requested_us[media_index];
    if (last != 0 && now - last < KEYFRAME_INTERVAL_US) {
        session->keyframe_pending |= 1u << media_index;
        return 1;
    }
    return send_keyframe_request(session, media_index, now);
}

/* PLI (FIR where only FIR was negotiated) for `ssrcs` of m-line `media_index`. */
static int send_keyframe_ssrcs(moat_session *session, int media_index, const uint32_t *ssrcs,
                               size_t n);

/* Whether `ssrc` is a media (not RTX) stream of m-line `index`. */
static bool is_media_stream(const moat_session *session, int index, uint32_t ssrc)
{
    if (ssrc != 0 && session->demux.primary[index] == ssrc)
        return true;
    for (size_t i = 0; i < session->demux.n_streams; i++) {
        const moat_demux_stream *s = &session->demux.streams[i];
        if (s->ssrc == ssrc && s->media_index == index && !s->rtx)
            return true;
    }
    return false;
}

/* The entry that coalesces requests for `ssrc`: its own, a free one, or
 * the one asked for longest ago. */
static size_t layer_keyframe_slot(moat_session *session, uint32_t ssrc)
{
    size_t oldest = 0;
    for (size_t i = 0; i < MOAT_SESSION_LAYER_KEYFRAMES; i++) {
        if (session->layer_keyframes[i].ssrc == ssrc)
            return i;
    }
    for (size_t i = 0; i < MOAT_SESSION_LAYER_KEYFRAMES; i++) {
        if (session->layer_keyframes[i].ssrc == 0)
            return i;
        if (session->layer_keyframes[i].requested_us <
            session->layer_keyframes[oldest].requested_us)
            oldest = i;
    }
    return oldest;
}

static int gateway_request_layer_keyframe(moat_plugin_session *handle, int media_index,
                                          uint32_t ssrc)
{
    moat_session *session = moat_session_handle_get(handle);
    if (!session || media_index < 0 || (size_t)media_index >= session->n_media ||
        session->media[media_index].kind != MOAT_MEDIA_KIND_VIDEO ||
        !is_media_stream(session, media_index, ssrc))
        return -1;
    size_t slot = layer_keyframe_slot(session, ssrc);
    moat_layer_keyframe *entry = &session->layer_keyframes[slot];
    if (entry->ssrc != ssrc)
        *entry = (moat_layer_keyframe){.ssrc = ssrc, .media_index = (int8_t)media_index};
    uint64_t now = moat_worker_now_us(session->worker);
    if (entry->requested_us != 0 && now - entry->requested_us < KEYFRAME_INTERVAL_US) {
        entry->pending = true;
        return 1;
    }
    if (send_keyframe_ssrcs(session, media_index, &ssrc, 1) != 0)
        return -1;
    entry->pending = false;
    entry->requested_us = now;
    return 0;
}

void moat_session_send_pending_keyframes(moat_session *session, uint64_t now)
{
    for (size_t i = 0; i < session->n_media && session->keyframe_pending; i++) {
        if ((session->keyframe_pending & (1u << i)) &&
            now - session->keyframe_requested_us[i] >= KEYFRAME_INTERVAL_US)
            send_keyframe_request(session, (int)i, now);
    }
    for (size_t i = 0; i < MOAT_SESSION_LAYER_KEYFRAMES && session->layer_keyframes[0].ssrc; i++) {
        moat_layer_keyframe *entry = &session->layer_keyframes[i];
        if (!entry->pending || now - entry->requested_us < KEYFRAME_INTERVAL_US)
            continue;
        entry->pending = false;
        if (entry->media_index >= 0 && (size_t)entry->media_index < session->n_media &&
            send_keyframe_ssrcs(session, entry->media_index, &entry->ssrc, 1) == 0)
            entry->requested_us = now;
    }
}

/* The media SSRCs of m-line `index`: its primary, and on a simulcast m-line
 * every layer the demux learned. Returns how many (at most max). */
static size_t keyframe_ssrcs(const moat_session *session, int index, uint32_t *ssrcs, size_t max)
{
    size_t n = 0;
    ssrcs[n++] = session->demux.primary[index];
    if (session->media[index].n_rids == 0)
        return n;
    for (size_t i = 0; i < session->demux.n_streams && n < max; i++) {
        const moat_demux_stream *s = &session->demux.streams[i];
        if (s->media_index == index && !s->rtx && s->ssrc != ssrcs[0])
            ssrcs[n++] = s->ssrc;
    }
    return n;
}

static int send_keyframe_request(moat_session *session, int media_index, uint64_t now)
{
    session->keyframe_pending &= ~(1u << media_index);
    uint32_t ssrcs[4];
    size_t n = keyframe_ssrcs(session, media_index, ssrcs, G_N_ELEMENTS(ssrcs));
    if (send_keyframe_ssrcs(session, media_index, ssrcs, n) != 0)
        return -1;
    session->keyframe_requested_us[media_index] = now;
    return 0;
}

static int send_keyframe_ssrcs(moat_session *session, int media_index, const uint32_t *ssrcs,
                               size_t n)
{
    const moat_media_info *m = &session->media[media_index];
    bool fir = m->n_codecs > 0 && !(m->codecs[0].rtcp_fb & MOAT_RTCP_FB_PLI) &&
               (m->codecs[0].rtcp_fb & MOAT_RTCP_FB_FIR);
    if (n > 4)
        n = 4;
    uint8_t buffer[96];
    moat_rtcp_writer writer;
    moat_rtcp_writer_init(&writer, buffer, sizeof buffer);
    int status = MOAT_RTP_OK;
    if (fir) {
        moat_rtcp_fir_entry entries[4];
        for (size_t i = 0; i < n; i++)
            entries[i] =
                (moat_rtcp_fir_entry){.ssrc = ssrcs[i], .sequence = ++session->fir_sequence};
        status = moat_rtcp_build_fir(&writer, session->rtcp_ssrc, entries, n);
    }
    for (size_t i = 0; i < n && !fir && status == MOAT_RTP_OK; i++)
        status = moat_rtcp_build_pli(&writer, session->rtcp_ssrc, ssrcs[i]);
    if (status != MOAT_RTP_OK ||
        moat_session_send_protected(session, buffer, writer.length, true) != 0)
        return -1;
    return 0;
}

static int gateway_session_worker(moat_plugin_session *handle)
{
    return handle ? (int)moat_worker_index(handle->worker) : -1;
}

static bool gateway_session_ending(moat_plugin_session *handle)
{
    return handle && (atomic_load(&handle->ending) || !moat_session_handle_get(handle));
}

/* Set once by the control thread before plugins load; read on it only. */
static const moat_config *plugin_config;

void moat_session_plugin_calls_set_config(const moat_config *config)
{
    plugin_config = config;
}

static int gateway_config_int(const char *section, const char *key, int fallback)
{
    int value = fallback;
    if (!moat_config_get_int(plugin_config, section, key, &value))
        return fallback;
    return value;
}

const moat_gateway_calls moat_session_gateway_calls = {
    .send_rtp = gateway_send_rtp,
    .send_rtcp = gateway_send_rtcp,
    .send_data = gateway_send_data,
    .push_event = gateway_push_event,
    .close_session = gateway_close_session,
    .now_us = gateway_now_us,
    .handle_ref = moat_session_handle_ref,
    .handle_unref = moat_session_handle_unref,
    .relay_rtp = moat_session_relay_rtp,
    .relay_rtp_many = moat_session_relay_rtp_many,
    .set_timer = gateway_set_timer,
    .request_keyframe = gateway_request_keyframe,
    .session_worker = gateway_session_worker,
    .publish_event = moat_events_publish,
    .relay_data = moat_session_relay_data,
    .config_int = gateway_config_int,
    .fanout_new = moat_session_fanout_new,
    .fanout_set = moat_session_fanout_set,
    .fanout_send = moat_session_fanout_send,
    .fanout_free = moat_session_fanout_free,
    .send_estimate = moat_session_bwe_estimate,
    .probe = moat_session_bwe_probe,
    .request_layer_keyframe = gateway_request_layer_keyframe,
    .send_rtp_forward = moat_session_send_rtp_forward,
    .session_ending = gateway_session_ending,
};

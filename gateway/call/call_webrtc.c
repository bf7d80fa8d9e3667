/* Owns the WebRTC legs of calls: the internal "call" plugin that bridges a
 * core session to call streams, and the session's creation and hang-up
 * (call_webrtc.h). */
#include "call/call_webrtc.h"

#include "call/call_webrtc_describe.h"

#include "call/call_sdp.h"
#include "session/session.h"
#include "session/session_registry.h"
#include "session/whip_session.h"
#include "transcode/transcode_sdp.h"
#include "transcode/transcoder.h"

#include <glib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One m-line's numbering towards the party: the sequence numbers and
 * timestamps it gets go on across a change of what feeds the m-line (a new
 * transcoder after a re-INVITE, a phone restarting its stream), which the
 * party's SRTP would otherwise drop as replays (sequence numbers behind
 * its last) or its jitter buffer misplace. Worker only. */
typedef struct {
    bool started;
    uint32_t source_ssrc;
    uint16_t last_in, seq_offset, last_out;
    uint32_t last_in_ts, ts_offset, last_out_ts, ts_step;
} numbering;

/* Shared by the plugin state of a session and the call's leg; fields other
 * than refs are touched on the worker only (after creation). */
typedef struct {
    numbering numbering[MOAT_CALL_SDP_MAX_MEDIA];
    atomic_int refs;
    bool unlinked; /* the call let go of its streams */
    moat_call_stream *streams[MOAT_CALL_SDP_MAX_MEDIA];
    size_t n_streams;
    int side;
    /* Set by attach (control thread, before the session starts). */
    const moat_gateway_calls *calls;
    moat_plugin_session *session;
    moat_media_info media[MOAT_CALL_SDP_MAX_MEDIA];
    size_t n_media;
} bridge;

struct moat_call_webrtc {
    moat_gateway *gateway;
    moat_worker *worker;
    char session_id[40];
    char *answer;
    char *described; /* what the party last got from Moat (call_webrtc_describe.h) */
    char party[MOAT_CALL_WEBRTC_IDENTITY_SIZE]; /* its ICE credentials and fingerprint */
    bridge *bridge;
    moat_session *pending; /* created, not started yet (owned) */
    /* Its handle, held from creation until the start hands it to the
     * streams (never before the worker owns the session). */
    moat_plugin_session *handle;
    const moat_gateway_calls *calls;
    moat_call_stream *streams[MOAT_CALL_SDP_MAX_MEDIA];
    size_t n_streams;
    int side;
};

static void bridge_unref(bridge *b)
{
    if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
        g_free(b);
}

/* Control thread: the bridge of the session being created, between
 * moat_whip_session_create and its synchronous attach. Never read on the
 * packet path. */
static bridge *attaching;

static void *call_attach(moat_plugin_session *session, const moat_session_info *info,
                         const char **error)
{
    if (!attaching) {
        *error = "call sessions are created by the call layer (ng offer) only";
        return NULL;
    }
    attaching->session = session;
    attaching->n_media =
        info->n_media < MOAT_CALL_SDP_MAX_MEDIA ? info->n_media : MOAT_CALL_SDP_MAX_MEDIA;
    memcpy(attaching->media, info->media, attaching->n_media * sizeof *info->media);
    atomic_fetch_add_explicit(&attaching->refs, 1, memory_order_relaxed);
    return attaching;
}

static void call_detach(void *state)
{
    bridge_unref(state);
}

static void call_on_media(void *state, moat_rtp_packet *packet)
{
    bridge *b = state;
    if (b->unlinked || packet->media_index < 0 || (size_t)packet->media_index >= b->n_streams)
        return;
    moat_call_stream_inject(b->streams[packet->media_index], b->side, packet->data, packet->length);
}

/* What the call sends the party (relay_rtp) leaves with the SSRC Moat's
 * answer announced on the m-line carrying its payload type, so that the
 * core's sender reports and retransmissions cover it. */
static uint32_t read32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void write32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* A jump this far either way is a new stream, not loss or reordering. */
#define RESTART_DISTANCE 3000u

/* Rewrites the packet's sequence number and timestamp so that a restarted
 * source continues right after what the party got last. */
static void continue_numbering(numbering *n, uint8_t *data)
{
    uint32_t source = read32(data + 8), ts = read32(data + 4);
    uint16_t seq = (uint16_t)(data[2] << 8 | data[3]);
    uint16_t ahead = (uint16_t)(seq - n->last_in), behind = (uint16_t)(n->last_in - seq);
    bool restart = n->started && (source != n->source_ssrc ||
                                  (ahead > RESTART_DISTANCE && behind > RESTART_DISTANCE));
    if (restart) {
        n->seq_offset = (uint16_t)(n->last_out + 1u - seq);
        n->ts_offset = n->last_out_ts + n->ts_step - ts;
    }
    uint16_t out = (uint16_t)(seq + n->seq_offset);
    uint32_t out_ts = ts + n->ts_offset;
    if (!n->started || restart || (ahead > 0 && ahead < 0x8000u)) {
        if (n->started && !restart && ahead == 1 && ts != n->last_in_ts)
            n->ts_step = ts - n->last_in_ts; /* one packet's duration */
        n->last_in = seq;
        n->last_in_ts = ts;
        n->last_out = out;
        n->last_out_ts = out_ts;
    }
    n->started = true;
    n->source_ssrc = source;
    data[2] = (uint8_t)(out >> 8);
    data[3] = (uint8_t)out;
    write32(data + 4, out_ts);
}

static void call_on_relay(void *state, moat_rtp_packet *packet)
{
    bridge *b = state;
    uint32_t ssrc = 0;
    size_t index = 0;
    for (size_t i = 0; i < b->n_media && !ssrc; i++) {
        const moat_media_info *media = &b->media[i];
        for (size_t k = 0; k < media->n_payload_types; k++)
            if (media->payload_types[k] == packet->payload_type) {
                ssrc = media->local_ssrc;
                index = i;
            }
    }
    if (!ssrc || packet->length < 12)
        return;
    continue_numbering(&b->numbering[index], packet->data);
    write32(packet->data + 8, ssrc);
    b->calls->send_rtp(b->session, packet->data, packet->length);
}

/* resource: the decimal index of the call's worker. */
static int call_place(const char *endpoint, const char *resource, unsigned n_workers)
{
    (void)endpoint;
    char *end = NULL;
    long index = strtol(resource, &end, 10);
    if (end == resource || *end || index < 0 || (unsigned long)index >= n_workers)
        return -1;
    return (int)index;
}

static const moat_plugin call_plugin = {
    .api_version = MOAT_PLUGIN_API_VERSION,
    .name = "call",
    .description = "WebRTC legs of calls relayed for a SIP proxy (ng protocol)",
    .attach = call_attach,
    .detach = call_detach,
    .on_media = call_on_media,
    .on_relay = call_on_relay,
    .place = call_place,
};

/* The codec the party will send on m-line `index` of our answer: its first
 * one the transcoder runs (with its telephone-event); false for other
 * m-lines (video, data) and malformed ones. */
static bool first_audio_codec(const char *answer, size_t index, moat_transcode_sdp_codecs *codecs,
                              moat_transcoder_codec *out)
{
    char error[160];
    if (moat_transcode_sdp_codecs_of(answer, strlen(answer), index, codecs, error, sizeof error) !=
            0 ||
        codecs->n_codecs == 0 || !moat_transcoder_supports(codecs->codecs[0].name))
        return false;
    const moat_transcode_sdp_codec *first = &codecs->codecs[0];
    *out = (moat_transcoder_codec){.name = first->name,
                                   .clock_rate = first->clock_rate,
                                   .channels = first->channels,
                                   .payload_type = first->payload_type};
    for (size_t i = 1; i < codecs->n_codecs; i++) {
        const moat_transcode_sdp_codec *c = &codecs->codecs[i];
        if (g_ascii_strcasecmp(c->name, "telephone-event") == 0 &&
            c->clock_rate == first->clock_rate) {
            out->dtmf_payload_type = c->payload_type;
            out->dtmf_clock_rate = c->clock_rate;
        }
    }
    return true;
}

/* Our answer with each audio m-line down to its first codec: a browser
 * sends the first codec of the answer, and the call must know which one
 * to relay or transcode (a phone answering another codec of the list
 * would otherwise get Opus). Takes `answer`. */
static char *first_codecs_only(char *answer, size_t n_media)
{
    for (size_t i = 0; i < n_media; i++) {
        moat_transcode_sdp_codecs codecs;
        moat_transcoder_codec codec;
        if (!first_audio_codec(answer, i, &codecs, &codec))
            continue;
        GString *out = g_string_new(NULL);
        char error[160];
        if (moat_transcode_sdp_restrict(answer, strlen(answer), i, &codec, out, error,
                                        sizeof error) != 0) {
            g_string_free(out, TRUE);
            continue;
        }
        g_free(answer);
        answer = g_string_free(out, FALSE);
    }
    return answer;
}

moat_call_webrtc *moat_call_webrtc_new(const moat_call_webrtc_env *env, moat_call_worker *context,
                                       const char *offer, size_t length,
                                       moat_call_stream *const *streams, size_t n_streams, int side,
                                       char *error, size_t error_size)
{
    return moat_call_webrtc_new_local(env, context, offer, length, NULL, streams, n_streams, side,
                                      error, error_size);
}

moat_call_webrtc *moat_call_webrtc_new_local(const moat_call_webrtc_env *env,
                                             moat_call_worker *context, const char *offer,
                                             size_t length, const moat_whip_local *local,
                                             moat_call_stream *const *streams, size_t n_streams,
                                             int side, char *error, size_t error_size)
{
    if (!env->gateway || !env->calls) {
        snprintf(error, error_size, "WebRTC legs need the gateway's sessions");
        return NULL;
    }
    moat_worker *worker = moat_call_worker_worker(context);
    bridge *b = g_new0(bridge, 1);
    atomic_init(&b->refs, 1);
    b->n_streams = n_streams < MOAT_CALL_SDP_MAX_MEDIA ? n_streams : MOAT_CALL_SDP_MAX_MEDIA;
    memcpy(b->streams, streams, b->n_streams * sizeof *streams);
    b->side = side & 1;
    b->calls = env->calls;
    char resource[16];
    snprintf(resource, sizeof resource, "%u", moat_worker_index(worker));
    moat_whip_created created;
    attaching = b;
    moat_whip_setup_result result =
        moat_whip_session_create_local(env->gateway, &call_plugin, "call", resource, offer, length,
                                       local, &created, error, error_size);
    attaching = NULL;
    if (result != MOAT_WHIP_SETUP_OK) {
        bridge_unref(b);
        return NULL;
    }
    if (created.record->worker != worker) {
        /* The streams' packet path and the session must share a thread. */
        snprintf(error, error_size, "the session could not be placed on the call's worker");
        char id[sizeof created.record->id];
        g_strlcpy(id, created.record->id, sizeof id);
        moat_session_free(created.session);
        moat_session_registry_remove(env->gateway->sessions, id);
        g_free(created.answer);
        bridge_unref(b);
        return NULL;
    }
    moat_call_webrtc *leg = g_new0(moat_call_webrtc, 1);
    leg->gateway = env->gateway;
    leg->worker = created.record->worker;
    g_strlcpy(leg->session_id, created.record->id, sizeof leg->session_id);
    leg->answer = first_codecs_only(created.answer, n_streams);
    leg->described = g_strdup(leg->answer);
    if (!moat_call_webrtc_identity(offer, length, leg->party))
        leg->party[0] = '\0'; /* never the same party: a new session each time */
    leg->bridge = b;
    /* Until the start, the worker must not drive this session (the control
     * thread may still free it): the legs only stop accepting and relaying. */
    leg->handle = moat_session_plugin_handle(created.session);
    env->calls->handle_ref(leg->handle);
    leg->calls = env->calls;
    leg->n_streams = b->n_streams;
    memcpy(leg->streams, streams, b->n_streams * sizeof *streams);
    leg->side = side & 1;
    for (size_t i = 0; i < b->n_streams; i++)
        moat_call_stream_reserve_webrtc(streams[i], side);
    leg->pending = created.session;
    return leg;
}

const char *moat_call_webrtc_answer(const moat_call_webrtc *leg)
{
    return leg->answer;
}

size_t moat_call_webrtc_n_streams(const moat_call_webrtc *leg)
{
    return leg->n_streams;
}

bool moat_call_webrtc_same_party(const moat_call_webrtc *leg, const char *sdp, size_t length)
{
    char party[MOAT_CALL_WEBRTC_IDENTITY_SIZE];
    size_t m_lines = 0;
    for (const char *m = sdp; (m = g_strstr_len(m, (gssize)(sdp + length - m), "\nm=")); m++)
        m_lines++; /* the session bridges exactly its streams */
    return leg->party[0] && m_lines == leg->n_streams &&
           moat_call_webrtc_identity(sdp, length, party) && strcmp(party, leg->party) == 0;
}

/* "<ufrag> <pwd> <fingerprint>": the fingerprint part (after two spaces). */
static const char *fingerprint_part(const char *identity)
{
    const char *space = strchr(identity, ' ');
    space = space ? strchr(space + 1, ' ') : NULL;
    return space ? space + 1 : "";
}

bool moat_call_webrtc_restart_ice(moat_call_webrtc *leg, const char *sdp, size_t length)
{
    char party[MOAT_CALL_WEBRTC_IDENTITY_SIZE], error[160];
    if (leg->pending || !leg->party[0] || !moat_call_webrtc_identity(sdp, length, party) ||
        strcmp(fingerprint_part(party), fingerprint_part(leg->party)) != 0)
        return false;
    moat_session_record *record =
        moat_session_registry_find(leg->gateway->sessions, leg->session_id);
    char **parts = g_strsplit(party, " ", 3);
    bool ok =
        record && g_strv_length(parts) == 3 && strlen(parts[0]) <= 256 && strlen(parts[1]) <= 256;
    char *fragment = ok ? moat_whip_session_restart(leg->gateway, record, parts[0], parts[1], error,
                                                    sizeof error)
                        : NULL;
    char *described = fragment ? moat_call_webrtc_new_credentials(
                                     leg->described, record->local_ufrag, record->local_pwd)
                               : NULL;
    g_strfreev(parts);
    g_free(fragment);
    if (!described)
        return false;
    g_free(leg->described);
    leg->described = described;
    g_strlcpy(leg->party, party, sizeof leg->party);
    return true;
}

const char *moat_call_webrtc_describe(moat_call_webrtc *leg, const char *other, size_t length)
{
    char *text = moat_call_webrtc_redescribe(leg->described, other, length);
    if (text) {
        g_free(leg->described);
        leg->described = text;
    }
    return leg->described;
}

void moat_call_webrtc_set_described(moat_call_webrtc *leg, const char *text)
{
    g_free(leg->described);
    leg->described = g_strdup(text);
}

void moat_call_webrtc_start(moat_call_webrtc *leg)
{
    if (!leg->pending)
        return;
    moat_whip_session_start(leg->pending, leg->worker, NULL, NULL, NULL);
    leg->pending = NULL;
    /* After the start task on the same worker (FIFO): the worker owns the
     * session before its streams may relay to it. */
    for (size_t i = 0; i < leg->n_streams; i++)
        moat_call_stream_set_webrtc(leg->streams[i], leg->side, leg->handle, leg->calls);
    leg->calls->handle_unref(leg->handle);
    leg->handle = NULL;
}

static void unlink_task(moat_worker *worker, void *data)
{
    (void)worker;
    bridge *b = data;
    b->unlinked = true;
    bridge_unref(b);
}

static void unlink_release(void *data)
{
    bridge_unref(data);
}

void moat_call_webrtc_free(moat_call_webrtc *leg)
{
    if (!leg)
        return;
    /* Before the streams' own free task (same worker, FIFO). */
    moat_worker_post(leg->worker, unlink_task, leg->bridge, unlink_release);
    moat_session_record *record =
        moat_session_registry_find(leg->gateway->sessions, leg->session_id);
    if (leg->handle)
        leg->calls->handle_unref(leg->handle);
    if (leg->pending) {
        /* never ran, and its streams never got its handle: nothing on the
         * worker touches it */
        moat_session_free(leg->pending);
        moat_session_registry_remove(leg->gateway->sessions, leg->session_id);
    } else if (record) {
        moat_whip_session_hang_up(leg->gateway, record);
    }
    g_free(leg->answer);
    g_free(leg->described);
    g_free(leg);
}

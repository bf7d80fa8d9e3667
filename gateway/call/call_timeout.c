/* Owns ending calls whose media stopped (call_registry.h, the media
 * timeout): the one periodic sweep over the registry, each call's clock of
 * its last activity, which limit applies to it, and the end of a call that
 * passed it (counted, logged rate-limited) and of a restored call nobody
 * came back to. Control thread. */
#include "call/call_registry.h"
#include "call/call_registry_private.h"

#include <stdio.h>

#define TIMEOUT_LOG_BURST 20u
#define TIMEOUT_LOG_US    (10 * G_USEC_PER_SEC)

/* Why a sweep ends a call. */
typedef enum {
    END_NONE,
    END_MEDIA,         /* MOAT_CALL_TIMEOUT_MEDIA */
    END_SILENT,        /* MOAT_CALL_TIMEOUT_SILENT */
    END_RESTORED_IDLE, /* restore_idle_s: moat_calls_restored_total{outcome="idle"} */
} end_reason;

static gboolean sweep_tick(void *data)
{
    moat_call_registry_sweep(data, g_get_monotonic_time());
    return G_SOURCE_CONTINUE;
}

/* A quarter of the shortest limit set, at most a second; 0: none set. */
static unsigned sweep_interval_ms(const moat_call_registry *registry)
{
    const int limits[] = {registry->media_timeout_s, registry->silent_timeout_s,
                          registry->restore_idle_s};
    unsigned interval = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(limits); i++) {
        if (limits[i] <= 0)
            continue;
        unsigned quarter = (unsigned)MIN(limits[i], 4) * 250u; /* ms, at most 1000 */
        interval = interval ? MIN(interval, quarter) : quarter;
    }
    return interval;
}

void moat_call_timeout_stop(moat_call_registry *registry)
{
    if (registry->sweep_timer)
        g_source_remove(registry->sweep_timer);
    registry->sweep_timer = 0;
    registry->sweep_interval_ms = 0;
}

void moat_call_timeout_init(moat_call_registry *registry, int media_timeout_s, int silent_timeout_s)
{
    registry->media_timeout_s = media_timeout_s;
    registry->silent_timeout_s = silent_timeout_s;
    moat_log_limiter_init(&registry->timeout_log, TIMEOUT_LOG_BURST, TIMEOUT_LOG_US);
    moat_call_timeout_arm(registry);
}

void moat_call_timeout_arm(moat_call_registry *registry)
{
    unsigned interval = sweep_interval_ms(registry);
    if (registry->sweep_timer && interval == registry->sweep_interval_ms)
        return;
    moat_call_timeout_stop(registry);
    if (interval == 0)
        return;
    registry->sweep_interval_ms = interval;
    registry->sweep_timer = g_timeout_add(interval, sweep_tick, registry);
}

void moat_call_timeout_note_signal(moat_call *call)
{
    call->media_at_us = g_get_monotonic_time();
}

static uint64_t packets_received(const moat_call *call)
{
    uint64_t total = 0;
    for (size_t i = 0; i < call->n_streams; i++)
        total += moat_call_stream_received(call->streams[i]);
    return total;
}

/* Whether m-line `index` goes both ways in both parties' latest SDPs: a
 * port on both sides (a refused line is 0 in the answer, whatever the
 * offer said), sendrecv on both, and an address (a phone's c=0.0.0.0 is
 * hold; a WebRTC party's c= says nothing, its session knows where it is). */
static bool line_flows(const moat_call *call, size_t index)
{
    for (int side = 0; side < 2; side++) {
        const moat_call_sdp_media *media = &call->sdp[side].media[index];
        if (media->port == 0 || media->direction != MOAT_CALL_SDP_SENDRECV ||
            (!call->webrtc[side] && media->rtp.sin6_family != AF_INET6))
            return false;
    }
    return true;
}

/* Whether the parties are expected to send: answered, and at least one
 * m-line goes both ways (audio with the camera off still does). Otherwise
 * (ringing, on hold) the call gets the silent timeout. */
static bool media_expected(const moat_call *call)
{
    if (!call->has_sdp[0] || !call->has_sdp[1])
        return false; /* not answered yet: ringing */
    size_t n = MIN(call->sdp[0].n_media, call->sdp[1].n_media);
    for (size_t i = 0; i < n; i++)
        if (line_flows(call, i))
            return true;
    return false;
}

static end_reason verdict(const moat_call_registry *registry, moat_call *call, int64_t now_us)
{
    if (call->delete_timer)
        return END_NONE; /* deleted: its delete-delay ends it */
    uint64_t packets = packets_received(call);
    if (packets != call->media_packets) {
        call->media_packets = packets;
        call->media_at_us = now_us;
        call->restore_deadline_us = 0; /* its parties are back */
        return END_NONE;
    }
    if (call->restore_deadline_us && now_us >= call->restore_deadline_us)
        return END_RESTORED_IDLE;
    bool expected = media_expected(call);
    int limit_s = expected ? registry->media_timeout_s : registry->silent_timeout_s;
    if (limit_s <= 0 || now_us - call->media_at_us < (int64_t)limit_s * G_USEC_PER_SEC)
        return END_NONE;
    return expected ? END_MEDIA : END_SILENT;
}

/* The call-id for a log field: printable ASCII without quotes or
 * backslashes (others become '?'), at most 64 characters. */
static void loggable_id(const char *id, char *out, size_t size)
{
    size_t n = 0;
    for (; id[n] && n < 64 && n + 1 < size; n++) {
        unsigned char c = (unsigned char)id[n];
        out[n] = c > 0x20 && c < 0x7f && c != '"' && c != '\\' ? (char)c : '?';
    }
    out[n] = '\0';
}

static void log_timeout(moat_call_registry *registry, const moat_call *call, end_reason reason,
                        int64_t now_us)
{
    uint64_t suppressed = 0;
    if (!moat_log_limiter_allow(&registry->timeout_log, (uint64_t)now_us, &suppressed))
        return;
    static const char *const names[] = {"", "media", "silent", "restored_idle"};
    char id[65], fields[192];
    loggable_id(call->id, id, sizeof id);
    snprintf(fields, sizeof fields,
             "call_id=\"%s\" timeout=%s idle_s=%" G_GINT64_FORMAT " suppressed=%" G_GUINT64_FORMAT,
             id, names[reason], (now_us - call->media_at_us) / G_USEC_PER_SEC, suppressed);
    moat_log_write(MOAT_LOG_INFO, "call", fields,
                   "call ended: no media received (ports freed, as an ng delete)");
}

static void count_end(moat_call_registry *registry, end_reason reason)
{
    if (reason == END_RESTORED_IDLE) {
        registry->restored[MOAT_CALL_RESTORE_IDLE]++;
        return;
    }
    moat_call_timeout timeout =
        reason == END_MEDIA ? MOAT_CALL_TIMEOUT_MEDIA : MOAT_CALL_TIMEOUT_SILENT;
    registry->timed_out[timeout]++;
}

void moat_call_registry_sweep(moat_call_registry *registry, int64_t now_us)
{
    /* Decided first, ended after: ending a call (its WebRTC sessions, its
     * record) never runs inside the walk over the table. */
    GPtrArray *ended = g_ptr_array_new_with_free_func(g_free);
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, registry->calls);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        moat_call *call = value;
        end_reason reason = verdict(registry, call, now_us);
        if (reason == END_NONE)
            continue;
        count_end(registry, reason);
        log_timeout(registry, call, reason, now_us);
        g_ptr_array_add(ended, g_strdup(call->id));
    }
    for (guint i = 0; i < ended->len; i++)
        g_hash_table_remove(registry->calls, g_ptr_array_index(ended, i));
    g_ptr_array_unref(ended);
}

uint64_t moat_call_registry_timed_out(const moat_call_registry *registry, moat_call_timeout timeout)
{
    return (unsigned)timeout < MOAT_CALL_TIMEOUTS ? registry->timed_out[timeout] : 0;
}

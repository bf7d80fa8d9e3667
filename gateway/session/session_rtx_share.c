/* The shared retransmission sources of one worker, and the forwarded-send
 * and NACK-rebuild calls that use them (session_internal.h,
 * plugin.h send_rtp_forward).
 *
 * A source is one forwarded stream (a publisher's SSRC in a room: the
 * plugin's source_key) as it reaches this worker: its packets are kept once
 * here, keyed by their own sequence numbers, however many of the worker's
 * sessions forward them; each session's stream keeps only a map from its
 * sequence numbers to (key, id, source sequence, rewrite)
 * (retransmit_map.h).
 *
 * Ownership and threads: the table belongs to its worker
 * (moat_worker_set_local, freed with it) and is used on its thread only, so
 * nothing here is shared across threads. Sources are freed by the table
 * alone, once no packet was stored in them for the retransmission age (all
 * they hold is then too old to resend): a publisher that left, switched
 * layer or stopped needs no signal. The sweep runs at most once a second,
 * from forwarding and from the sessions' media tick (a worker left with no
 * session keeps its last sources until it is freed). Maps name a source by key and an id
 * never reused, so a freed (or freed and re-created) source is found gone,
 * never read after free.
 *
 * The table holds at most MOAT_SESSION_RTX_SHARE_MAX_SOURCES: past it a new key gets no
 * source (its packets are forwarded, not kept; its NACKs are counted as
 * nack_gone), and the sources already there are untouched. */
#include "session/session_internal.h"

#include "rtp/rtp_bytes.h"
#include "rtp/rtp_packet.h"

#include <glib.h>

/* Sources are swept for idleness at most this often. */
#define SHARE_SWEEP_US 1000000ull
/* Map slots per forwarded stream: at least a second of packets. */
#define MAP_AUDIO_SLOTS   64
#define MAP_VIDEO_SLOTS   512
#define MAP_MIN_RESEND_US 10000u
#define RESIZE_EVERY      16u
/* The id a map records for a packet that got no source: never a source's,
 * so its NACKs resolve to nothing (nack_gone). */
#define SHARE_ID_NONE UINT32_MAX

typedef struct {
    uint64_t key; /* the hash table's key points here */
    uint32_t id;
    bool video;
    moat_retransmit_cache *cache; /* NULL while memory is short */
    uint64_t cache_shrunk_us;
    moat_retransmit_budget budget; /* the source's rates, to size cache */
    uint32_t stored;
    uint64_t last_store_us;
} share_source;

typedef struct {
    GHashTable *by_key; /* &source->key -> source (owned) */
    uint32_t last_id;
    uint64_t swept_us;
} share_table;

static void source_free(gpointer data)
{
    share_source *s = data;
    moat_retransmit_cache_free(s->cache);
    g_free(s);
}

static void table_free(void *data)
{
    share_table *t = data;
    g_hash_table_destroy(t->by_key);
    g_free(t);
}

/* The worker's table, made at its first forwarded packet. */
static share_table *table_of(moat_worker *worker)
{
    share_table *t = moat_worker_local(worker);
    if (t)
        return t;
    t = g_new0(share_table, 1);
    t->by_key = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, source_free);
    moat_worker_set_local(worker, t, table_free);
    return t;
}

static gboolean idle(gpointer key, gpointer value, gpointer user)
{
    (void)key;
    const share_source *s = value;
    uint64_t now = *(const uint64_t *)user;
    return now - s->last_store_us > MOAT_SESSION_RETRANSMIT_MAX_AGE_US;
}

static void sweep(share_table *t, uint64_t now)
{
    if (now - t->swept_us < SHARE_SWEEP_US)
        return;
    t->swept_us = now;
    g_hash_table_foreach_remove(t->by_key, idle, &now);
}

/* 0 means empty (retransmit_map.h), SHARE_ID_NONE no source. */
static uint32_t next_id(share_table *t)
{
    do
        t->last_id++;
    while (t->last_id == 0 || t->last_id == SHARE_ID_NONE);
    return t->last_id;
}

/* The key's source, made at its first packet; NULL when the table is full. */
static share_source *source_of(share_table *t, uint64_t key, bool video, uint64_t now)
{
    share_source *s = g_hash_table_lookup(t->by_key, &key);
    if (s || g_hash_table_size(t->by_key) >= MOAT_SESSION_RTX_SHARE_MAX_SOURCES)
        return s;
    s = g_new0(share_source, 1);
    s->key = key;
    s->id = next_id(t);
    s->video = video;
    s->last_store_us = now;
    moat_retransmit_budget_init(&s->budget);
    g_hash_table_insert(t->by_key, &s->key, s);
    return s;
}

/* Keeps the source packet unless another session of this worker already
 * kept it (its slot holds that sequence number). */
static void source_keep(share_source *s, const uint8_t *packet, size_t length, uint64_t now)
{
    uint16_t sequence = moat_rd16(packet + 2);
    const uint8_t *held;
    size_t held_length;
    uint64_t held_us;
    if (s->cache &&
        moat_retransmit_cache_get_stored(s->cache, sequence, &held, &held_length, &held_us) == 0 &&
        held_length == length && now - held_us <= MOAT_SESSION_RETRANSMIT_MAX_AGE_US)
        return;
    moat_retransmit_budget_on_send(&s->budget, length, now);
    if (!s->cache || s->stored % RESIZE_EVERY == 0)
        moat_session_size_cache(&s->cache, &s->cache_shrunk_us, &s->budget, s->video, 0, now);
    s->stored++;
    s->last_store_us = now;
    if (s->cache)
        moat_retransmit_cache_store(s->cache, packet, length, now);
}

void moat_session_rtx_share_sweep(moat_worker *worker, uint64_t now_us)
{
    share_table *t = moat_worker_local(worker);
    if (t)
        sweep(t, now_us);
}

static moat_retransmit_map *map_of(moat_outgoing_stream *stream)
{
    if (!stream->map) {
        bool video = stream->kind == MOAT_MEDIA_KIND_VIDEO;
        stream->map =
            moat_retransmit_map_new(video ? MAP_VIDEO_SLOTS : MAP_AUDIO_SLOTS, MAP_MIN_RESEND_US,
                                    MOAT_SESSION_RETRANSMIT_MAX_AGE_US);
    }
    return stream->map;
}

int moat_session_send_rtp_forward(moat_plugin_session *handle, uint8_t *packet, size_t *length,
                                  uint64_t source_key, const moat_rtp_rewrite *rewrite)
{
    moat_session *session = moat_session_handle_get(handle);
    moat_rtp_header source;
    if (!session || !length || !rewrite || moat_rtp_parse(packet, *length, &source) != MOAT_RTP_OK)
        return -1;
    moat_outgoing_stream *stream = moat_session_outgoing_stream(session, rewrite->ssrc);
    uint64_t now = moat_worker_now_us(session->worker);
    share_source *shared = NULL;
    bool shareable = false;
    if (stream && stream->nack && source_key != 0 && *length <= MOAT_RETRANSMIT_MAX_PACKET) {
        share_table *t = table_of(session->worker);
        sweep(t, now);
        shared = source_of(t, source_key, stream->kind == MOAT_MEDIA_KIND_VIDEO, now);
        shareable = true;
        if (shared)
            source_keep(shared, packet, *length, now);
    }
    if (moat_rtp_rewrite_apply(packet, length, rewrite) != MOAT_RTP_OK)
        return -1;
    if (stream) {
        moat_retransmit_budget_on_send(&stream->budget, *length, now);
        if (shareable && map_of(stream))
            moat_retransmit_map_record(stream->map, source_key, shared ? shared->id : SHARE_ID_NONE,
                                       source.sequence, rewrite);
    }
    /* The rewrite leaves the payload's length alone. */
    return moat_session_send_rtp_accounted(session, stream, packet, *length, source.payload_length);
}

static const moat_retransmit_cache *resolve(void *user, uint64_t key, uint32_t id)
{
    share_table *t = user;
    const share_source *s = t ? g_hash_table_lookup(t->by_key, &key) : NULL;
    return s && s->id == id ? s->cache : NULL;
}

int moat_session_rebuild_forwarded(moat_session *session, moat_outgoing_stream *stream,
                                   uint16_t sequence, uint64_t now_us, uint8_t *out, size_t *length)
{
    if (!stream->map)
        return MOAT_RTP_ERR_NOT_FOUND;
    return moat_retransmit_map_rebuild(stream->map, sequence, now_us, resolve,
                                       moat_worker_local(session->worker), out,
                                       MOAT_RETRANSMIT_MAX_PACKET, length);
}

static void add_bytes(gpointer key, gpointer value, gpointer user)
{
    (void)key;
    const share_source *s = value;
    if (s->cache)
        *(size_t *)user += moat_retransmit_cache_bytes(s->cache);
}

size_t moat_session_rtx_share_sources(moat_worker *worker, size_t *bytes)
{
    share_table *t = moat_worker_local(worker);
    *bytes = 0;
    if (!t)
        return 0;
    g_hash_table_foreach(t->by_key, add_bytes, bytes);
    return g_hash_table_size(t->by_key);
}

/* Live statistics gathered from the workers twice a second (stats_snapshot.h). */
#include "session/stats_snapshot.h"

#include "session/session.h"

#include <jansson.h>
#include <stdlib.h>

/* Beyond this many transports /metrics keeps only totals (cardinality). */
#define MAX_TRANSPORT_SERIES 100
#define REFRESH_MS           500

typedef struct snapshot_reply snapshot_reply;

struct moat_stats_snapshot {
    moat_gateway *gateway;
    guint timer;
    /* Per worker, as JSON text (owned, free()): a few hundred bytes a
     * session where the tree took about 4 KB (docs/MEMORY.md). */
    char **latest;
    unsigned n_workers;
    /* Replies in flight hold a reference, so a stop never frees under them. */
    gint refcount;
    bool stopped;
};

struct snapshot_reply {
    moat_stats_snapshot *snapshot;
    unsigned worker;
    json_t *description;
};

static void snapshot_unref(moat_stats_snapshot *snapshot)
{
    if (!g_atomic_int_dec_and_test(&snapshot->refcount))
        return;
    for (unsigned i = 0; i < snapshot->n_workers; i++)
        free(snapshot->latest[i]);
    g_free(snapshot->latest);
    g_free(snapshot);
}

/* On the control thread, the only one that touches latest[] and stopped. */
static gboolean store_reply(gpointer data)
{
    snapshot_reply *reply = data;
    moat_stats_snapshot *snapshot = reply->snapshot;
    json_t *description = g_atomic_pointer_get(&reply->description);
    if (!snapshot->stopped && reply->worker < snapshot->n_workers && description) {
        char *text = json_dumps(description, JSON_COMPACT);
        if (text) {
            free(snapshot->latest[reply->worker]);
            snapshot->latest[reply->worker] = text;
        }
    }
    return G_SOURCE_REMOVE;
}

static void free_reply(gpointer data)
{
    snapshot_reply *reply = data;
    json_decref(reply->description);
    snapshot_unref(reply->snapshot);
    g_free(reply);
}

/* On the worker: the description goes back to the control thread through
 * a source queued on the default main context. (g_main_context_invoke would
 * run store_reply right here, on the worker, whenever nobody held that
 * context: latest[] written while the control thread reads it.) */
static void describe_task(moat_worker *worker, void *data)
{
    snapshot_reply *reply = data;
    /* Published with release order, taken with acquire in store_reply: the
     * hand-off does not rest on GLib's futex-based locks, which
     * ThreadSanitizer cannot see. */
    g_atomic_pointer_set(&reply->description, moat_worker_describe(worker));
    GSource *source = g_idle_source_new();
    g_source_set_priority(source, G_PRIORITY_DEFAULT);
    g_source_set_callback(source, store_reply, reply, free_reply);
    g_source_attach(source, NULL);
    g_source_unref(source);
}

static void release_reply(void *data)
{
    free_reply(data);
}

static gboolean refresh(gpointer data)
{
    moat_stats_snapshot *snapshot = data;
    for (unsigned i = 0; i < snapshot->n_workers; i++) {
        snapshot_reply *reply = g_new0(snapshot_reply, 1);
        reply->snapshot = snapshot;
        reply->worker = i;
        g_atomic_int_inc(&snapshot->refcount);
        moat_worker_post(snapshot->gateway->workers[i], describe_task, reply, release_reply);
    }
    return G_SOURCE_CONTINUE;
}

moat_stats_snapshot *moat_stats_snapshot_start(moat_gateway *gateway)
{
    moat_stats_snapshot *snapshot = g_new0(moat_stats_snapshot, 1);
    snapshot->gateway = gateway;
    snapshot->n_workers = gateway->n_workers;
    snapshot->latest = g_new0(char *, gateway->n_workers);
    snapshot->refcount = 1;
    snapshot->timer = g_timeout_add(REFRESH_MS, refresh, snapshot);
    refresh(snapshot);
    return snapshot;
}

void moat_stats_snapshot_stop(moat_stats_snapshot *snapshot)
{
    if (!snapshot)
        return;
    g_source_remove(snapshot->timer);
    snapshot->stopped = true;
    snapshot_unref(snapshot);
}

/* The public label of the session a worker described as `id`; false when
 * the session has left the registry. */
static bool public_label(moat_stats_snapshot *snapshot, const char *id, char *out, size_t size)
{
    const moat_session_record *record =
        id ? moat_session_registry_find(snapshot->gateway->sessions, id) : NULL;
    if (!record)
        return false;
    g_snprintf(out, size, "%" G_GUINT64_FORMAT, record->serial);
    return true;
}

/* A worker's latest description as a tree (the caller's reference), NULL
 * before its first. */
static json_t *latest_tree(const moat_stats_snapshot *snapshot, unsigned worker)
{
    const char *text = snapshot->latest[worker];
    return text ? json_loads(text, 0, NULL) : NULL;
}

char *moat_stats_snapshot_json(moat_stats_snapshot *snapshot, bool reveal_resources)
{
    json_t *workers = json_array();
    json_t *transports = json_array();
    for (unsigned i = 0; i < snapshot->n_workers; i++) {
        json_t *copy = latest_tree(snapshot, i);
        if (!copy)
            continue;
        json_t *sessions = json_object_get(copy, "transports");
        size_t index;
        json_t *transport;
        json_array_foreach(sessions, index, transport)
        {
            char label[24];
            const char *id = json_string_value(json_object_get(transport, "id"));
            if (!public_label(snapshot, id, label, sizeof label))
                continue;
            json_t *entry = json_deep_copy(transport);
            if (reveal_resources)
                json_object_set_new(entry, "resource", json_string(id));
            json_object_set_new(entry, "id", json_string(label));
            json_array_append_new(transports, entry);
        }
        json_object_del(copy, "transports");
        json_array_append_new(workers, copy);
    }
    json_t *root = json_pack("{s:f, s:o, s:o}", "time", g_get_real_time() / 1e6, "workers", workers,
                             "transports", transports);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    char *result = g_strdup(text ? text : "{\"workers\":[],\"transports\":[]}");
    free(text);
    return result;
}

/* The sender-side estimate toward each transport-cc peer (bounded series)
 * and how many peers have one. */
static void render_bwe(moat_stats_snapshot *snapshot, json_t *const *trees, GString *out)
{
    g_string_append(out, "# HELP moat_bwe_estimate_bps The gateway's bandwidth estimate toward a "
                         "transport-cc peer (bits/s)\n# TYPE moat_bwe_estimate_bps gauge\n");
    GString *acked = g_string_new("# HELP moat_bwe_acked_bps What the peer's feedback says "
                                  "arrived (bits/s)\n# TYPE moat_bwe_acked_bps gauge\n");
    unsigned written = 0, estimating = 0;
    for (unsigned i = 0; i < snapshot->n_workers; i++) {
        json_t *transports = json_object_get(trees[i], "transports");
        size_t index;
        json_t *transport;
        json_array_foreach(transports, index, transport)
        {
            json_t *bwe = json_object_get(transport, "bwe");
            char label[24];
            if (!json_is_object(bwe) ||
                !public_label(snapshot, json_string_value(json_object_get(transport, "id")), label,
                              sizeof label))
                continue;
            estimating++;
            if (written++ >= MAX_TRANSPORT_SERIES)
                continue;
            g_string_append_printf(
                out, "moat_bwe_estimate_bps{transport=\"%s\"} %" JSON_INTEGER_FORMAT "\n", label,
                json_integer_value(json_object_get(bwe, "estimate_bps")));
            g_string_append_printf(
                acked, "moat_bwe_acked_bps{transport=\"%s\"} %" JSON_INTEGER_FORMAT "\n", label,
                json_integer_value(json_object_get(bwe, "acked_bps")));
        }
    }
    g_string_append_len(out, acked->str, (gssize)acked->len);
    g_string_free(acked, TRUE);
    g_string_append_printf(out,
                           "# HELP moat_bwe_transports Transports whose peer sends transport-cc "
                           "feedback\n# TYPE moat_bwe_transports gauge\nmoat_bwe_transports %u\n",
                           estimating);
}

void moat_stats_snapshot_prometheus(moat_stats_snapshot *snapshot, GString *out)
{
    g_string_append(out, "# HELP moat_detector_state Detector state per transport "
                         "(1 enforcing, 0 off)\n# TYPE moat_detector_state gauge\n");
    unsigned written = 0, enforcing = 0;
    json_t **trees = g_new0(json_t *, snapshot->n_workers ? snapshot->n_workers : 1);
    for (unsigned i = 0; i < snapshot->n_workers; i++) {
        trees[i] = latest_tree(snapshot, i);
        json_t *transports = json_object_get(trees[i], "transports");
        size_t index;
        json_t *transport;
        json_array_foreach(transports, index, transport)
        {
            bool on = json_is_true(json_object_get(transport, "enforcing"));
            enforcing += on;
            char label[24];
            if (!public_label(snapshot, json_string_value(json_object_get(transport, "id")), label,
                              sizeof label))
                continue;
            if (written++ < MAX_TRANSPORT_SERIES)
                g_string_append_printf(out, "moat_detector_state{transport=\"%s\"} %d\n", label,
                                       on);
        }
    }
    g_string_append_printf(out,
                           "# HELP moat_detector_enforcing_transports Transports whose detector "
                           "enforces\n# TYPE moat_detector_enforcing_transports gauge\n"
                           "moat_detector_enforcing_transports %u\n",
                           enforcing);
    g_string_append(out, "# HELP moat_detector_worker_state Worker socket detector state\n"
                         "# TYPE moat_detector_worker_state gauge\n");
    for (unsigned i = 0; i < snapshot->n_workers; i++) {
        if (trees[i])
            g_string_append_printf(out, "moat_detector_worker_state{worker=\"%u\"} %d\n", i,
                                   json_is_true(json_object_get(trees[i], "enforcing")));
    }
    render_bwe(snapshot, trees, out);
    for (unsigned i = 0; i < snapshot->n_workers; i++)
        json_decref(trees[i]);
    g_free(trees);
}

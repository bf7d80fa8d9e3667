/* The stats snapshot's hops between the control thread and the workers
 * (stats_snapshot.h): each worker's description is stored on the control
 * thread only, when it iterates the default main context, never on the
 * worker, even while nobody holds that context (as before the daemon's main
 * loop runs, or after it stops): a store on a worker raced the control
 * thread's readers of the per-worker table. */
#include "session/gateway_state.h"
#include "session/session_registry.h"
#include "session/stats_snapshot.h"
#include "engine/worker.h"

#include <jansson.h>
#include <string.h>

#include <glib.h>

#define WORKERS 2

typedef struct {
    moat_gateway gateway;
    moat_worker *workers[WORKERS];
} fixture;

static void fixture_start(fixture *f)
{
    memset(f, 0, sizeof *f);
    for (unsigned i = 0; i < WORKERS; i++) {
        char error[256];
        f->workers[i] = moat_worker_new(i, "127.0.0.1", 0, error, sizeof error);
        g_assert_nonnull(f->workers[i]);
        g_assert_cmpint(moat_worker_start(f->workers[i], error, sizeof error), ==, 0);
    }
    f->gateway.workers = f->workers;
    f->gateway.n_workers = WORKERS;
    f->gateway.sessions = moat_session_registry_new();
}

static void fixture_stop(fixture *f)
{
    for (unsigned i = 0; i < WORKERS; i++) {
        moat_worker_stop(f->workers[i]);
        moat_worker_free(f->workers[i]);
    }
    moat_session_registry_free(f->gateway.sessions);
}

static size_t described_workers(moat_stats_snapshot *snapshot)
{
    char *text = moat_stats_snapshot_json(snapshot, false);
    json_t *root = json_loads(text, 0, NULL);
    g_assert_nonnull(root);
    size_t n = json_array_size(json_object_get(root, "workers"));
    json_decref(root);
    g_free(text);
    return n;
}

/* Nobody holds the default main context while the workers answer: the
 * answers wait for the control thread instead of being stored from the
 * workers while it reads. */
static void test_replies_are_stored_on_the_control_thread(void)
{
    fixture f;
    fixture_start(&f);
    moat_stats_snapshot *snapshot = moat_stats_snapshot_start(&f.gateway);
    /* Reads while the workers describe themselves (a few ticks each). */
    gint64 reading_until = g_get_monotonic_time() + 200 * G_TIME_SPAN_MILLISECOND;
    while (g_get_monotonic_time() < reading_until)
        g_assert_cmpuint(described_workers(snapshot), ==, 0);
    /* Then the control thread takes them. */
    gint64 deadline = g_get_monotonic_time() + 10 * G_TIME_SPAN_SECOND;
    while (described_workers(snapshot) < WORKERS && g_get_monotonic_time() < deadline)
        g_main_context_iteration(NULL, TRUE);
    g_assert_cmpuint(described_workers(snapshot), ==, WORKERS);
    moat_stats_snapshot_stop(snapshot);
    /* Replies still queued are dropped (and their references released). */
    while (g_main_context_iteration(NULL, FALSE))
        ;
    fixture_stop(&f);
    while (g_main_context_iteration(NULL, FALSE))
        ;
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/stats_snapshot/replies_are_stored_on_the_control_thread",
                    test_replies_are_stored_on_the_control_thread);
    return g_test_run();
}

/* Owns the TLS handshake slots of the HTTPS listener: the running counts, in
 * all and per source, and the queue of connections waiting for a slot
 * (http_handshakes.h). */
#include "http/http_handshakes.h"

#include "http/http_connections.h"

#include <glib.h>

struct moat_handshakes {
    size_t max_per_source;
    moat_connection_counts *running;
    GQueue waiting; /* waiter *, oldest first */
    moat_handshake_start_fn start;
    void *user;
};

typedef struct {
    void *connection;
    char *key;
} waiter;

static void waiter_free(gpointer data)
{
    waiter *w = data;
    g_free(w->key);
    g_free(w);
}

moat_handshakes *moat_handshakes_new(size_t max_total, size_t max_per_source,
                                     moat_handshake_start_fn start, void *user)
{
    moat_handshakes *handshakes = g_new0(moat_handshakes, 1);
    handshakes->max_per_source = max_per_source;
    handshakes->running = moat_connection_counts_new(max_total, max_per_source);
    g_queue_init(&handshakes->waiting);
    handshakes->start = start;
    handshakes->user = user;
    return handshakes;
}

void moat_handshakes_free(moat_handshakes *handshakes)
{
    if (!handshakes)
        return;
    g_queue_clear_full(&handshakes->waiting, waiter_free);
    moat_connection_counts_free(handshakes->running);
    g_free(handshakes);
}

bool moat_handshakes_request(moat_handshakes *handshakes, const char *key, void *connection)
{
    if (moat_connection_counts_admit(handshakes->running, key) == MOAT_CONNECTION_ADMITTED) {
        handshakes->start(connection, handshakes->user);
        return true;
    }
    waiter *w = g_new0(waiter, 1);
    w->connection = connection;
    w->key = g_strdup(key);
    g_queue_push_tail(&handshakes->waiting, w);
    return false;
}

void moat_handshakes_forget(moat_handshakes *handshakes, void *connection)
{
    for (GList *link = handshakes->waiting.head; link; link = link->next) {
        waiter *w = link->data;
        if (w->connection == connection) {
            g_queue_delete_link(&handshakes->waiting, link);
            waiter_free(w);
            return;
        }
    }
}

/* The source that runs the fewest handshakes and is under its cap (among
 * equals, the one that has waited longest), and of its waiting connections
 * the newest: a source's burst of stalled hellos does not keep its next
 * real client waiting behind all of them, and older ones are likelier
 * given up. NULL when none fits. */
static GList *fairest(const moat_handshakes *handshakes)
{
    GList *best = NULL;
    size_t best_running = 0;
    for (GList *link = handshakes->waiting.head; link; link = link->next) {
        const waiter *w = link->data;
        size_t running = moat_connection_counts_of(handshakes->running, w->key);
        if (handshakes->max_per_source && running >= handshakes->max_per_source)
            continue;
        if (!best || running < best_running) {
            best = link;
            best_running = running;
        }
        if (running == 0)
            break;
    }
    const char *key = best ? ((const waiter *)best->data)->key : NULL;
    for (GList *link = handshakes->waiting.tail; key && link != best; link = link->prev)
        if (g_str_equal(((const waiter *)link->data)->key, key))
            return link;
    return best;
}

void moat_handshakes_end(moat_handshakes *handshakes, const char *key)
{
    moat_connection_counts_release(handshakes->running, key);
    GList *link;
    while ((link = fairest(handshakes)) != NULL) {
        waiter *w = link->data;
        if (moat_connection_counts_admit(handshakes->running, w->key) != MOAT_CONNECTION_ADMITTED)
            return; /* all slots taken */
        g_queue_delete_link(&handshakes->waiting, link);
        void *connection = w->connection;
        waiter_free(w);
        handshakes->start(connection, handshakes->user);
    }
}

size_t moat_handshakes_running(const moat_handshakes *handshakes)
{
    return moat_connection_counts_open(handshakes->running);
}

size_t moat_handshakes_waiting(const moat_handshakes *handshakes)
{
    return handshakes->waiting.length;
}

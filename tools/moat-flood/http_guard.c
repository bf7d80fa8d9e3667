/* Bounded HTTP exchanges (http_guard.h): the watchdog that cancels an
 * exchange at its deadline (its own, or the user's setup deadline when
 * sooner) or a signal, and the body read to a limit. */
#include "http_guard.h"

#include <stdio.h>
#include <string.h>

/* How often the watchdog looks at the signal count. */
#define WATCH_TICK_US (50 * 1000)

typedef enum { WHY_NONE, WHY_DEADLINE, WHY_SIGNAL } cancel_reason;

typedef struct {
    GMutex lock;
    GCond cond;
    bool done; /* the exchange ended: the watchdog returns */
    gint64 deadline_us;
    bool setup_deadline; /* deadline_us is the user's setup deadline (sooner than timeout_s) */
    const volatile sig_atomic_t *signals;
    sig_atomic_t signals_at_start;
    GCancellable *cancellable;
    cancel_reason why;
} watchdog;

static gpointer watch(gpointer data)
{
    watchdog *w = data;
    g_mutex_lock(&w->lock);
    while (!w->done && w->why == WHY_NONE) {
        gint64 now = g_get_monotonic_time();
        if (now >= w->deadline_us)
            w->why = WHY_DEADLINE;
        else if (w->signals != NULL && *w->signals != w->signals_at_start)
            w->why = WHY_SIGNAL;
        else
            g_cond_wait_until(&w->cond, &w->lock, MIN(w->deadline_us, now + WATCH_TICK_US));
    }
    bool cancel = w->why != WHY_NONE;
    g_mutex_unlock(&w->lock);
    /* Outside the lock: the cancellable's handlers run here. */
    if (cancel)
        g_cancellable_cancel(w->cancellable);
    return NULL;
}

/* Reads in up to limit bytes; *over when the body goes on past them. */
static int read_body(GInputStream *in, size_t limit, GCancellable *cancellable, GByteArray *out,
                     bool *over, GError **read_error)
{
    guint8 chunk[4096];
    for (;;) {
        /* One byte past the limit tells a body that ends there from a longer one. */
        size_t want = MIN(limit - out->len + 1, sizeof chunk);
        gssize n = g_input_stream_read(in, chunk, want, cancellable, read_error);
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        if (out->len + (size_t)n > limit) {
            g_byte_array_append(out, chunk, (guint)(limit - out->len));
            *over = true;
            return 0;
        }
        g_byte_array_append(out, chunk, (guint)n);
    }
}

static void describe(SoupMessage *msg, const watchdog *w, unsigned timeout_s, const GError *e,
                     char *error, size_t error_size)
{
    char *uri = g_uri_to_string(soup_message_get_uri(msg));
    const char *method = soup_message_get_method(msg);
    if (w->why == WHY_DEADLINE && w->setup_deadline)
        snprintf(error, error_size, "%s %s: setup timeout (no complete answer in the time left)",
                 method, uri);
    else if (w->why == WHY_DEADLINE)
        snprintf(error, error_size, "%s %s: no complete answer within %u s", method, uri,
                 timeout_s);
    else if (w->why == WHY_SIGNAL)
        snprintf(error, error_size, "%s %s: interrupted", method, uri);
    else
        snprintf(error, error_size, "%s %s: %s", method, uri, e != NULL ? e->message : "failed");
    g_free(uri);
}

/* The exchange itself, under the watchdog: 0 with answer filled, or -1
 * with *failure set. */
static int send_and_read(SoupSession *session, SoupMessage *msg, size_t limit,
                         GCancellable *cancellable, http_answer *answer, GError **failure)
{
    GInputStream *in = soup_session_send(session, msg, cancellable, failure);
    if (in == NULL)
        return -1;
    answer->status = soup_message_get_status(msg);
    if (answer->status < 200 || answer->status > 299)
        limit = MIN(limit, HTTP_GUARD_ERROR_BODY_LIMIT);
    GByteArray *body = g_byte_array_new();
    int result = read_body(in, limit, cancellable, body, &answer->over_limit, failure);
    /* Closing a body not read to its end would read the rest: cancelled
     * first, the connection is dropped instead. */
    if (result != 0 || answer->over_limit)
        g_cancellable_cancel(cancellable);
    g_input_stream_close(in, cancellable, NULL);
    g_object_unref(in);
    if (result != 0) {
        g_byte_array_unref(body);
        return -1;
    }
    answer->body = g_byte_array_free_to_bytes(body);
    return 0;
}

/* An exchange not sent: -1 with "METHOD URL: not sent (why)". */
static int refuse(SoupMessage *msg, const char *why, char *error, size_t error_size)
{
    char *uri = g_uri_to_string(soup_message_get_uri(msg));
    snprintf(error, error_size, "%s %s: %s", soup_message_get_method(msg), uri, why);
    g_free(uri);
    return -1;
}

int http_guard_exchange(http_guard *g, SoupSession *session, SoupMessage *msg, size_t limit,
                        http_answer *answer, char *error, size_t error_size)
{
    memset(answer, 0, sizeof *answer);
    g->last_cut = false;
    g->last_past_setup = false;
    sig_atomic_t signals = g->signals != NULL ? *g->signals : 0;
    if (g->gave_up || signals >= 2)
        return refuse(msg, "not sent (a second signal, or an earlier hang-up got no answer)", error,
                      error_size);
    gint64 now = g_get_monotonic_time();
    gint64 deadline = now + (gint64)g->timeout_s * G_USEC_PER_SEC;
    bool setup_deadline = g->setup_deadline_us != 0 && g->setup_deadline_us < deadline;
    if (setup_deadline && g->setup_deadline_us <= now) {
        g->last_past_setup = true;
        return refuse(msg, "setup timeout (not sent)", error, error_size);
    }
    watchdog w = {
        .deadline_us = setup_deadline ? g->setup_deadline_us : deadline,
        .setup_deadline = setup_deadline,
        .signals = g->signals,
        .signals_at_start = signals,
        .cancellable = g_cancellable_new(),
    };
    g_mutex_init(&w.lock);
    g_cond_init(&w.cond);
    GThread *thread = g_thread_new("http-watchdog", watch, &w);
    GError *failure = NULL;
    int result = send_and_read(session, msg, limit, w.cancellable, answer, &failure);
    g_mutex_lock(&w.lock);
    w.done = true;
    g_cond_signal(&w.cond);
    g_mutex_unlock(&w.lock);
    g_thread_join(thread);
    if (result != 0) {
        describe(msg, &w, g->timeout_s, failure, error, error_size);
        g->last_cut = w.why != WHY_NONE;
        g->last_past_setup = w.why == WHY_DEADLINE && w.setup_deadline;
    }
    g_clear_error(&failure);
    g_object_unref(w.cancellable);
    g_cond_clear(&w.cond);
    g_mutex_clear(&w.lock);
    return result;
}

int http_guard_sleep(const http_guard *g, unsigned seconds)
{
    sig_atomic_t signals = g->signals != NULL ? *g->signals : 0;
    gint64 end = g_get_monotonic_time() + (gint64)seconds * G_USEC_PER_SEC;
    for (;;) {
        if (g->signals != NULL && *g->signals != signals)
            return -1;
        gint64 left = end - g_get_monotonic_time();
        if (left <= 0)
            return 0;
        g_usleep((gulong)MIN(left, WATCH_TICK_US));
    }
}

/* One HTTP exchange on libsoup's synchronous API with what a server can
 * make it cost bounded (moat-flood's WHIP and Janus clients, moat-tunnel's
 * WHIP through them):
 *   - the answer's body is read up to a limit, never further (a 2xx answer
 *     longer than its caller's limit is reported; another status's body is
 *     read to HTTP_GUARD_ERROR_BODY_LIMIT, only its first line is wanted);
 *   - the whole exchange (connecting, the request, the answer's headers and
 *     body) ends within the guard's deadline, however slowly the server
 *     trickles (libsoup's own "timeout" bounds only a silence), and never
 *     runs past the user's setup deadline when one is set (none starts
 *     after it);
 *   - an exchange in flight when the tool's signal count changes (SIGINT,
 *     SIGTERM) is cancelled, so the tool stops while a server holds it.
 * After a second signal (the count at 2 or more) no exchange starts, nor
 * once the guard's user gave up on its server (gave_up: whip_client.h's
 * hang-up, so that N sessions do not wait N deadlines).
 * A watchdog thread per exchange cancels it (GCancellable) at its deadline
 * or the signal. A guard is used by one thread at a time. */
#ifndef HTTP_GUARD_H
#define HTTP_GUARD_H

#include <glib.h>
#include <libsoup/soup.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#define HTTP_GUARD_ERROR_BODY_LIMIT 4096

typedef struct {
    unsigned timeout_s;                   /* each exchange's deadline */
    const volatile sig_atomic_t *signals; /* the tool's signal count, or NULL */
    /* 0, or a moment (g_get_monotonic_time, CLOCK_MONOTONIC microseconds)
     * no exchange runs past, set by the user while it sets sessions up (a
     * WHIP POST within --setup-timeout): an exchange ends there ("setup
     * timeout"), and none is sent once it passed. */
    gint64 setup_deadline_us;
    bool gave_up;         /* set by the user: no more exchanges */
    bool last_cut;        /* the last exchange ran out of time or a signal came */
    bool last_past_setup; /* the last exchange was ended or refused by setup_deadline_us */
} http_guard;

typedef struct {
    guint status;    /* the answer's HTTP status */
    GBytes *body;    /* at most the limit's bytes; the caller unrefs it */
    bool over_limit; /* the body was longer: the rest was not read */
} http_answer;

/* Sends msg and reads its answer, the body up to limit bytes for a 2xx
 * status (HTTP_GUARD_ERROR_BODY_LIMIT for another). 0 with *answer filled;
 * -1 with a message ("METHOD URL: why") when it failed, ran past the
 * deadline, was interrupted or was not sent (stopping). */
int http_guard_exchange(http_guard *g, SoupSession *session, SoupMessage *msg, size_t limit,
                        http_answer *answer, char *error, size_t error_size);

/* Waits seconds (a Retry-After) unless the signal count changes first:
 * 0 after the wait, -1 when interrupted. */
int http_guard_sleep(const http_guard *g, unsigned seconds);

#endif

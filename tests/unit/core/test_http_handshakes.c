/* The HTTPS listener's handshake slots (http_handshakes.h): the caps in all
 * and per source, the queue, and which waiting connection a freed slot goes
 * to (the source running the fewest, the longest waiting among equals; its
 * newest connection). */
#include "http/http_handshakes.h"

#include <glib.h>

typedef struct {
    GPtrArray *started; /* the connections start() was called with, in order */
} record;

static void note_start(void *connection, void *user)
{
    record *r = user;
    g_ptr_array_add(r->started, connection);
}

static void *started(record *r, guint i)
{
    return i < r->started->len ? g_ptr_array_index(r->started, i) : NULL;
}

static int conns[32]; /* their addresses stand for connections */

static void test_caps(void)
{
    record r = {g_ptr_array_new()};
    moat_handshakes *h = moat_handshakes_new(4, 2, note_start, &r);
    g_assert_true(moat_handshakes_request(h, "4:192.0.2.1", &conns[0]));
    g_assert_true(moat_handshakes_request(h, "4:192.0.2.1", &conns[1]));
    /* Over its source's cap: waits, not started. */
    g_assert_false(moat_handshakes_request(h, "4:192.0.2.1", &conns[2]));
    g_assert_true(moat_handshakes_request(h, "4:192.0.2.2", &conns[3]));
    g_assert_true(moat_handshakes_request(h, "4:192.0.2.3", &conns[4]));
    /* Over the total cap. */
    g_assert_false(moat_handshakes_request(h, "4:192.0.2.4", &conns[5]));
    g_assert_cmpuint(moat_handshakes_running(h), ==, 4);
    g_assert_cmpuint(moat_handshakes_waiting(h), ==, 2);
    g_assert_cmpuint(r.started->len, ==, 4);
    moat_handshakes_free(h); /* with connections waiting */
    g_ptr_array_free(r.started, TRUE);
}

static void test_freed_slot_goes_to_the_quietest_source(void)
{
    record r = {g_ptr_array_new()};
    moat_handshakes *h = moat_handshakes_new(4, 2, note_start, &r);
    /* Two stalling sources fill the slots and queue more. */
    for (int i = 0; i < 8; i++)
        moat_handshakes_request(h, i % 2 ? "4:198.51.100.1" : "4:198.51.100.2", &conns[i]);
    g_assert_cmpuint(r.started->len, ==, 4);
    /* A third source comes last. */
    g_assert_false(moat_handshakes_request(h, "4:203.0.113.9", &conns[20]));
    /* The first slot freed (a stalling source's) goes to it, not to the
     * stalling sources' older connections. */
    moat_handshakes_end(h, "4:198.51.100.1");
    g_assert_cmpuint(r.started->len, ==, 5);
    g_assert_true(started(&r, 4) == &conns[20]);
    /* Each stalling source runs one now: the next slot goes to the source
     * waiting longest (198.51.100.2, conns[4]), to its newest connection. */
    moat_handshakes_end(h, "4:198.51.100.2");
    g_assert_true(started(&r, 5) == &conns[6]);
    g_assert_cmpuint(moat_handshakes_running(h), ==, 4);
    g_assert_cmpuint(moat_handshakes_waiting(h), ==, 3);
    moat_handshakes_free(h);
    g_ptr_array_free(r.started, TRUE);
}

static void test_a_source_at_its_cap_does_not_take_the_slot(void)
{
    record r = {g_ptr_array_new()};
    moat_handshakes *h = moat_handshakes_new(3, 2, note_start, &r);
    moat_handshakes_request(h, "4:192.0.2.1", &conns[0]);
    moat_handshakes_request(h, "4:192.0.2.1", &conns[1]);
    moat_handshakes_request(h, "4:192.0.2.2", &conns[2]);
    moat_handshakes_request(h, "4:192.0.2.1", &conns[3]); /* its source is full */
    moat_handshakes_request(h, "4:192.0.2.3", &conns[4]); /* all are full */
    /* 192.0.2.2's slot: 192.0.2.1 still runs 2, so 192.0.2.3 gets it. */
    moat_handshakes_end(h, "4:192.0.2.2");
    g_assert_true(started(&r, 3) == &conns[4]);
    /* 192.0.2.3 ends: a slot is free, but the only waiter's source is at its
     * cap; it stays queued. */
    moat_handshakes_end(h, "4:192.0.2.3");
    g_assert_cmpuint(r.started->len, ==, 4);
    g_assert_cmpuint(moat_handshakes_waiting(h), ==, 1);
    moat_handshakes_end(h, "4:192.0.2.1");
    g_assert_true(started(&r, 4) == &conns[3]);
    g_assert_cmpuint(moat_handshakes_waiting(h), ==, 0);
    moat_handshakes_free(h);
    g_ptr_array_free(r.started, TRUE);
}

static void test_within_a_source_the_newest_goes_first(void)
{
    record r = {g_ptr_array_new()};
    moat_handshakes *h = moat_handshakes_new(8, 2, note_start, &r);
    for (int i = 0; i < 12; i++) /* 2 stalled hellos run, 10 wait */
        moat_handshakes_request(h, "4:192.0.2.1", &conns[i]);
    moat_handshakes_request(h, "4:192.0.2.1", &conns[20]); /* a real client */
    moat_handshakes_end(h, "4:192.0.2.1");
    g_assert_true(started(&r, 2) == &conns[20]);
    moat_handshakes_end(h, "4:192.0.2.1");
    g_assert_true(started(&r, 3) == &conns[11]);
    moat_handshakes_free(h);
    g_ptr_array_free(r.started, TRUE);
}

static void test_forget(void)
{
    record r = {g_ptr_array_new()};
    moat_handshakes *h = moat_handshakes_new(1, 0, note_start, &r);
    moat_handshakes_request(h, "4:192.0.2.1", &conns[0]);
    moat_handshakes_request(h, "4:192.0.2.2", &conns[1]);
    moat_handshakes_request(h, "4:192.0.2.3", &conns[2]);
    moat_handshakes_forget(h, &conns[1]); /* gone while waiting (its deadline) */
    moat_handshakes_forget(h, &conns[9]); /* never there: nothing */
    moat_handshakes_end(h, "4:192.0.2.1");
    g_assert_true(started(&r, 1) == &conns[2]);
    g_assert_cmpuint(moat_handshakes_waiting(h), ==, 0);
    moat_handshakes_free(h);
    g_ptr_array_free(r.started, TRUE);
}

/* start() may end the handshake at once (the TLS backend refused it): the
 * next waiting connection starts. */
static moat_handshakes *reentrant;

static void start_and_fail_the_first(void *connection, void *user)
{
    record *r = user;
    g_ptr_array_add(r->started, connection);
    if (connection == &conns[1])
        moat_handshakes_end(reentrant, "4:192.0.2.2");
}

static void test_start_may_end_at_once(void)
{
    record r = {g_ptr_array_new()};
    reentrant = moat_handshakes_new(1, 0, start_and_fail_the_first, &r);
    moat_handshakes_request(reentrant, "4:192.0.2.1", &conns[0]);
    moat_handshakes_request(reentrant, "4:192.0.2.2", &conns[1]);
    moat_handshakes_request(reentrant, "4:192.0.2.3", &conns[2]);
    moat_handshakes_end(reentrant, "4:192.0.2.1");
    g_assert_cmpuint(r.started->len, ==, 3);
    g_assert_true(started(&r, 2) == &conns[2]);
    g_assert_cmpuint(moat_handshakes_running(reentrant), ==, 1);
    g_assert_cmpuint(moat_handshakes_waiting(reentrant), ==, 0);
    moat_handshakes_free(reentrant);
    g_ptr_array_free(r.started, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/http_handshakes/caps", test_caps);
    g_test_add_func("/http_handshakes/freed-slot-goes-to-the-quietest-source",
                    test_freed_slot_goes_to_the_quietest_source);
    g_test_add_func("/http_handshakes/source-at-its-cap-does-not-take-the-slot",
                    test_a_source_at_its_cap_does_not_take_the_slot);
    g_test_add_func("/http_handshakes/within-a-source-the-newest-goes-first",
                    test_within_a_source_the_newest_goes_first);
    g_test_add_func("/http_handshakes/forget", test_forget);
    g_test_add_func("/http_handshakes/start-may-end-at-once", test_start_may_end_at_once);
    return g_test_run();
}

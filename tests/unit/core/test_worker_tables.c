/* The worker's ufrag and 5-tuple tables: an entry belongs to one session;
 * binding never replaces another session's entry and unbinding never
 * removes one (the tables only compare session pointers, so stand-ins do). */
#include "engine/worker.h"
#include "engine/worker_receive.h"
#include "prefilter/kernel_filter.h"
#include "prefilter/kernel_filter_state.h"

#include <arpa/inet.h>
#include <string.h>

#include <glib.h>

static moat_session *const alice = (moat_session *)&(int){1};
static moat_session *const mallory = (moat_session *)&(int){2};

static moat_worker *new_worker(void)
{
    char error[256];
    moat_worker *worker = moat_worker_new(0, "127.0.0.1", 0, error, sizeof error);
    g_assert_nonnull(worker);
    return worker;
}

static struct sockaddr_in6 tuple(const char *address, uint16_t port)
{
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
    g_assert_cmpint(inet_pton(AF_INET6, address, &a.sin6_addr), ==, 1);
    return a;
}

static void test_tuple_cannot_be_taken_over(void)
{
    moat_worker *worker = new_worker();
    struct sockaddr_in6 a = tuple("::ffff:10.0.0.2", 5000);
    g_assert_true(moat_worker_bind_tuple(worker, &a, alice));
    g_assert_true(moat_worker_bind_tuple(worker, &a, alice)); /* idempotent */
    g_assert_false(moat_worker_bind_tuple(worker, &a, mallory));
    g_assert_true(moat_worker_session_by_tuple(worker, &a) == alice);
    /* Another session's unbind leaves it alone. */
    moat_worker_unbind_tuple(worker, &a, mallory);
    g_assert_true(moat_worker_session_by_tuple(worker, &a) == alice);
    moat_worker_unbind_tuple(worker, &a, alice);
    g_assert_null(moat_worker_session_by_tuple(worker, &a));
    /* Free again: the next session may have it. */
    g_assert_true(moat_worker_bind_tuple(worker, &a, mallory));
    g_assert_true(moat_worker_session_by_tuple(worker, &a) == mallory);
    moat_worker_free(worker);
}

/* Cascade legs between two nodes share one 5-tuple (one socket to one
 * socket): each owns the SSRCs its peer sends from, on that tuple. */
static void test_routes_share_a_tuple_by_ssrc(void)
{
    moat_worker *worker = new_worker();
    struct sockaddr_in6 a = tuple("::ffff:10.0.0.2", 5000);
    struct sockaddr_in6 b = tuple("::ffff:10.0.0.2", 5001);
    g_assert_true(moat_worker_bind_route(worker, &a, 11, alice));
    g_assert_true(moat_worker_bind_route(worker, &a, 12, alice));
    g_assert_true(moat_worker_bind_route(worker, &a, 11, alice)); /* idempotent */
    g_assert_true(moat_worker_bind_route(worker, &a, 21, mallory));
    g_assert_false(moat_worker_bind_route(worker, &a, 11, mallory));
    g_assert_true(moat_worker_session_by_route(worker, &a, 11) == alice);
    g_assert_true(moat_worker_session_by_route(worker, &a, 12) == alice);
    g_assert_true(moat_worker_session_by_route(worker, &a, 21) == mallory);
    g_assert_null(moat_worker_session_by_route(worker, &a, 99));
    g_assert_null(moat_worker_session_by_route(worker, &b, 11)); /* another port */
    g_assert_null(moat_worker_session_by_tuple(worker, &a));     /* nobody's alone */
    /* A tuple one session owns outright takes no routes. */
    g_assert_true(moat_worker_bind_tuple(worker, &b, alice));
    g_assert_false(moat_worker_bind_route(worker, &b, 31, mallory));
    /* Another session's unbind leaves a route alone. */
    moat_worker_unbind_route(worker, &a, 11, mallory);
    g_assert_true(moat_worker_session_by_route(worker, &a, 11) == alice);
    moat_worker_unbind_route(worker, &a, 11, alice);
    moat_worker_unbind_route(worker, &a, 12, alice);
    g_assert_null(moat_worker_session_by_route(worker, &a, 11));
    g_assert_true(moat_worker_session_by_route(worker, &a, 21) == mallory);
    g_assert_true(moat_worker_bind_route(worker, &a, 11, mallory));
    moat_worker_free(worker);
}

static void test_ufrag_cannot_be_taken_over(void)
{
    moat_worker *worker = new_worker();
    g_assert_true(moat_worker_bind_ufrag(worker, "abcd", alice));
    g_assert_false(moat_worker_bind_ufrag(worker, "abcd", mallory));
    moat_worker_unbind_ufrag(worker, "abcd", mallory);
    g_assert_true(moat_worker_session_by_ufrag(worker, "abcd") == alice);
    moat_worker_unbind_ufrag(worker, "abcd", alice);
    g_assert_null(moat_worker_session_by_ufrag(worker, "abcd"));
    moat_worker_free(worker);
}

static void test_local_priority(void)
{
    moat_worker *worker = new_worker();
    struct in6_addr addresses[2];
    inet_pton(AF_INET6, "::ffff:127.0.0.1", &addresses[0]);
    inet_pton(AF_INET6, "fd00::1", &addresses[1]);
    uint32_t priorities[2] = {300, 200};
    moat_worker_set_candidates(worker, addresses, priorities, 2);
    g_assert_cmpuint(moat_worker_local_priority(worker, &addresses[0]), ==, 300);
    g_assert_cmpuint(moat_worker_local_priority(worker, &addresses[1]), ==, 200);
    struct in6_addr other;
    inet_pton(AF_INET6, "fd00::2", &other);
    /* Not announced: the lowest host priority. */
    g_assert_cmpuint(moat_worker_local_priority(worker, &other), ==, (126u << 24) | 255u);
    moat_worker_free(worker);
}

/* Tuples in the kernel filter's map (needs BPF: skipped without). */
static size_t kernel_tuples(moat_worker *worker)
{
    moat_kernel_filter *filter = (moat_kernel_filter *)moat_worker_kernel_filter(worker);
    return moat_kf_state_tuples(moat_kernel_filter_state(filter), NULL);
}

/* A cascade leg may hold a link tuple outright beside the routes on it: its
 * binding and unbinding leave the routes' entry in the kernel filter (it
 * took the tuple out, and the kernel dropped every link packet as an
 * unknown tuple), and the last route leaving leaves the leg's. */
static void test_kernel_filter_keeps_a_shared_link_tuple(void)
{
    moat_worker *worker = new_worker();
    char error[256];
    if (moat_worker_attach_kernel_filter(worker, error, sizeof error) != 0) {
        moat_worker_free(worker);
        g_test_skip(error);
        return;
    }
    struct sockaddr_in6 a = tuple("::ffff:10.0.0.2", 5000);
    g_assert_true(moat_worker_bind_route(worker, &a, 11, alice));
    g_assert_cmpuint(kernel_tuples(worker), ==, 1);
    g_assert_true(moat_worker_bind_tuple(worker, &a, mallory));
    moat_worker_unbind_tuple(worker, &a, mallory);
    g_assert_cmpuint(kernel_tuples(worker), ==, 1); /* the routes still use it */
    g_assert_true(moat_worker_bind_tuple(worker, &a, mallory));
    moat_worker_unbind_route(worker, &a, 11, alice);
    g_assert_cmpuint(kernel_tuples(worker), ==, 1); /* the leg still holds it */
    moat_worker_unbind_tuple(worker, &a, mallory);
    g_assert_cmpuint(kernel_tuples(worker), ==, 0);
    moat_worker_detach_kernel_filter(worker);
    moat_worker_free(worker);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/core/worker-tables/tuple", test_tuple_cannot_be_taken_over);
    g_test_add_func("/core/worker-tables/ufrag", test_ufrag_cannot_be_taken_over);
    g_test_add_func("/core/worker-tables/routes", test_routes_share_a_tuple_by_ssrc);
    g_test_add_func("/core/worker-tables/kernel-link-tuple",
                    test_kernel_filter_keeps_a_shared_link_tuple);
    g_test_add_func("/core/worker-tables/local-priority", test_local_priority);
    return g_test_run();
}

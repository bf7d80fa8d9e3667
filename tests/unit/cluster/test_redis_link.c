/* gateway/cluster/redis_link.c's name lookup, with a GResolver of the
 * test's own as the default: a host name is resolved without blocking the
 * thread that made the link, within ten command timeouts (a slow one is
 * waited for, not cut short at the connect timeout); a lookup that
 * fails or never ends leaves the link down with a reason naming the
 * address, and retried; an answer that comes after the link stopped
 * waiting for it (timed out, freed) is dropped safely; a name's IPv4
 * address is connected to (hiredis's order), then AUTH. */
#include "cluster/redis_link.h"

#include <gio/gio.h>
#include <glib.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- a resolver of the test's own ------------------------------------------------ */

/* "hang.test": never answers on its own (held until test_resolver_release);
 * "fail.test": not found; "both.test": ::1 then 127.0.0.1; "slow.test": as
 * both.test, 1.5 s later. */
typedef struct {
    GResolver parent;
} TestResolver;
typedef struct {
    GResolverClass parent_class;
} TestResolverClass;

G_DEFINE_TYPE(TestResolver, test_resolver, G_TYPE_RESOLVER)

static GList *held;    /* GTask of "hang.test" lookups */
static unsigned asked; /* lookups started */

static GList *both_addresses(void)
{
    GList *list = NULL;
    list = g_list_append(list, g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV6));
    list = g_list_append(list, g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV4));
    return list;
}

static gboolean answer_slowly(gpointer task)
{
    g_task_return_pointer(task, both_addresses(), (GDestroyNotify)g_resolver_free_addresses);
    g_object_unref(task);
    return G_SOURCE_REMOVE;
}

static void lookup_async(GResolver *resolver, const char *hostname, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user)
{
    GTask *task = g_task_new(resolver, cancellable, callback, user);
    asked++;
    if (strcmp(hostname, "hang.test") == 0) {
        held = g_list_append(held, task);
        return;
    }
    if (strcmp(hostname, "slow.test") == 0) {
        g_timeout_add(1500, answer_slowly, task);
        return;
    }
    if (strcmp(hostname, "both.test") == 0)
        g_task_return_pointer(task, both_addresses(), (GDestroyNotify)g_resolver_free_addresses);
    else
        g_task_return_new_error(task, G_RESOLVER_ERROR, G_RESOLVER_ERROR_NOT_FOUND,
                                "no such name: %s", hostname);
    g_object_unref(task);
}

static GList *lookup_finish(GResolver *resolver, GAsyncResult *result, GError **error)
{
    return g_task_propagate_pointer(G_TASK(result), error);
}

static GList *lookup_sync(GResolver *resolver, const char *hostname, GCancellable *cancellable,
                          GError **error)
{
    g_assert_not_reached(); /* the link never resolves synchronously */
    return NULL;
}

static void test_resolver_class_init(TestResolverClass *klass)
{
    GResolverClass *resolver = G_RESOLVER_CLASS(klass);
    resolver->lookup_by_name = lookup_sync;
    resolver->lookup_by_name_async = lookup_async;
    resolver->lookup_by_name_finish = lookup_finish;
}

static void test_resolver_init(TestResolver *resolver) {}

/* The held lookups answer now (not found), long after anyone waited. */
static void test_resolver_release(void)
{
    for (GList *l = held; l; l = l->next) {
        g_task_return_new_error(l->data, G_RESOLVER_ERROR, G_RESOLVER_ERROR_TEMPORARY_FAILURE,
                                "the DNS server answered at last");
        g_object_unref(l->data);
    }
    g_list_free(held);
    held = NULL;
    while (g_main_context_iteration(NULL, FALSE))
        ;
}

static void use_test_resolver(void)
{
    GResolver *resolver = g_object_new(test_resolver_get_type(), NULL);
    g_resolver_set_default(resolver);
    g_object_unref(resolver);
    asked = 0;
}

/* ---- helpers ---------------------------------------------------------------------- */

static void run_for(unsigned ms)
{
    gint64 until = g_get_monotonic_time() + (gint64)ms * 1000;
    while (g_get_monotonic_time() < until)
        g_main_context_iteration(NULL, FALSE), g_usleep(1000);
}

static void state_changed(void *user, bool up)
{
    *(int *)user += up ? 1 : 0;
}

/* ---- tests ------------------------------------------------------------------------ */

static void test_a_lookup_that_never_ends_times_out(void)
{
    use_test_resolver();
    char error[256];
    int ups = 0;
    gint64 start = g_get_monotonic_time();
    moat_redis_link *link =
        moat_redis_link_new("hang.test:6379", "pw", 200, state_changed, &ups, error, sizeof error);
    /* Returned at once, connecting: the lookup goes on elsewhere. */
    g_assert_nonnull(link);
    g_assert_cmpint(g_get_monotonic_time() - start, <, 500 * 1000);
    g_assert_cmpint(moat_redis_link_state(link), ==, MOAT_REDIS_CONNECTING);
    g_assert_cmpuint(asked, ==, 1);
    /* Ten command timeouts (2 s here) cover the lookup. */
    run_for(1600);
    g_assert_cmpint(moat_redis_link_state(link), ==, MOAT_REDIS_CONNECTING);
    g_assert_cmpuint(asked, ==, 1);
    run_for(600);
    g_assert_cmpstr(moat_redis_link_error(link), ==,
                    "cannot connect to hang.test:6379: name lookup timed out");
    /* Retried after the backoff: another lookup, also held. */
    run_for(300);
    g_assert_cmpuint(asked, ==, 2);
    g_assert_cmpint(moat_redis_link_state(link), ==, MOAT_REDIS_CONNECTING);
    /* Freed with that lookup in flight; both answer afterwards. */
    moat_redis_link_free(link);
    test_resolver_release();
    g_assert_cmpint(ups, ==, 0);
}

static void test_a_failed_lookup_is_reported_and_retried(void)
{
    use_test_resolver();
    char error[256];
    moat_redis_link *link =
        moat_redis_link_new("fail.test:6379", "pw", 1000, NULL, NULL, error, sizeof error);
    g_assert_nonnull(link);
    run_for(50);
    g_assert_cmpint(moat_redis_link_state(link), ==, MOAT_REDIS_DOWN);
    g_assert_cmpstr(moat_redis_link_error(link), ==,
                    "cannot connect to fail.test:6379: no such name: fail.test");
    run_for(200); /* the first backoff is 100 ms */
    g_assert_cmpuint(asked, >=, 2);
    moat_redis_link_free(link);
}

/* A listening socket on 127.0.0.1 only (its port in *port). */
static int listen_v4(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    g_assert_cmpint(fd, >=, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    g_assert_cmpint(bind(fd, (struct sockaddr *)&address, sizeof address), ==, 0);
    g_assert_cmpint(listen(fd, 4), ==, 0);
    socklen_t length = sizeof address;
    g_assert_cmpint(getsockname(fd, (struct sockaddr *)&address, &length), ==, 0);
    *port = ntohs(address.sin_port);
    return fd;
}

/* `host` resolves to ::1 and 127.0.0.1: the link connects to the latter
 * and authenticates, after one lookup. */
static void connects_over_ipv4(const char *host)
{
    use_test_resolver();
    int port = 0;
    int server = listen_v4(&port);
    char address[64], error[256];
    snprintf(address, sizeof address, "%s:%d", host, port);
    int ups = 0;
    moat_redis_link *link =
        moat_redis_link_new(address, "pw", 1000, state_changed, &ups, error, sizeof error);
    g_assert_nonnull(link);
    /* The IPv4 address is the one dialled: the listener on 127.0.0.1 gets
     * the connection and its AUTH. */
    int peer = -1;
    char command[256] = "";
    size_t have = 0;
    gint64 deadline = g_get_monotonic_time() + 4 * G_USEC_PER_SEC;
    while (g_get_monotonic_time() < deadline && !strstr(command, "pw\r\n")) {
        g_main_context_iteration(NULL, FALSE);
        if (peer < 0)
            peer = accept4(server, NULL, NULL, SOCK_NONBLOCK);
        if (peer >= 0 && have < sizeof command - 1) {
            ssize_t n = read(peer, command + have, sizeof command - 1 - have);
            if (n > 0)
                have += (size_t)n;
        }
        command[have] = '\0';
        g_usleep(1000);
    }
    g_assert_cmpint(peer, >=, 0);
    g_assert_cmpstr(command, ==, "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n");
    g_assert_cmpint(write(peer, "+OK\r\n", 5), ==, 5);
    deadline = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
    while (g_get_monotonic_time() < deadline && moat_redis_link_state(link) != MOAT_REDIS_UP)
        g_main_context_iteration(NULL, FALSE), g_usleep(1000);
    g_assert_cmpint(moat_redis_link_state(link), ==, MOAT_REDIS_UP);
    g_assert_cmpint(ups, ==, 1);
    g_assert_cmpuint(asked, ==, 1);
    moat_redis_link_free(link);
    close(peer);
    close(server);
}

static void test_a_resolved_name_is_connected_over_ipv4(void)
{
    connects_over_ipv4("both.test");
}

/* An answer slower than the connect timeout (1 s here) is waited for:
 * before, each attempt's lookup was cut short at it and asked again, and
 * the link never connected. */
static void test_a_slow_lookup_is_waited_for(void)
{
    connects_over_ipv4("slow.test");
}

static void test_an_address_is_not_looked_up(void)
{
    use_test_resolver();
    int port = 0;
    int server = listen_v4(&port);
    char address[64], error[256];
    snprintf(address, sizeof address, "127.0.0.1:%d", port);
    moat_redis_link *link =
        moat_redis_link_new(address, "pw", 1000, NULL, NULL, error, sizeof error);
    g_assert_nonnull(link);
    run_for(50);
    g_assert_cmpuint(asked, ==, 0);
    g_assert_cmpint(moat_redis_link_state(link), ==, MOAT_REDIS_AUTHENTICATING);
    moat_redis_link_free(link);
    close(server);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/redis-link/lookup/never-ends", test_a_lookup_that_never_ends_times_out);
    g_test_add_func("/redis-link/lookup/fails", test_a_failed_lookup_is_reported_and_retried);
    g_test_add_func("/redis-link/lookup/ipv4-first", test_a_resolved_name_is_connected_over_ipv4);
    g_test_add_func("/redis-link/lookup/slow", test_a_slow_lookup_is_waited_for);
    g_test_add_func("/redis-link/lookup/address", test_an_address_is_not_looked_up);
    return g_test_run();
}

/* Owns one name lookup for the Redis link (redis_lookup.h): GResolver does
 * the work on its threads, never hiredis's blocking getaddrinfo on the
 * control thread (a DNS server that did not answer held the control thread,
 * /healthz and every session's signalling with it, for seconds at each
 * connect attempt). */
#include "cluster/redis_lookup.h"

#include <gio/gio.h>
#include <glib.h>

struct moat_redis_lookup {
    moat_redis_lookup_fn fn; /* NULL once abandoned */
    void *user;
    GCancellable *cancellable;
};

/* The address to connect to of those a lookup gave: the first IPv4 one,
 * else the first (hiredis's own order: IPv4 first). */
static GInetAddress *pick_address(GList *addresses)
{
    for (GList *l = addresses; l; l = l->next)
        if (g_inet_address_get_family(l->data) == G_SOCKET_FAMILY_IPV4)
            return l->data;
    return addresses ? addresses->data : NULL;
}

static void lookup_done(GObject *source, GAsyncResult *result, gpointer data)
{
    moat_redis_lookup *lookup = data;
    GError *error = NULL;
    GList *addresses = g_resolver_lookup_by_name_finish(G_RESOLVER(source), result, &error);
    moat_redis_lookup_fn fn = lookup->fn;
    void *user = lookup->user;
    g_object_unref(lookup->cancellable);
    g_free(lookup);
    if (fn) {
        GInetAddress *chosen = addresses ? pick_address(addresses) : NULL;
        char *text = chosen ? g_inet_address_to_string(chosen) : NULL;
        fn(user, text, text ? NULL : error ? error->message : "the name has no address");
        g_free(text);
    }
    g_clear_error(&error);
    g_resolver_free_addresses(addresses);
}

moat_redis_lookup *moat_redis_lookup_start(const char *host, moat_redis_lookup_fn fn, void *user)
{
    moat_redis_lookup *lookup = g_new0(moat_redis_lookup, 1);
    lookup->fn = fn;
    lookup->user = user;
    lookup->cancellable = g_cancellable_new();
    GResolver *resolver = g_resolver_get_default();
    g_resolver_lookup_by_name_async(resolver, host, lookup->cancellable, lookup_done, lookup);
    g_object_unref(resolver);
    return lookup;
}

void moat_redis_lookup_abandon(moat_redis_lookup *lookup)
{
    if (!lookup)
        return;
    lookup->fn = NULL;
    g_cancellable_cancel(lookup->cancellable);
}

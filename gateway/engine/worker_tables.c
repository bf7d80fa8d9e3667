/* A worker's tables: its sessions by id, local ufrag and remote 5-tuple
 * (each entry removed only by the session that owns it, so removal costs a
 * session its own few entries), and its host candidates' priorities. Worker
 * thread, except the candidates, set before it starts. */
#include "engine/worker_private.h"

#include "engine/session_port.h"
#include "ice/ice_candidates.h"

#include <string.h>

void moat_worker_set_candidates(moat_worker *worker, const struct in6_addr *addresses,
                                const uint32_t *priorities, size_t n)
{
    if (n > MOAT_WORKER_MAX_CANDIDATES)
        n = MOAT_WORKER_MAX_CANDIDATES;
    memcpy(worker->candidate_addresses, addresses, n * sizeof *addresses);
    memcpy(worker->candidate_priorities, priorities, n * sizeof *priorities);
    worker->n_candidates = n;
}

uint32_t moat_worker_local_priority(const moat_worker *worker, const struct in6_addr *local)
{
    for (size_t i = 0; i < worker->n_candidates; i++) {
        if (memcmp(&worker->candidate_addresses[i], local, sizeof *local) == 0)
            return worker->candidate_priorities[i];
    }
    /* Not announced (a 1:1 NAT's private side, a wildcard test setup): every
     * such pair ranks by the peer's priority alone. */
    return (126u << 24) | 255u; /* host, local preference 0, component 1 */
}

void moat_worker_add_session(moat_worker *worker, moat_session *session)
{
    g_hash_table_insert(worker->sessions_by_id, (gpointer)moat_session_id(session), session);
    /* The socket may expect what its transports declared, all at once. */
    worker->detector.config.declared_pps += moat_session_declared_pps(session);
    __atomic_store_n(&worker->session_count, g_hash_table_size(worker->sessions_by_id),
                     __ATOMIC_RELAXED);
}

void moat_worker_remove_session(moat_worker *worker, moat_session *session)
{
    uint32_t declared = moat_session_declared_pps(session);
    worker->detector.config.declared_pps -= declared < worker->detector.config.declared_pps
                                                ? declared
                                                : worker->detector.config.declared_pps;
    /* The session knows its own keys: removal costs its few entries, not a
     * scan of every table (a mass expiry stays linear). */
    moat_session_release_bindings(session);
    if (worker->kernel)
        moat_kernel_filter_forget(worker->kernel, session);
    g_hash_table_remove(worker->sessions_by_id, moat_session_id(session));
    worker->sessions_removed++;
    __atomic_store_n(&worker->session_count, g_hash_table_size(worker->sessions_by_id),
                     __ATOMIC_RELAXED);
}

moat_session *moat_worker_find_session(moat_worker *worker, const char *session_id)
{
    return g_hash_table_lookup(worker->sessions_by_id, session_id);
}

bool moat_worker_bind_ufrag(moat_worker *worker, const char *local_ufrag, moat_session *session)
{
    moat_session *owner = g_hash_table_lookup(worker->sessions_by_ufrag, local_ufrag);
    if (owner == session)
        return true;
    if (owner != NULL)
        return false;
    g_hash_table_insert(worker->sessions_by_ufrag, g_strdup(local_ufrag), session);
    return true;
}

void moat_worker_unbind_ufrag(moat_worker *worker, const char *local_ufrag, moat_session *session)
{
    if (g_hash_table_lookup(worker->sessions_by_ufrag, local_ufrag) == session)
        g_hash_table_remove(worker->sessions_by_ufrag, local_ufrag);
}

bool moat_worker_bind_tuple(moat_worker *worker, const struct sockaddr_in6 *remote,
                            moat_session *session)
{
    moat_session *owner = g_hash_table_lookup(worker->sessions_by_tuple, remote);
    if (owner == session)
        return true;
    if (owner != NULL)
        return false;
    g_hash_table_insert(worker->sessions_by_tuple, g_memdup2(remote, sizeof *remote), session);
    /* A cascade link's tuple stays the routes' pass entry in the kernel
     * filter (a leg on it checks its own packets in user space). */
    if (worker->kernel && !moat_worker_is_route_tuple(worker, remote))
        moat_kernel_filter_bind_tuple(worker->kernel, session, remote);
    return true;
}

void moat_worker_unbind_tuple(moat_worker *worker, const struct sockaddr_in6 *remote,
                              moat_session *session)
{
    if (g_hash_table_lookup(worker->sessions_by_tuple, remote) != session)
        return;
    g_hash_table_remove(worker->sessions_by_tuple, remote);
    if (worker->kernel && !moat_worker_is_route_tuple(worker, remote))
        moat_kernel_filter_unbind_tuple(worker->kernel, remote);
}

/* A route's tuple, counted: the first route puts it in the kernel filter's
 * map as a tuple it passes (no one session's tags to check: the sessions
 * behind it check their own), the last one takes it out. */
static void route_tuple_ref(moat_worker *worker, const struct sockaddr_in6 *remote)
{
    gpointer key, count;
    if (g_hash_table_lookup_extended(worker->route_tuples, remote, &key, &count)) {
        g_hash_table_insert(worker->route_tuples, g_memdup2(remote, sizeof *remote),
                            GUINT_TO_POINTER(GPOINTER_TO_UINT(count) + 1));
        return;
    }
    key = g_memdup2(remote, sizeof *remote);
    g_hash_table_insert(worker->route_tuples, key, GUINT_TO_POINTER(1));
    if (worker->kernel)
        moat_kernel_filter_pass_tuple(worker->kernel, key, remote);
}

static void route_tuple_unref(moat_worker *worker, const struct sockaddr_in6 *remote)
{
    gpointer key, count;
    if (!g_hash_table_lookup_extended(worker->route_tuples, remote, &key, &count))
        return;
    if (GPOINTER_TO_UINT(count) > 1) {
        g_hash_table_insert(worker->route_tuples, g_memdup2(remote, sizeof *remote),
                            GUINT_TO_POINTER(GPOINTER_TO_UINT(count) - 1));
        return;
    }
    if (worker->kernel) {
        moat_kernel_filter_unbind_tuple(worker->kernel, remote);
        moat_kernel_filter_forget(worker->kernel, key);
    }
    g_hash_table_remove(worker->route_tuples, remote);
    /* A session that holds the tuple outright keeps it in the filter. */
    moat_session *owner = g_hash_table_lookup(worker->sessions_by_tuple, remote);
    if (worker->kernel && owner)
        moat_kernel_filter_bind_tuple(worker->kernel, owner, remote);
}

/* The key of a per-SSRC route: address and port only (no flow info or
 * scope), so that lookups match however the address was filled in. */
static moat_route route_key(const struct sockaddr_in6 *remote, uint32_t ssrc)
{
    moat_route route = {.ssrc = ssrc};
    route.remote.sin6_family = AF_INET6;
    route.remote.sin6_addr = remote->sin6_addr;
    route.remote.sin6_port = remote->sin6_port;
    return route;
}

bool moat_worker_bind_route(moat_worker *worker, const struct sockaddr_in6 *remote, uint32_t ssrc,
                            moat_session *session)
{
    moat_route route = route_key(remote, ssrc);
    moat_session *owner = g_hash_table_lookup(worker->sessions_by_route, &route);
    if (owner == session)
        return true;
    if (owner != NULL || g_hash_table_contains(worker->sessions_by_tuple, remote))
        return false;
    g_hash_table_insert(worker->sessions_by_route, g_memdup2(&route, sizeof route), session);
    route_tuple_ref(worker, remote);
    return true;
}

void moat_worker_unbind_route(moat_worker *worker, const struct sockaddr_in6 *remote, uint32_t ssrc,
                              moat_session *session)
{
    moat_route route = route_key(remote, ssrc);
    if (g_hash_table_lookup(worker->sessions_by_route, &route) != session)
        return;
    g_hash_table_remove(worker->sessions_by_route, &route);
    route_tuple_unref(worker, remote);
}

moat_session *moat_worker_session_by_route(moat_worker *worker, const struct sockaddr_in6 *remote,
                                           uint32_t ssrc)
{
    moat_route route = route_key(remote, ssrc);
    return g_hash_table_lookup(worker->sessions_by_route, &route);
}

moat_session *moat_worker_session_by_tuple(moat_worker *worker, const struct sockaddr_in6 *remote)
{
    return g_hash_table_lookup(worker->sessions_by_tuple, remote);
}

bool moat_worker_is_route_tuple(moat_worker *worker, const struct sockaddr_in6 *remote)
{
    return g_hash_table_size(worker->route_tuples) > 0 &&
           g_hash_table_contains(worker->route_tuples, remote);
}

moat_session *moat_worker_session_by_ufrag(moat_worker *worker, const char *ufrag)
{
    return g_hash_table_lookup(worker->sessions_by_ufrag, ufrag);
}

/* Interrupt moderation: in polling mode the socket leaves the epoll set and
 * is drained on a timer (load_monitor.h), one wake-up for many datagrams. */

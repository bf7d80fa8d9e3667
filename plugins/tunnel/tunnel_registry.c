/* The tunnels by name, their two peer slots, and the plugin's counters:
 * those of live peers are read from the peers, those of peers that left are
 * folded into `retired` when they leave (tunnel.h). */
#include "tunnel.h"

#include <pthread.h>
#include <string.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static GHashTable *tunnels; /* name -> tunnel, under registry_lock */

/* Counters of peers that left, and refusals; under registry_lock. */
static struct {
    uint64_t received, relayed, relayed_bytes;
    uint64_t dropped[TUNNEL_DROP_REASON_COUNT];
    uint64_t refused[TUNNEL_REFUSED_REASON_COUNT];
    uint64_t joined;
} retired;

static const char *const drop_reason_names[TUNNEL_DROP_REASON_COUNT] = {
    "no_peer", "no_channel", "not_binary", "oversized", "relay_refused",
};

static const char *const refused_reason_names[TUNNEL_REFUSED_REASON_COUNT] = {
    "full",
    "bad_name",
    "no_data_channel",
    "too_many_tunnels",
};

const char *tunnel_drop_reason_name(tunnel_drop_reason reason)
{
    return reason < TUNNEL_DROP_REASON_COUNT ? drop_reason_names[reason] : "unknown";
}

void tunnel_registry_init(void)
{
    pthread_mutex_lock(&registry_lock);
    if (!tunnels)
        tunnels = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    memset(&retired, 0, sizeof retired);
    pthread_mutex_unlock(&registry_lock);
}

void tunnel_registry_destroy(void)
{
    pthread_mutex_lock(&registry_lock);
    if (tunnels)
        g_hash_table_destroy(tunnels);
    tunnels = NULL;
    pthread_mutex_unlock(&registry_lock);
}

bool tunnel_name_valid(const char *name, size_t length)
{
    if (!name || length == 0 || length >= TUNNEL_NAME_SIZE)
        return false;
    for (size_t i = 0; i < length; i++) {
        char c = name[i];
        if (!g_ascii_isalnum(c) && c != '-' && c != '_')
            return false;
    }
    return true;
}

/* Registry lock held. */
static void count_refusal(tunnel_refused_reason reason)
{
    retired.refused[reason]++;
}

void tunnel_note_refused(tunnel_refused_reason reason)
{
    pthread_mutex_lock(&registry_lock);
    count_refusal(reason);
    pthread_mutex_unlock(&registry_lock);
}

const char *tunnel_join(tunnel_peer *peer, const char *name)
{
    if (!tunnel_name_valid(name, strlen(name))) {
        tunnel_note_refused(TUNNEL_REFUSED_BAD_NAME);
        return MOAT_PLUGIN_ERROR_NOT_FOUND "a tunnel name is 1 to 63 of [A-Za-z0-9_-]";
    }
    const char *error = NULL;
    pthread_mutex_lock(&registry_lock);
    tunnel *t = tunnels ? g_hash_table_lookup(tunnels, name) : NULL;
    if (!t && tunnels && g_hash_table_size(tunnels) >= TUNNEL_MAX_TUNNELS) {
        count_refusal(TUNNEL_REFUSED_TOO_MANY_TUNNELS);
        error = MOAT_PLUGIN_ERROR_FULL "the gateway holds its maximum of tunnels";
    } else if (!t && tunnels) {
        t = g_new0(tunnel, 1);
        g_strlcpy(t->name, name, sizeof t->name);
        g_hash_table_insert(tunnels, t->name, t);
    } else if (!tunnels) {
        error = "tunnel plugin not initialised";
    }
    if (t && !error) {
        int slot = !t->peers[0] ? 0 : !t->peers[1] ? 1 : -1;
        if (slot < 0) {
            count_refusal(TUNNEL_REFUSED_FULL);
            error = MOAT_PLUGIN_ERROR_CONFLICT "the tunnel already has its two peers";
        } else {
            t->peers[slot] = peer;
            peer->slot = slot;
            peer->tunnel = t;
            retired.joined++;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return error;
}

/* Registry lock held. */
static void retire_counters(const tunnel_peer *peer)
{
    retired.received += atomic_load(&peer->received);
    retired.relayed += atomic_load(&peer->relayed);
    retired.relayed_bytes += atomic_load(&peer->relayed_bytes);
    for (int r = 0; r < TUNNEL_DROP_REASON_COUNT; r++)
        retired.dropped[r] += atomic_load(&peer->dropped[r]);
}

void tunnel_leave(tunnel_peer *peer)
{
    tunnel *t = peer->tunnel;
    if (!t)
        return;
    pthread_mutex_lock(&registry_lock);
    t->peers[peer->slot] = NULL;
    tunnel_peer *partner = t->peers[1 - peer->slot];
    /* The tunnel is one link: its other end goes too (the peer's own worker
     * ends its session, tunnel.c's timer). */
    if (partner)
        atomic_store(&partner->partner_left, true);
    retire_counters(peer);
    if (!partner && tunnels)
        g_hash_table_remove(tunnels, t->name);
    peer->tunnel = NULL;
    pthread_mutex_unlock(&registry_lock);
}

moat_plugin_session *tunnel_partner(tunnel_peer *peer, uint16_t *stream_id,
                                    tunnel_drop_reason *reason)
{
    moat_plugin_session *handle = NULL;
    pthread_mutex_lock(&registry_lock);
    tunnel *t = peer->tunnel;
    tunnel_peer *partner = t ? t->peers[1 - peer->slot] : NULL;
    int stream = partner ? atomic_load(&partner->data_stream) : 0;
    if (!partner) {
        *reason = TUNNEL_DROP_NO_PEER;
    } else if (stream == 0) {
        *reason = TUNNEL_DROP_NO_CHANNEL;
    } else {
        handle = partner->handle;
        *stream_id = (uint16_t)(stream - 1);
        peer->gateway->handle_ref(handle);
    }
    pthread_mutex_unlock(&registry_lock);
    return handle;
}

/* Sums of live peers and retired ones. Registry lock held. */
static void sum_counters(uint64_t *received, uint64_t *relayed, uint64_t *bytes,
                         uint64_t dropped[TUNNEL_DROP_REASON_COUNT], size_t *n_tunnels,
                         size_t *n_peers)
{
    *received = retired.received;
    *relayed = retired.relayed;
    *bytes = retired.relayed_bytes;
    memcpy(dropped, retired.dropped, sizeof retired.dropped);
    *n_tunnels = 0;
    *n_peers = 0;
    if (!tunnels)
        return;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, tunnels);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        tunnel *t = value;
        (*n_tunnels)++;
        for (int i = 0; i < TUNNEL_PEERS; i++) {
            const tunnel_peer *p = t->peers[i];
            if (!p)
                continue;
            (*n_peers)++;
            *received += atomic_load(&p->received);
            *relayed += atomic_load(&p->relayed);
            *bytes += atomic_load(&p->relayed_bytes);
            for (int r = 0; r < TUNNEL_DROP_REASON_COUNT; r++)
                dropped[r] += atomic_load(&p->dropped[r]);
        }
    }
}

char *tunnel_metrics(void)
{
    uint64_t received, relayed, bytes, dropped[TUNNEL_DROP_REASON_COUNT],
        refused[TUNNEL_REFUSED_REASON_COUNT], joined;
    size_t n_tunnels, n_peers;
    pthread_mutex_lock(&registry_lock);
    sum_counters(&received, &relayed, &bytes, dropped, &n_tunnels, &n_peers);
    memcpy(refused, retired.refused, sizeof refused);
    joined = retired.joined;
    pthread_mutex_unlock(&registry_lock);
    GString *out = g_string_new(NULL);
    g_string_append_printf(
        out,
        "# HELP moat_tunnel_tunnels Tunnels open (one or two peers)\n"
        "# TYPE moat_tunnel_tunnels gauge\nmoat_tunnel_tunnels %zu\n"
        "# HELP moat_tunnel_peers Peers in tunnels\n"
        "# TYPE moat_tunnel_peers gauge\nmoat_tunnel_peers %zu\n"
        "# HELP moat_tunnel_joins_total Peers that joined a tunnel\n"
        "# TYPE moat_tunnel_joins_total counter\nmoat_tunnel_joins_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_tunnel_messages_received_total Messages (IP packets) peers sent into "
        "tunnels\n"
        "# TYPE moat_tunnel_messages_received_total counter\n"
        "moat_tunnel_messages_received_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_tunnel_messages_relayed_total Messages handed to the other peer\n"
        "# TYPE moat_tunnel_messages_relayed_total counter\n"
        "moat_tunnel_messages_relayed_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_tunnel_bytes_relayed_total Payload bytes handed to the other peer\n"
        "# TYPE moat_tunnel_bytes_relayed_total counter\n"
        "moat_tunnel_bytes_relayed_total %" G_GUINT64_FORMAT "\n",
        n_tunnels, n_peers, (guint64)joined, (guint64)received, (guint64)relayed, (guint64)bytes);
    g_string_append(out, "# HELP moat_tunnel_dropped_messages_total Messages the tunnel could "
                         "not deliver, by reason\n"
                         "# TYPE moat_tunnel_dropped_messages_total counter\n");
    for (int r = 0; r < TUNNEL_DROP_REASON_COUNT; r++)
        g_string_append_printf(
            out, "moat_tunnel_dropped_messages_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
            drop_reason_names[r], (guint64)dropped[r]);
    g_string_append(out, "# HELP moat_tunnel_refused_total Joins refused, by reason\n"
                         "# TYPE moat_tunnel_refused_total counter\n");
    for (int r = 0; r < TUNNEL_REFUSED_REASON_COUNT; r++)
        g_string_append_printf(out,
                               "moat_tunnel_refused_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
                               refused_reason_names[r], (guint64)refused[r]);
    return g_string_free(out, FALSE);
}

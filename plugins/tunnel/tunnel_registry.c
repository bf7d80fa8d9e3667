/* The tunnels by name, their two sides (peers) with up to TUNNEL_MAX_LANES
 * lanes (sessions) each, the tunnels that ended (out of the name table, their
 * lanes still leaving), and the plugin's counters: those of live lanes are
 * read from the lanes, those of lanes that left are folded into `retired`
 * when they leave (tunnel.h). */
#include "tunnel.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static GHashTable *tunnels; /* name -> tunnel, under registry_lock */
/* Tunnels that ended (tunnel.ended), until their last lane leaves: a set
 * that owns them. Under registry_lock. */
static GHashTable *ended;

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
    "full",     "bad_name",     "no_data_channel", "too_many_tunnels",
    "bad_lane", "no_such_peer", "lane_taken",      "lane_cap",
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
    if (!ended)
        ended = g_hash_table_new_full(g_direct_hash, g_direct_equal, g_free, NULL);
    memset(&retired, 0, sizeof retired);
    pthread_mutex_unlock(&registry_lock);
}

void tunnel_registry_destroy(void)
{
    pthread_mutex_lock(&registry_lock);
    if (tunnels)
        g_hash_table_destroy(tunnels);
    if (ended)
        g_hash_table_destroy(ended);
    tunnels = NULL;
    ended = NULL;
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

static bool key_valid(const char *key, size_t length)
{
    return length >= TUNNEL_KEY_MIN && length < TUNNEL_KEY_SIZE &&
           strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
               length;
}

const char *tunnel_resource_parse(const char *resource, tunnel_resource *out, bool *bad_lane)
{
    memset(out, 0, sizeof *out);
    *bad_lane = false;
    const char *slash = resource ? strchr(resource, '/') : NULL;
    size_t name_length = !resource ? 0 : slash ? (size_t)(slash - resource) : strlen(resource);
    if (!resource || !tunnel_name_valid(resource, name_length))
        return MOAT_PLUGIN_ERROR_NOT_FOUND "a tunnel name is 1 to 63 of [A-Za-z0-9_-]";
    memcpy(out->name, resource, name_length);
    if (!slash)
        return NULL;
    *bad_lane = true;
    const char *key = slash + 1;
    const char *lane = strchr(key, '/');
    size_t key_length = lane ? (size_t)(lane - key) : 0;
    if (!lane || key_length < TUNNEL_KEY_MIN || key_length >= TUNNEL_KEY_SIZE)
        return MOAT_PLUGIN_ERROR_NOT_FOUND "a lane is /whip/tunnel/<name>/<peer-key>/<lane>: "
                                           "a key of 16 to 64 of [A-Za-z0-9_-], a lane number";
    memcpy(out->key, key, key_length);
    lane++;
    size_t digits = strspn(lane, "0123456789");
    if (!key_valid(out->key, key_length) || digits == 0 || digits > 3 || lane[digits] != '\0' ||
        (digits > 1 && lane[0] == '0'))
        return MOAT_PLUGIN_ERROR_NOT_FOUND "a lane is /whip/tunnel/<name>/<peer-key>/<lane>: "
                                           "a key of 16 to 64 of [A-Za-z0-9_-], a lane number";
    out->lane = atoi(lane);
    *bad_lane = false;
    return NULL;
}

/* The side holding `key` ("" matches none), or -1. Registry lock held. */
static int side_of_key(const tunnel *t, const char *key)
{
    for (int i = 0; key[0] && i < TUNNEL_PEERS; i++) {
        if (t->sides[i].taken && strcmp(t->sides[i].key, key) == 0)
            return i;
    }
    return -1;
}

/* Puts peer into t as the resource says: NULL or the refusal. Registry
 * lock held. */
static const char *place_lane(tunnel *t, tunnel_peer *peer, const tunnel_resource *r)
{
    if (r->lane >= TUNNEL_MAX_LANES) {
        count_refusal(TUNNEL_REFUSED_LANE_CAP);
        return MOAT_PLUGIN_ERROR_CONFLICT "a peer has at most 8 lanes (0 to 7)";
    }
    int side = side_of_key(t, r->key);
    if (side < 0 && r->lane > 0) {
        count_refusal(TUNNEL_REFUSED_NO_SUCH_PEER);
        return MOAT_PLUGIN_ERROR_NOT_FOUND "no peer of this tunnel holds that key: "
                                           "join lane 0 first";
    }
    if (side < 0) {
        side = !t->sides[0].taken ? 0 : !t->sides[1].taken ? 1 : -1;
        if (side < 0) {
            count_refusal(TUNNEL_REFUSED_FULL);
            return MOAT_PLUGIN_ERROR_CONFLICT "the tunnel already has its two peers";
        }
        t->sides[side].taken = true;
        g_strlcpy(t->sides[side].key, r->key, sizeof t->sides[side].key);
    } else if (t->sides[side].lanes[r->lane]) {
        count_refusal(TUNNEL_REFUSED_LANE_TAKEN);
        return MOAT_PLUGIN_ERROR_CONFLICT "that lane of this peer is taken";
    }
    t->sides[side].lanes[r->lane] = peer;
    t->sides[side].n_lanes++;
    peer->slot = side;
    peer->lane = r->lane;
    peer->tunnel = t;
    retired.joined++;
    return NULL;
}

/* The tunnel ends: its name no longer finds it (a join by that name makes
 * a new tunnel), and it waits in `ended` for its last lane. Registry lock
 * held. */
static void end_tunnel(tunnel *t)
{
    if (t->ended)
        return;
    t->ended = true;
    if (tunnels && g_hash_table_lookup(tunnels, t->name) == t)
        g_hash_table_steal(tunnels, t->name);
    if (ended)
        g_hash_table_add(ended, t);
}

/* Whether a lane of t is ending (its DELETE was answered, or its session
 * is draining): the tunnel ends with it, whatever comes first. Registry
 * lock held. */
static bool tunnel_ending(const tunnel *t, const moat_gateway_calls *gateway)
{
    for (int i = 0; gateway->session_ending && i < TUNNEL_PEERS * TUNNEL_MAX_LANES; i++) {
        const tunnel_peer *p = t->sides[i / TUNNEL_MAX_LANES].lanes[i % TUNNEL_MAX_LANES];
        if (p && gateway->session_ending(p->handle))
            return true;
    }
    return false;
}

const char *tunnel_join(tunnel_peer *peer, const char *resource)
{
    tunnel_resource r;
    bool bad_lane = false;
    const char *error = tunnel_resource_parse(resource, &r, &bad_lane);
    if (error) {
        tunnel_note_refused(bad_lane ? TUNNEL_REFUSED_BAD_LANE : TUNNEL_REFUSED_BAD_NAME);
        return error;
    }
    pthread_mutex_lock(&registry_lock);
    tunnel *t = tunnels ? g_hash_table_lookup(tunnels, r.name) : NULL;
    /* A lane whose session is ending (its peer left) ends the tunnel: no
     * newcomer is paired with what is leaving, even before it is gone. */
    if (t && tunnel_ending(t, peer->gateway)) {
        end_tunnel(t);
        t = NULL;
    }
    bool created = false;
    if (!tunnels) {
        error = "tunnel plugin not initialised";
    } else if (!t && g_hash_table_size(tunnels) + g_hash_table_size(ended) >= TUNNEL_MAX_TUNNELS) {
        count_refusal(TUNNEL_REFUSED_TOO_MANY_TUNNELS);
        error = MOAT_PLUGIN_ERROR_FULL "the gateway holds its maximum of tunnels";
    } else if (!t) {
        t = g_new0(tunnel, 1);
        g_strlcpy(t->name, r.name, sizeof t->name);
        created = true;
    }
    if (t && !error)
        error = place_lane(t, peer, &r);
    if (created && !error)
        g_hash_table_insert(tunnels, t->name, t);
    else if (created)
        g_free(t);
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
    /* Its other lanes end within TUNNEL_CHECK_US: none may be paired with
     * a newcomer meanwhile. */
    end_tunnel(t);
    tunnel_side *side = &t->sides[peer->slot];
    side->lanes[peer->lane] = NULL;
    if (--side->n_lanes == 0)
        memset(side, 0, sizeof *side);
    /* The tunnel is one link: every other lane of both ends goes too (each
     * lane's own worker ends its session, tunnel.c's timer). */
    for (int s = 0; s < TUNNEL_PEERS; s++) {
        for (int i = 0; i < TUNNEL_MAX_LANES; i++) {
            if (t->sides[s].lanes[i])
                atomic_store(&t->sides[s].lanes[i]->partner_left, true);
        }
    }
    retire_counters(peer);
    peer->tunnel = NULL;
    if (!t->sides[0].taken && !t->sides[1].taken && ended)
        g_hash_table_remove(ended, t); /* frees it */
    pthread_mutex_unlock(&registry_lock);
}

/* The lane of `side` that lane `lane` of the other side sends to: the same
 * lane, or the first with an open channel; its stream + 1 in *stream (0:
 * none open). Registry lock held. */
static tunnel_peer *target_lane(const tunnel_side *side, int lane, int *stream)
{
    tunnel_peer *same = side->lanes[lane];
    *stream = same ? atomic_load(&same->data_stream) : 0;
    if (*stream)
        return same;
    for (int i = 0; i < TUNNEL_MAX_LANES; i++) {
        tunnel_peer *p = side->lanes[i];
        *stream = p ? atomic_load(&p->data_stream) : 0;
        if (*stream)
            return p;
    }
    return NULL;
}

moat_plugin_session *tunnel_partner(tunnel_peer *peer, uint16_t *stream_id,
                                    tunnel_drop_reason *reason)
{
    moat_plugin_session *handle = NULL;
    pthread_mutex_lock(&registry_lock);
    tunnel *t = peer->tunnel;
    const tunnel_side *other = t ? &t->sides[1 - peer->slot] : NULL;
    int stream = 0;
    tunnel_peer *partner = other && other->n_lanes ? target_lane(other, peer->lane, &stream) : NULL;
    if (!other || !other->n_lanes) {
        *reason = TUNNEL_DROP_NO_PEER;
    } else if (!partner) {
        *reason = TUNNEL_DROP_NO_CHANNEL;
    } else {
        handle = partner->handle;
        *stream_id = (uint16_t)(stream - 1);
        peer->gateway->handle_ref(handle);
    }
    pthread_mutex_unlock(&registry_lock);
    return handle;
}

/* What /metrics shows: live lanes' counters summed with retired ones. */
typedef struct {
    uint64_t received, relayed, bytes, joined;
    uint64_t dropped[TUNNEL_DROP_REASON_COUNT];
    uint64_t refused[TUNNEL_REFUSED_REASON_COUNT];
    size_t n_tunnels, n_peers, n_lanes;
} tunnel_figures;

/* Adds tunnel t's peers, lanes and lane counters. Registry lock held. */
static void add_tunnel(const tunnel *t, tunnel_figures *f)
{
    f->n_tunnels++;
    for (int i = 0; i < TUNNEL_PEERS * TUNNEL_MAX_LANES; i++) {
        const tunnel_side *side = &t->sides[i / TUNNEL_MAX_LANES];
        const tunnel_peer *p = side->lanes[i % TUNNEL_MAX_LANES];
        if (i % TUNNEL_MAX_LANES == 0 && side->taken)
            f->n_peers++;
        if (!p)
            continue;
        f->n_lanes++;
        f->received += atomic_load(&p->received);
        f->relayed += atomic_load(&p->relayed);
        f->bytes += atomic_load(&p->relayed_bytes);
        for (int r = 0; r < TUNNEL_DROP_REASON_COUNT; r++)
            f->dropped[r] += atomic_load(&p->dropped[r]);
    }
}

/* Sums of live peers and retired ones. The lanes of tunnels that ended
 * count until they leave (their counters are folded into `retired` then),
 * so the totals never go back. Registry lock held. */
static void sum_figures(tunnel_figures *f)
{
    memset(f, 0, sizeof *f);
    f->received = retired.received;
    f->relayed = retired.relayed;
    f->bytes = retired.relayed_bytes;
    f->joined = retired.joined;
    memcpy(f->dropped, retired.dropped, sizeof retired.dropped);
    memcpy(f->refused, retired.refused, sizeof retired.refused);
    GHashTableIter it;
    gpointer key, value;
    if (tunnels) {
        g_hash_table_iter_init(&it, tunnels);
        while (g_hash_table_iter_next(&it, NULL, &value))
            add_tunnel(value, f);
    }
    if (ended) {
        g_hash_table_iter_init(&it, ended);
        while (g_hash_table_iter_next(&it, &key, NULL))
            add_tunnel(key, f);
    }
}

char *tunnel_metrics(void)
{
    tunnel_figures f;
    pthread_mutex_lock(&registry_lock);
    sum_figures(&f);
    pthread_mutex_unlock(&registry_lock);
    GString *out = g_string_new(NULL);
    g_string_append_printf(
        out,
        "# HELP moat_tunnel_tunnels Tunnels open (one or two peers)\n"
        "# TYPE moat_tunnel_tunnels gauge\nmoat_tunnel_tunnels %zu\n"
        "# HELP moat_tunnel_peers Peers in tunnels\n"
        "# TYPE moat_tunnel_peers gauge\nmoat_tunnel_peers %zu\n"
        "# HELP moat_tunnel_lanes Sessions (lanes) of peers in tunnels\n"
        "# TYPE moat_tunnel_lanes gauge\nmoat_tunnel_lanes %zu\n"
        "# HELP moat_tunnel_joins_total Sessions (lanes) that joined a tunnel\n"
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
        f.n_tunnels, f.n_peers, f.n_lanes, (guint64)f.joined, (guint64)f.received,
        (guint64)f.relayed, (guint64)f.bytes);
    g_string_append(out, "# HELP moat_tunnel_dropped_messages_total Messages the tunnel could "
                         "not deliver, by reason\n"
                         "# TYPE moat_tunnel_dropped_messages_total counter\n");
    for (int r = 0; r < TUNNEL_DROP_REASON_COUNT; r++)
        g_string_append_printf(
            out, "moat_tunnel_dropped_messages_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
            drop_reason_names[r], (guint64)f.dropped[r]);
    g_string_append(out, "# HELP moat_tunnel_refused_total Joins refused, by reason\n"
                         "# TYPE moat_tunnel_refused_total counter\n");
    for (int r = 0; r < TUNNEL_REFUSED_REASON_COUNT; r++)
        g_string_append_printf(out,
                               "moat_tunnel_refused_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
                               refused_reason_names[r], (guint64)f.refused[r]);
    return g_string_free(out, FALSE);
}

/* The tunnel plugin (plugin API v2): two peers join a tunnel with WHIP on
 * /whip/tunnel/<name> (or, with several lanes each, on
 * /whip/tunnel/<name>/<peer-key>/<lane>) and their data channel messages
 * (IP packets, one per message) are relayed to each other (tunnel_relay.c);
 * a third peer gets a 409. When one lane leaves, every other lane of the
 * tunnel ends too. This file owns the plugin table, attach/detach, the
 * per-lane timer and the summary. */
#include "tunnel.h"

#include <stdio.h>
#include <string.h>

/* Written by init before any attach, cleared by destroy after the last
 * detach. */
static const moat_gateway_calls *tunnel_gateway;

static int tunnel_init(const moat_gateway_calls *gateway)
{
    if (!gateway || !gateway->relay_data || !gateway->handle_ref || !gateway->handle_unref ||
        !gateway->set_timer || !gateway->close_session)
        return -1;
    tunnel_gateway = gateway;
    tunnel_registry_init();
    return 0;
}

static void tunnel_destroy(void)
{
    tunnel_registry_destroy();
    tunnel_gateway = NULL;
}

static void *tunnel_attach(moat_plugin_session *handle, const moat_session_info *info,
                           const char **error)
{
    if (!tunnel_gateway || !info || !info->endpoint || !info->resource) {
        *error = "tunnel plugin: bad session";
        return NULL;
    }
    if (strcmp(info->endpoint, "whip") != 0) {
        *error = MOAT_PLUGIN_ERROR_NOT_FOUND "join a tunnel with POST /whip/tunnel/<name>";
        return NULL;
    }
    if (!info->has_data_channel) {
        tunnel_note_refused(TUNNEL_REFUSED_NO_DATA_CHANNEL);
        *error = MOAT_PLUGIN_ERROR_BAD_REQUEST "a tunnel peer's offer needs a data channel "
                                               "(m=application)";
        return NULL;
    }
    tunnel_peer *peer = g_new0(tunnel_peer, 1);
    peer->handle = handle;
    peer->gateway = tunnel_gateway;
    *error = tunnel_join(peer, info->resource);
    if (*error) {
        g_free(peer);
        return NULL;
    }
    /* The partner relays to this handle from its worker until we leave. */
    tunnel_gateway->handle_ref(handle);
    /* From the start, not from a first channel or message: a lane whose
     * only channel is negotiated (no DCEP OPEN) and that sends nothing
     * still ends when its tunnel does (tunnel_on_timer). */
    tunnel_gateway->set_timer(handle, TUNNEL_CHECK_US);
    return peer;
}

static void tunnel_detach(void *state)
{
    tunnel_peer *peer = state;
    tunnel_leave(peer);
    peer->gateway->handle_unref(peer->handle);
    g_free(peer);
}

static void tunnel_hangup(void *state)
{
    tunnel_peer *peer = state;
    peer->hung_up = true;
}

/* The partner left: this end of the link goes too. Armed at attach, then
 * every TUNNEL_CHECK_US for the lane's life. */
static void tunnel_on_timer(void *state, uint64_t now_us)
{
    tunnel_peer *peer = state;
    (void)now_us;
    if (peer->hung_up)
        return;
    if (atomic_load(&peer->partner_left)) {
        peer->gateway->close_session(peer->handle);
        return;
    }
    peer->gateway->set_timer(peer->handle, TUNNEL_CHECK_US);
}

static char *tunnel_handle_message(void *state, const char *json)
{
    tunnel_peer *peer = state;
    (void)json;
    GString *out = g_string_new("{\"plugin\":\"tunnel\"");
    g_string_append_printf(
        out,
        ",\"slot\":%d,\"lane\":%d,\"channel_open\":%s,\"received\":%" G_GUINT64_FORMAT
        ",\"relayed\":%" G_GUINT64_FORMAT ",\"relayed_bytes\":%" G_GUINT64_FORMAT ",\"dropped\":{",
        peer->slot, peer->lane, atomic_load(&peer->data_stream) ? "true" : "false",
        (guint64)atomic_load(&peer->received), (guint64)atomic_load(&peer->relayed),
        (guint64)atomic_load(&peer->relayed_bytes));
    for (int r = 0; r < TUNNEL_DROP_REASON_COUNT; r++)
        g_string_append_printf(out, "%s\"%s\":%" G_GUINT64_FORMAT, r ? "," : "",
                               tunnel_drop_reason_name(r), (guint64)atomic_load(&peer->dropped[r]));
    g_string_append(out, "}}");
    return g_string_free(out, FALSE);
}

/* Lane i of a tunnel lands on worker (hash of its name + i): lane i of both
 * peers on one worker relay without crossing rings, and the lanes spread
 * over the workers. A resource that is no lane stays where its name says
 * (attach refuses it). */
static int tunnel_place(const char *endpoint, const char *resource, unsigned n_workers)
{
    (void)endpoint;
    if (n_workers == 0 || !resource)
        return -1;
    tunnel_resource r;
    bool bad_lane = false;
    if (tunnel_resource_parse(resource, &r, &bad_lane) != NULL)
        return (int)(g_str_hash(resource) % n_workers);
    return (int)((g_str_hash(r.name) + (unsigned)r.lane) % n_workers);
}

static const moat_plugin tunnel_plugin = {
    .api_version = MOAT_PLUGIN_API_VERSION,
    .name = "tunnel",
    .description = "IP over data channels: relays each message between the two peers of a tunnel",
    .init = tunnel_init,
    .destroy = tunnel_destroy,
    .attach = tunnel_attach,
    .detach = tunnel_detach,
    .handle_message = tunnel_handle_message,
    .on_data = tunnel_on_data,
    .hangup = tunnel_hangup,
    .on_timer = tunnel_on_timer,
    .place = tunnel_place,
    .on_channel = tunnel_on_channel,
    .metrics = tunnel_metrics,
    .offers_need_token = true,
};

__attribute__((visibility("default"))) const moat_plugin *moat_plugin_entry(void);

const moat_plugin *moat_plugin_entry(void)
{
    return &tunnel_plugin;
}

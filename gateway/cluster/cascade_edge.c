/* Owns the edge's side of cascade links (cascade.h): one link per room this
 * node serves as an edge, opened by the first edge subscriber's offer
 * (offers arriving meanwhile wait for it), polled every
 * MOAT_CASCADE_POLL_MS: closed after its last subscriber (the owner's leg
 * closed by a request), and its subscribers ended when its leg lost
 * consent (the owner died or stopped feeding it) or when an offer finds
 * that the room's owner changed (a link to the new one opens then). */
#include "cluster/cascade_private.h"

#include "sdp/sdp.h"

#include "session/session_cascade.h"
#include "session/whip_session.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

static void link_free(gpointer data)
{
    cascade_link *link = data;
    g_ptr_array_free(link->subscribers, TRUE);
    OPENSSL_cleanse(link->to_edge, sizeof link->to_edge);
    OPENSSL_cleanse(link->to_owner, sizeof link->to_owner);
    g_free(link);
}

typedef struct {
    const char *authorization; /* NULL: none */
} node_headers;

static const char *node_header(const void *context, const char *name)
{
    const node_headers *headers = context;
    if (g_ascii_strcasecmp(name, "Content-Type") == 0)
        return "application/json";
    if (g_ascii_strcasecmp(name, "Authorization") == 0)
        return headers->authorization;
    return NULL;
}

/* POSTs `body` to the node at `base` + `path` with the forward token (and
 * this node's API token: the nodes of a cluster share it). */
static void post_to_node(moat_cascade *cascade, const char *base, const char *path,
                         const char *body, moat_cluster_proxy_done_fn done, void *user)
{
    moat_cluster *cluster = cascade->cluster;
    const char *token = cluster->gateway->config.token;
    char *authorization = token && *token ? g_strconcat("Bearer ", token, NULL) : NULL;
    node_headers headers = {authorization};
    moat_http_request request = {
        .method = "POST",
        .path = path,
        .body = body,
        .body_length = strlen(body),
        .peer = "",
        .header = node_header,
        .header_context = &headers,
    };
    char *url = g_strconcat(base, path, NULL);
    moat_cluster_proxy_forward(cluster->forwarder, url, &request, cluster->forward_token, done,
                               user);
    g_free(url);
    g_free(authorization);
}

static void serve_subscriber(cascade_link *link, pending_offer *offer)
{
    moat_cascade *cascade = link->cascade;
    moat_http_request request = moat_cluster_pending_request(offer);
    moat_http_response response = {0};
    moat_whip_handle_offer(cascade->cluster->gateway, &request, &response, "whep", offer->plugin,
                           offer->resource);
    const char *location =
        response.status == 201 ? moat_http_response_get_header(&response, "Location") : NULL;
    const char *id = location ? strstr(location, "/whip/resource/") : NULL;
    if (id) {
        g_ptr_array_add(link->subscribers, g_strdup(id + strlen("/whip/resource/")));
        cascade->edge_subscribers++;
        moat_http_response_header(&response, "X-Moat-Cascade-Owner", link->owner);
    }
    moat_cluster_pending_respond(offer, &response);
}

static void refuse_waiting(cascade_link *link, unsigned status, const char *detail)
{
    while (link->waiting) {
        pending_offer *offer = link->waiting->data;
        link->waiting = g_list_delete_link(link->waiting, link->waiting);
        moat_http_response response = {0};
        moat_http_response_header(&response, "Retry-After", "2");
        moat_http_response_error(&response, status, "cascade_failed", "%s", detail);
        moat_cluster_pending_respond(offer, &response);
    }
}

/* The edge's leg, started towards `remote` (or, when the link failed,
 * towards nowhere and hung up at once: a created session must start to
 * end). */
static bool start_leg(cascade_link *link, const char *media, json_int_t port, json_t *ssrcs,
                      json_t *layer_ssrcs, json_t *rtx_ssrcs)
{
    moat_cluster *cluster = link->cascade->cluster;
    moat_path path = {0};
    bool usable = moat_cascade_peer_address(cluster, media, port, &path.remote) &&
                  moat_cascade_local_address(cluster, &path.local);
    if (!usable) {
        moat_cascade_address("::1", 9, &path.remote);
        path.local = path.remote.sin6_addr;
    }
    for (size_t i = 0; i < 2; i++) {
        json_t *ssrc = json_array_get(ssrcs, i);
        json_int_t value = json_is_integer(ssrc) ? json_integer_value(ssrc) : 0;
        link->owner_ssrcs[i] = value > 0 && value <= (json_int_t)UINT32_MAX ? (uint32_t)value : 0;
    }
    link->n_layers =
        moat_cascade_layer_ssrcs_parse(layer_ssrcs, link->layer_ssrcs, MOAT_CASCADE_LINK_LAYERS);
    link->n_rtx =
        moat_cascade_layer_ssrcs_parse(rtx_ssrcs, link->rtx_ssrcs, 1 + MOAT_CASCADE_LINK_LAYERS);
    if (link->n_rtx != 1 + link->n_layers)
        link->n_rtx = 0; /* all or none */
    uint32_t routed[2 + MOAT_CASCADE_LINK_LAYERS * 2 + 1] = {link->owner_ssrcs[0],
                                                             link->owner_ssrcs[1]};
    size_t n_routed = 2;
    for (size_t l = 0; l < link->n_layers; l++)
        routed[n_routed++] = link->layer_ssrcs[l];
    for (size_t r = 0; r < link->n_rtx; r++)
        routed[n_routed++] = link->rtx_ssrcs[r];
    moat_srtp_keying keys;
    moat_cascade_keying(&keys, link->to_owner, link->to_edge);
    /* Routed by the owner leg's SSRCs: the links of other rooms from the
     * same owner come from the same socket to the same one here. */
    moat_session_start_cascade(link->leg, link->leg_worker, &path, &keys, MOAT_CASCADE_CONSENT_MS,
                               routed, usable ? n_routed : 0, link->layer_ssrcs,
                               link->n_rtx ? link->rtx_ssrcs + 1 : NULL,
                               usable ? link->n_layers : 0);
    OPENSSL_cleanse(&keys, sizeof keys);
    link->leg = NULL;
    if (!usable) {
        moat_session_record *record =
            moat_session_registry_find(cluster->gateway->sessions, link->leg_id);
        if (record)
            moat_whip_session_hang_up(cluster->gateway, record);
    }
    return usable;
}

static void link_answered(void *user, moat_http_response *response)
{
    cascade_link *link = user;
    moat_cascade *cascade = link->cascade;
    json_t *body = response->status == 201 && response->body
                       ? json_loadb(response->body, response->body_length, 0, NULL)
                       : NULL;
    const char *id = json_string_value(json_object_get(body, "id"));
    const char *media = json_string_value(json_object_get(body, "media"));
    json_t *port = json_object_get(body, "port");
    bool ok = id && strlen(id) < sizeof link->remote_id && json_is_integer(port) &&
              start_leg(link, media, json_integer_value(port), json_object_get(body, "ssrcs"),
                        json_object_get(body, "layer_ssrcs"), json_object_get(body, "rtx_ssrcs"));
    if (ok) {
        snprintf(link->remote_id, sizeof link->remote_id, "%s", id);
        link->state = LINK_UP;
        cascade->links_opened++;
        moat_log_info("cluster", "cascade: room %s/%s fed by %s (%s:%d)", link->plugin, link->room,
                      link->owner, media, (int)json_integer_value(port));
        GList *waiting = g_list_reverse(link->waiting);
        link->waiting = NULL;
        for (GList *l = waiting; l; l = l->next)
            serve_subscriber(link, l->data);
        g_list_free(waiting);
    } else {
        if (link->leg)
            start_leg(link, NULL, 0, NULL, NULL, NULL);
        cascade->links_failed++;
        moat_log_warn("cluster", "cascade: room %s/%s: the owner %s refused the link (%u)",
                      link->plugin, link->room, link->owner, response->status);
        refuse_waiting(link, 502, "the room's owner did not open a cascade link");
        g_hash_table_remove(cascade->links, link->key);
    }
    json_decref(body);
    moat_http_response_clear(response);
}

/* A new link: the edge's leg created (not started: the owner's address is
 * not known yet), keys drawn, the owner asked. */
static cascade_link *open_link(moat_cascade *cascade, pending_offer *offer,
                               const moat_cluster_node *owner, moat_http_response *refusal)
{
    moat_cluster *cluster = cascade->cluster;
    moat_gateway *gateway = cluster->gateway;
    const moat_plugin *plugin = moat_plugin_registry_find(gateway->plugins, offer->plugin);
    if (!plugin) {
        moat_http_response_error(refusal, 404, "not_found", "no such plugin");
        return NULL;
    }
    cascade_link *link = g_new0(cascade_link, 1);
    link->cascade = cascade;
    snprintf(link->key, sizeof link->key, "%s", offer->key);
    snprintf(link->plugin, sizeof link->plugin, "%s", offer->plugin);
    snprintf(link->room, sizeof link->room, "%s", offer->room);
    snprintf(link->owner, sizeof link->owner, "%s", owner->id);
    snprintf(link->owner_http, sizeof link->owner_http, "%s", owner->http);
    link->subscribers = g_ptr_array_new_with_free_func(g_free);
    if (RAND_bytes(link->to_edge, sizeof link->to_edge) != 1 ||
        RAND_bytes(link->to_owner, sizeof link->to_owner) != 1) {
        link_free(link);
        moat_http_response_error(refusal, 503, "no_random", "no randomness for link keys");
        return NULL;
    }
    char *sdp = moat_cascade_offer(true);
    char error[256] = "";
    moat_whip_created created;
    moat_whip_local leg = {.cascade = true};
    moat_whip_setup_result result =
        moat_whip_session_create_local(gateway, plugin, "whip", offer->room, sdp, strlen(sdp), &leg,
                                       &created, error, sizeof error);
    g_free(sdp);
    if (result != MOAT_WHIP_SETUP_OK) {
        link_free(link);
        moat_whip_reply_refused(refusal, error);
        return NULL;
    }
    g_free(created.answer);
    snprintf(link->leg_id, sizeof link->leg_id, "%s", created.record->id);
    link->leg = created.session;
    link->leg_worker = created.record->worker;
    moat_cascade_request request = {.port = moat_worker_port(created.record->worker),
                                    .ssrc = moat_session_rtcp_ssrc(created.session)};
    snprintf(request.plugin, sizeof request.plugin, "%s", offer->plugin);
    snprintf(request.room, sizeof request.room, "%s", offer->room);
    snprintf(request.edge, sizeof request.edge, "%s", cluster->node_id);
    snprintf(request.media, sizeof request.media, "%s", cluster->advertise_media);
    memcpy(request.to_edge, link->to_edge, sizeof request.to_edge);
    memcpy(request.to_owner, link->to_owner, sizeof request.to_owner);
    char *body = moat_cascade_request_to_json(&request);
    OPENSSL_cleanse(&request, sizeof request);
    g_hash_table_replace(cascade->links, link->key, link);
    link->waiting = g_list_prepend(link->waiting, offer);
    post_to_node(cascade, link->owner_http, "/api/cluster/cascade", body, link_answered, link);
    OPENSSL_cleanse(body, strlen(body));
    g_free(body);
    return link;
}

static void closed_answer(void *user, moat_http_response *response)
{
    moat_http_response_clear(response);
}

static bool session_gone(moat_cascade *cascade, const char *id)
{
    return moat_session_registry_find(cascade->cluster->gateway->sessions, id) == NULL;
}

static void end_subscribers(moat_cascade *cascade, cascade_link *link)
{
    for (guint i = 0; i < link->subscribers->len; i++) {
        moat_session_record *record = moat_session_registry_find(
            cascade->cluster->gateway->sessions, g_ptr_array_index(link->subscribers, i));
        if (record)
            moat_whip_session_hang_up(cascade->cluster->gateway, record);
    }
}

/* The link's own ends: the edge's leg hung up, the owner asked to close its
 * side. */
static void hang_up_link(moat_cascade *cascade, cascade_link *link)
{
    moat_session_record *record =
        moat_session_registry_find(cascade->cluster->gateway->sessions, link->leg_id);
    if (record)
        moat_whip_session_hang_up(cascade->cluster->gateway, record);
    char *body = g_strdup_printf("{\"id\":\"%s\"}", link->remote_id);
    post_to_node(cascade, link->owner_http, "/api/cluster/cascade/close", body, closed_answer,
                 NULL);
    g_free(body);
}

/* An up link from a node that no longer owns the room (Redis restarted
 * empty and another node won the claim): it would feed its subscribers
 * the old owner's copy for as long as one stayed and keep every new one
 * out. It goes as a lost link does (its subscribers ended: they offer
 * again and reach the new owner's link), its leg hung up, and the old
 * owner asked to close its side; removed from the links (freed). */
static void retire_stale_link(moat_cascade *cascade, cascade_link *link,
                              const moat_cluster_node *owner)
{
    moat_log_warn("cluster",
                  "cascade: room %s/%s: its owner is now %s, not %s: ending the link and its %u "
                  "subscribers",
                  link->plugin, link->room, owner->id, link->owner, link->subscribers->len);
    end_subscribers(cascade, link);
    hang_up_link(cascade, link);
    cascade->links_lost++;
    g_hash_table_remove(cascade->links, link->key);
}

void moat_cascade_edge_offer(moat_cascade *cascade, pending_offer *offer,
                             const moat_cluster_node *owner)
{
    cascade_link *link = g_hash_table_lookup(cascade->links, offer->key);
    bool same_owner = link && strcmp(link->owner, owner->id) == 0;
    if (link && link->state == LINK_UP && !same_owner) {
        retire_stale_link(cascade, link, owner);
        link = NULL; /* a link to the new owner opens below */
    }
    if (link && link->state == LINK_UP) {
        serve_subscriber(link, offer);
        return;
    }
    moat_http_response refusal = {0};
    if (link && !same_owner) {
        /* Still connecting to the old owner: once it is up (and then
         * retired by the next offer) or failed, a retry gets the new one. */
        moat_http_response_error(&refusal, 503, "owner_changed",
                                 "the room moved; retry in a moment");
        moat_http_response_header(&refusal, "Retry-After", "2");
        moat_cluster_pending_respond(offer, &refusal);
        return;
    }
    if (link) {
        link->waiting = g_list_prepend(link->waiting, offer);
        return;
    }
    /* Nothing opens a link (a leg on the owner, every layer sent here) for
     * an offer the subscriber's own session would refuse anyway. */
    char error[256];
    moat_sdp *sdp = moat_sdp_parse(offer->body, offer->body_length, error, sizeof error);
    if (!sdp) {
        moat_http_response_error(&refusal, 400, "bad_sdp", "%s", error);
        moat_cluster_pending_respond(offer, &refusal);
        return;
    }
    moat_sdp_free(sdp);
    if (!open_link(cascade, offer, owner, &refusal))
        moat_cluster_pending_respond(offer, &refusal);
}

/* One link at a poll; true when it goes. */
static bool poll_link(moat_cascade *cascade, cascade_link *link)
{
    for (guint i = link->subscribers->len; i-- > 0;)
        if (session_gone(cascade, g_ptr_array_index(link->subscribers, i)))
            g_ptr_array_remove_index_fast(link->subscribers, i);
    moat_cascade_action action = moat_cascade_link_decide(
        link->state == LINK_CONNECTING, !session_gone(cascade, link->leg_id),
        link->subscribers->len, g_list_length(link->waiting));
    if (action == MOAT_CASCADE_CLOSE_IDLE) {
        hang_up_link(cascade, link);
        cascade->links_closed++;
        moat_log_info("cluster", "cascade: room %s/%s: last edge subscriber left, link closed",
                      link->plugin, link->room);
        return true;
    }
    if (action == MOAT_CASCADE_OWNER_LOST) {
        moat_log_warn("cluster",
                      "cascade: room %s/%s: the link from %s went quiet; ending its %u "
                      "subscribers",
                      link->plugin, link->room, link->owner, link->subscribers->len);
        end_subscribers(cascade, link);
        cascade->links_lost++;
        return true;
    }
    return false;
}

static gboolean poll_links(gpointer data)
{
    moat_cascade *cascade = data;
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, cascade->links);
    while (g_hash_table_iter_next(&iter, NULL, &value))
        if (poll_link(cascade, value))
            g_hash_table_iter_remove(&iter);
    moat_cascade_owner_prune(cascade);
    return G_SOURCE_CONTINUE;
}

/* GET /api/cluster/cascade: this node's links as an edge and legs as an
 * owner (no session ids: they are capabilities). */
static void serve_list(void *user, const moat_http_request *request, moat_http_response *response)
{
    moat_cascade *cascade = user;
    json_t *links = json_array();
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, cascade->links);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        cascade_link *link = value;
        json_t *layers = json_array();
        for (size_t l = 0; l < link->n_layers; l++)
            json_array_append_new(layers, json_integer((json_int_t)link->layer_ssrcs[l]));
        json_array_append_new(
            links, json_pack("{s:s, s:s, s:s, s:s, s:i, s:[I,I], s:o, s:b}", "plugin", link->plugin,
                             "room", link->room, "owner", link->owner, "state",
                             link->state == LINK_UP ? "up" : "connecting", "subscribers",
                             (int)link->subscribers->len, "owner_ssrcs",
                             (json_int_t)link->owner_ssrcs[0], (json_int_t)link->owner_ssrcs[1],
                             "layer_ssrcs", layers, "rtx", link->n_rtx > 0));
    }
    json_t *legs = json_array();
    g_hash_table_iter_init(&iter, cascade->owner_legs);
    while (g_hash_table_iter_next(&iter, NULL, &value))
        json_array_append_new(legs, json_pack("{s:s}", "edge", (const char *)value));
    json_t *object = json_pack("{s:o, s:o}", "links", links, "legs", legs);
    char *text = json_dumps(object, JSON_COMPACT);
    json_decref(object);
    char *body = g_strdup(text ? text : "{}");
    free(text);
    moat_http_response_set(response, 200, "application/json", body, strlen(body));
}

moat_cascade *moat_cascade_new(moat_cluster *cluster)
{
    moat_cascade *cascade = g_new0(moat_cascade, 1);
    cascade->cluster = cluster;
    cascade->links = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, link_free);
    cascade->owner_legs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    moat_cascade_owner_register(cascade);
    moat_http_route_register(cluster->gateway, "GET", "/api/cluster/cascade", serve_list, cascade);
    cascade->poll_timer = g_timeout_add(MOAT_CASCADE_POLL_MS, poll_links, cascade);
    return cascade;
}

void moat_cascade_free(moat_cascade *cascade)
{
    if (!cascade)
        return;
    if (cascade->poll_timer)
        g_source_remove(cascade->poll_timer);
    g_hash_table_destroy(cascade->links);
    g_hash_table_destroy(cascade->owner_legs);
    g_free(cascade);
}

void moat_cascade_metrics(moat_cascade *cascade, GString *out)
{
    if (!cascade)
        return;
    size_t up = 0;
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, cascade->links);
    while (g_hash_table_iter_next(&iter, NULL, &value))
        up += ((cascade_link *)value)->state == LINK_UP;
    g_string_append_printf(
        out,
        "# HELP moat_cluster_cascade_links Cascade links this node receives as an edge.\n"
        "# TYPE moat_cluster_cascade_links gauge\nmoat_cluster_cascade_links %zu\n"
        "# HELP moat_cluster_cascade_legs Cascade legs this node feeds as a room's owner.\n"
        "# TYPE moat_cluster_cascade_legs gauge\nmoat_cluster_cascade_legs %u\n"
        "# HELP moat_cluster_cascade_links_total Cascade links by outcome (edge side).\n"
        "# TYPE moat_cluster_cascade_links_total counter\n"
        "moat_cluster_cascade_links_total{outcome=\"opened\"} %" G_GUINT64_FORMAT "\n"
        "moat_cluster_cascade_links_total{outcome=\"closed\"} %" G_GUINT64_FORMAT "\n"
        "moat_cluster_cascade_links_total{outcome=\"lost\"} %" G_GUINT64_FORMAT "\n"
        "moat_cluster_cascade_links_total{outcome=\"failed\"} %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_cascade_subscribers_total Subscribers served here as an edge.\n"
        "# TYPE moat_cluster_cascade_subscribers_total counter\n"
        "moat_cluster_cascade_subscribers_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_cascade_refused_total Link requests refused (owner side).\n"
        "# TYPE moat_cluster_cascade_refused_total counter\n"
        "moat_cluster_cascade_refused_total %" G_GUINT64_FORMAT "\n",
        up, g_hash_table_size(cascade->owner_legs), cascade->links_opened, cascade->links_closed,
        cascade->links_lost, cascade->links_failed, cascade->edge_subscribers, cascade->refused);
}

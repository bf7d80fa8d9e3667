/* Owns the offer hook of a cluster node: a WHIP/WHEP offer for a room is
 * served here (owner, placed here, forwarded to us, or Redis away),
 * redirected to the owner (307) or forwarded to it (proxy), after one
 * claim round trip to Redis. Control thread. */
#include "cluster/cluster_private.h"

#include "cluster/cascade.h"

static const char *copied_header(const void *context, const char *name)
{
    char *lower = g_ascii_strdown(name, -1);
    const char *value = g_hash_table_lookup((GHashTable *)context, lower);
    g_free(lower);
    return value;
}

/* The request headers an offer needs again later (served here or
 * forwarded). */
static const char *const kept_headers[] = {"Content-Type", "Authorization", "Host",
                                           "Origin",       "User-Agent",    "If-Match"};

static pending_offer *pending_new(moat_cluster *cluster, const moat_http_request *request,
                                  const char *endpoint, const char *plugin, const char *resource,
                                  const char *room, const char *key)
{
    pending_offer *offer = g_new0(pending_offer, 1);
    offer->cluster = cluster;
    offer->method = g_strdup(request->method);
    offer->path = g_strdup(request->path);
    offer->body = g_memdup2(request->body ? request->body : "", request->body_length + 1);
    offer->body[request->body_length] = '\0';
    offer->body_length = request->body_length;
    offer->peer = g_strdup(request->peer ? request->peer : "");
    offer->headers = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    for (size_t i = 0; i < G_N_ELEMENTS(kept_headers); i++) {
        const char *value = moat_http_request_header(request, kept_headers[i]);
        if (value)
            g_hash_table_replace(offer->headers, g_ascii_strdown(kept_headers[i], -1),
                                 g_strdup(value));
    }
    snprintf(offer->endpoint, sizeof offer->endpoint, "%s", endpoint);
    snprintf(offer->plugin, sizeof offer->plugin, "%s", plugin);
    snprintf(offer->resource, sizeof offer->resource, "%s", resource);
    snprintf(offer->room, sizeof offer->room, "%s", room);
    snprintf(offer->key, sizeof offer->key, "%s", key);
    return offer;
}

static void pending_free(pending_offer *offer)
{
    g_free(offer->method);
    g_free(offer->path);
    g_free(offer->body);
    g_free(offer->peer);
    g_hash_table_destroy(offer->headers);
    g_free(offer);
}

moat_http_request moat_cluster_pending_request(const pending_offer *offer)
{
    return (moat_http_request){
        .method = offer->method,
        .path = offer->path,
        .body = offer->body,
        .body_length = offer->body_length,
        .peer = offer->peer,
        .header = copied_header,
        .header_context = offer->headers,
    };
}

/* The offer served on this node; a created session joins the room's lease. */
static void serve_here(moat_cluster *cluster, const moat_http_request *request,
                       moat_http_response *response, const char *endpoint, const char *plugin,
                       const char *resource, const char *room_name, const char *key, bool confirmed,
                       uint64_t sent_ms)
{
    moat_whip_handle_offer(cluster->gateway, request, response, endpoint, plugin, resource);
    const char *location =
        response->status == 201 ? moat_http_response_get_header(response, "Location") : NULL;
    const char *id = location ? strstr(location, "/whip/resource/") : NULL;
    owned_room *room =
        id ? moat_cluster_room_take(cluster, key, plugin, room_name, confirmed, sent_ms)
           : g_hash_table_lookup(cluster->rooms, key);
    if (id)
        g_ptr_array_add(room->sessions, g_strdup(id + strlen("/whip/resource/")));
    /* A subscriber more (or one refused): the other nodes learn at once
     * whether the room is at its own cap. */
    if (room && strcmp(endpoint, "whep") == 0)
        moat_cluster_room_full_update(cluster, room);
}

static void refuse_draining(moat_http_response *response)
{
    moat_http_response_header(response, "Retry-After", "5");
    moat_http_response_error(response, 503, "draining",
                             "this node is draining and no other node takes new rooms");
}

/* The owner's URL for the offer's path: its advertised base and the path,
 * percent-encoded where it is not a plain path character. */
static char *owner_url(const moat_cluster_node *owner, const char *path)
{
    char *escaped = g_uri_escape_string(path, "/", FALSE);
    char *url = g_strconcat(owner->http, escaped, NULL);
    g_free(escaped);
    return url;
}

/* ?edge= names another node: 307 to it, the parameter kept. */
static void redirect_to_edge(moat_cluster *cluster, const moat_http_request *request,
                             moat_http_response *response, const char *edge)
{
    const moat_cluster_node *node = g_hash_table_lookup(cluster->nodes, edge);
    if (!node || !moat_cluster_node_id_valid(edge)) {
        moat_http_response_error(response, 404, "unknown_node", "no live node named in edge=");
        return;
    }
    char *url = owner_url(node, request->path);
    char *escaped = g_uri_escape_string(edge, NULL, FALSE);
    char *location = g_strconcat(url, "?edge=", escaped, NULL);
    moat_http_response_header(response, "Location", location);
    char *body = g_strdup_printf("{\"redirect\":\"%s\"}", location);
    moat_http_response_set(response, 307, "application/json", body, strlen(body));
    g_free(escaped);
    g_free(location);
    g_free(url);
}

/* The live serving node other than this one with the fewest sessions,
 * this node's region first; NULL when there is none. */
static const moat_cluster_node *an_edge(moat_cluster *cluster)
{
    const char *region = cluster->gateway->config.cluster_region;
    const moat_cluster_node *best = NULL;
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, cluster->nodes);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        const moat_cluster_node *node = value;
        if (node->draining || strcmp(node->id, cluster->node_id) == 0)
            continue;
        bool near = strcmp(node->region, region) == 0;
        bool best_near = best && strcmp(best->region, region) == 0;
        if (!best || (near && !best_near) || (near == best_near && node->sessions < best->sessions))
            best = node;
    }
    return best;
}

/* The owner's own refusal of a WHEP subscriber because the room is at its
 * max_subscribers (redirect mode, the client's own offer): 307 to another
 * node with ?edge=, which serves it through a cascade. */
static void refused_to_edge(moat_cluster *cluster, const moat_http_request *request,
                            moat_http_response *response, const char *endpoint, const char *key)
{
    owned_room *room = g_hash_table_lookup(cluster->rooms, key);
    const moat_cluster_node *edge = an_edge(cluster);
    if (cluster->proxy || strcmp(endpoint, "whep") != 0 || response->status != 503 || !room ||
        !room->full_marked || !edge)
        return;
    cluster->cascade_reasons[CASCADE_ROOM_FULL]++;
    redirect_to_edge(cluster, request, response, edge->id);
}

/* Answers and forgets a pending offer. */
void moat_cluster_pending_respond(pending_offer *offer, moat_http_response *response)
{
    moat_cluster *cluster = offer->cluster;
    cluster->pending = g_list_remove(cluster->pending, offer);
    offer->respond(offer->respond_data, response);
    pending_free(offer);
}

static void pending_serve_here(pending_offer *offer, bool confirmed, offer_kind kind)
{
    moat_cluster *cluster = offer->cluster;
    moat_http_request request = moat_cluster_pending_request(offer);
    moat_http_response response = {0};
    cluster->offers[kind]++;
    if (kind == OFFER_FALLBACK && cluster->draining)
        refuse_draining(&response);
    else
        serve_here(cluster, &request, &response, offer->endpoint, offer->plugin, offer->resource,
                   offer->room, offer->key, confirmed, offer->sent_ms);
    if (kind == OFFER_LOCAL)
        refused_to_edge(cluster, &request, &response, offer->endpoint, offer->key);
    moat_cluster_pending_respond(offer, &response);
}

static void forwarded(void *user, moat_http_response *response)
{
    pending_offer *offer = user;
    /* PATCH and DELETE come here too, for clients that reach this node
     * only (cluster_resources.c). */
    if (response->status == 201)
        moat_cluster_resource_location(response, offer->owner);
    moat_cluster_pending_respond(offer, response);
}

static void route_to_owner(pending_offer *offer, const moat_cluster_node *owner)
{
    moat_cluster *cluster = offer->cluster;
    char *url = owner_url(owner, offer->path);
    if (cluster->proxy) {
        cluster->offers[OFFER_PROXY]++;
        snprintf(offer->owner, sizeof offer->owner, "%s", owner->id);
        moat_http_request request = moat_cluster_pending_request(offer);
        moat_cluster_proxy_forward(cluster->forwarder, url, &request, cluster->forward_token,
                                   forwarded, offer);
        g_free(url);
        return;
    }
    cluster->offers[OFFER_REDIRECT]++;
    moat_http_response response = {0};
    moat_http_response_header(&response, "Location", url);
    json_t *object = json_pack("{s:s, s:s}", "redirect", url, "owner", owner->id);
    char *text = object ? json_dumps(object, JSON_COMPACT) : NULL;
    json_decref(object);
    char *body = g_strdup(text ? text : "{}");
    free(text);
    moat_http_response_set(&response, 307, "application/json", body, strlen(body));
    g_free(url);
    moat_cluster_pending_respond(offer, &response);
}

static void claim_reply(void *user, const redisReply *reply, const char *error)
{
    pending_offer *offer = user;
    moat_cluster *cluster = offer->cluster;
    if (!reply && error && strcmp(error, "closing") == 0) {
        moat_http_response response = {0};
        moat_http_response_error(&response, 503, "shutting_down", "the node is stopping");
        moat_cluster_pending_respond(offer, &response);
        return;
    }
    if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
        reply->element[0]->type != REDIS_REPLY_STRING ||
        reply->element[1]->type != REDIS_REPLY_STRING) {
        moat_log_warn("cluster", "room %s/%s: no owner from Redis (%s): served here", offer->plugin,
                      offer->room,
                      reply && reply->type == REDIS_REPLY_ERROR ? reply->str
                                                                : (error ? error : "bad reply"));
        pending_serve_here(offer, false, OFFER_FALLBACK);
        return;
    }
    const char *owner_id = reply->element[0]->str;
    if (!*owner_id) {
        moat_http_response response = {0};
        cluster->offers[OFFER_REFUSED]++;
        refuse_draining(&response);
        moat_cluster_pending_respond(offer, &response);
        return;
    }
    if (strcmp(owner_id, cluster->node_id) == 0) {
        pending_serve_here(offer, true, OFFER_LOCAL);
        return;
    }
    moat_cluster_node owner;
    char why[96];
    if (!moat_cluster_node_parse(reply->element[1]->str, reply->element[1]->len, &owner, why,
                                 sizeof why) ||
        strcmp(owner.id, owner_id) != 0) {
        cluster->records_rejected++;
        cluster->offers[OFFER_REFUSED]++;
        moat_http_response response = {0};
        moat_http_response_header(&response, "Retry-After", "2");
        moat_http_response_error(&response, 502, "owner_unusable",
                                 "the room's owner has no usable node record");
        moat_cluster_pending_respond(offer, &response);
        return;
    }
    /* A subscriber is served here through a cascade when the owner has no
     * room for it (at its [limits] max_sessions, as its record says, or
     * the room at its own max_subscribers, as its full key says), or when
     * it chose this node in another region than the owner's. */
    bool owner_full = owner.max_sessions > 0 && owner.sessions >= owner.max_sessions;
    bool room_full = reply->elements >= 3 && reply->element[2]->type == REDIS_REPLY_INTEGER &&
                     reply->element[2]->integer == 1;
    const char *region = cluster->gateway->config.cluster_region;
    bool far = strcmp(cluster->gateway->config.cluster_cascade, "ask") != 0 && *region &&
               *owner.region && strcmp(region, owner.region) != 0 && !cluster->draining;
    if (offer->edge || ((owner_full || room_full || far) && strcmp(offer->endpoint, "whep") == 0)) {
        cluster->cascade_reasons[offer->edge ? CASCADE_ASKED
                                 : room_full ? CASCADE_ROOM_FULL
                                 : far       ? CASCADE_REGION
                                             : CASCADE_NODE_FULL]++;
        moat_cascade_edge_offer(cluster->cascade, offer, &owner);
        return;
    }
    if (strcmp(owner_id, offer->target) == 0)
        moat_placement_recent_add(&cluster->recent, owner_id, moat_cluster_now_ms());
    route_to_owner(offer, &owner);
}

/* The placement's choice among the live serving nodes (this one included
 * unless draining); "" when none. */
static void place(moat_cluster *cluster, char *out, size_t size)
{
    moat_placement_candidate candidates[MOAT_CLUSTER_MAX_NODES + 1];
    moat_cluster_node self;
    moat_cluster_fill_own_record(cluster, &self);
    size_t n = 0;
    uint64_t now = moat_cluster_now_ms();
    bool fresh = now - cluster->nodes_read_ms < cluster->lease_ms;
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, cluster->nodes);
    while (fresh && n < MOAT_CLUSTER_MAX_NODES && g_hash_table_iter_next(&iter, NULL, &value)) {
        const moat_cluster_node *node = value;
        if (strcmp(node->id, cluster->node_id) == 0)
            continue;
        candidates[n++] = (moat_placement_candidate){
            node->id,           node->region,
            !node->draining,    node->sessions,
            node->max_sessions, moat_placement_recent_count(&cluster->recent, node->id, now)};
    }
    candidates[n++] = (moat_placement_candidate){
        cluster->node_id,   self.region,
        !cluster->draining, self.sessions,
        self.max_sessions,  moat_placement_recent_count(&cluster->recent, cluster->node_id, now)};
    int chosen = moat_placement_choose(candidates, n, self.region, g_random_int(), g_random_int());
    snprintf(out, size, "%s", chosen >= 0 ? candidates[chosen].id : "");
}

static void pending_start(void *data, moat_http_respond_fn respond, void *respond_data)
{
    pending_offer *offer = data;
    moat_cluster *cluster = offer->cluster;
    offer->respond = respond;
    offer->respond_data = respond_data;
    cluster->pending = g_list_prepend(cluster->pending, offer);
    /* An edge subscriber asks who owns the room; nobody: this node (unless
     * it drains: then the offer is refused like any new room's). */
    if (offer->edge)
        offer->target[0] = '\0';
    else
        place(cluster, offer->target, sizeof offer->target);
    char lease[24];
    snprintf(lease, sizeof lease, "%" G_GUINT64_FORMAT, cluster->lease_ms);
    /* A WHEP offer also asks whether the room is at its own cap. */
    char full_key[320];
    bool whep = strcmp(offer->endpoint, "whep") == 0 &&
                moat_cluster_room_full_key(offer->plugin, offer->room, full_key, sizeof full_key);
    const char *argv[] = {"EVAL",
                          moat_cluster_claim_script,
                          whep ? "2" : "1",
                          offer->key,
                          whep ? full_key : NULL,
                          *offer->target ? offer->target : cluster->node_id,
                          lease,
                          *offer->target || (offer->edge && !cluster->draining) ? "1" : "0",
                          MOAT_CLUSTER_CLAIM_RECORD_MAX};
    size_t argc = 0;
    const char *args[G_N_ELEMENTS(argv)];
    size_t lengths[G_N_ELEMENTS(argv)];
    for (size_t i = 0; i < G_N_ELEMENTS(argv); i++) {
        if (!argv[i])
            continue;
        args[argc] = argv[i];
        lengths[argc++] = strlen(argv[i]);
    }
    offer->sent_ms = moat_cluster_now_ms();
    if (!moat_redis_command(cluster->redis, claim_reply, offer, (int)argc, args, lengths))
        pending_serve_here(offer, false, OFFER_FALLBACK);
}

static void pending_release(void *data)
{
    pending_free(data);
}

/* A valid X-Moat-Forwarded: the offer comes from a node that knows the
 * cluster's password, and was placed here; serve it without asking. */
static bool forwarded_by_node(moat_cluster *cluster, const moat_http_request *request)
{
    const char *token = moat_http_request_header(request, "X-Moat-Forwarded");
    if (!token || strlen(token) != strlen(cluster->forward_token))
        return false;
    unsigned char difference = 0;
    for (size_t i = 0; token[i]; i++)
        difference |= (unsigned char)(token[i] ^ cluster->forward_token[i]);
    return difference == 0;
}

/* WHEP ?edge=<node>: the subscriber is served by that node (empty: the
 * node asked) through a cascade link; false without the parameter. */
static bool edge_asked(const moat_http_request *request, char *edge, size_t size)
{
    GHashTable *params = request->query
                             ? g_uri_parse_params(request->query, -1, "&", G_URI_PARAMS_NONE, NULL)
                             : NULL;
    const char *value = params ? g_hash_table_lookup(params, "edge") : NULL;
    bool asked = value != NULL && strlen(value) < size;
    if (asked)
        snprintf(edge, size, "%s", value);
    if (params)
        g_hash_table_destroy(params);
    return asked;
}

bool moat_cluster_offer_hook(void *user, const moat_http_request *request,
                             moat_http_response *response, const char *endpoint, const char *plugin,
                             const char *resource)
{
    moat_cluster *cluster = user;
    char room_name[MOAT_CLUSTER_NAME_MAX];
    char key[320];
    if (!moat_cluster_room_of_resource(resource, room_name, sizeof room_name) ||
        !moat_cluster_room_key(plugin, room_name, key, sizeof key))
        return false; /* the plugin refuses it as usual */
    owned_room *room = g_hash_table_lookup(cluster->rooms, key);
    bool ours = room && moat_lease_valid(&room->lease, moat_cluster_now_ms());
    if (forwarded_by_node(cluster, request)) {
        /* The client's address, not the forwarding node's, for the
         * per-source pending cap and the log. */
        moat_http_request client = *request;
        client.peer = moat_http_offer_source(cluster->gateway, request);
        cluster->offers[OFFER_LOCAL]++;
        serve_here(cluster, &client, response, endpoint, plugin, resource, room_name, key, false,
                   0);
        return true;
    }
    char edge[MOAT_CLUSTER_NAME_MAX];
    edge[0] = '\0';
    bool as_edge = strcmp(endpoint, "whep") == 0 &&
                   (edge_asked(request, edge, sizeof edge) ||
                    strcmp(cluster->gateway->config.cluster_cascade, "always") == 0);
    if (as_edge && *edge && strcmp(edge, cluster->node_id) != 0) {
        redirect_to_edge(cluster, request, response, edge);
        return true;
    }
    if (ours) {
        cluster->offers[OFFER_LOCAL]++;
        serve_here(cluster, request, response, endpoint, plugin, resource, room_name, key, false,
                   0);
        refused_to_edge(cluster, request, response, endpoint, key);
        return true;
    }
    if (moat_redis_link_state(cluster->redis) != MOAT_REDIS_UP) {
        cluster->offers[OFFER_FALLBACK]++;
        if (cluster->draining)
            refuse_draining(response);
        else
            serve_here(cluster, request, response, endpoint, plugin, resource, room_name, key,
                       false, 0);
        return true;
    }
    pending_offer *offer =
        pending_new(cluster, request, endpoint, plugin, resource, room_name, key);
    offer->edge = as_edge;
    response->deferred_reply = (moat_http_deferred_reply){pending_start, pending_release, offer};
    return true;
}

/* Owns the room API across the cluster (the API hook, http_router.h):
 * /api/rooms/<room>... for a room another node owns is forwarded to that
 * owner over pub/sub (cluster_rpc.h) and its answer returned; GET
 * /api/rooms asks every live node and merges their rooms, each marked with
 * its node, saying which nodes did not answer. Redis away: this node's
 * rooms, the other nodes "unknown". Control thread. */
#include "cluster/cluster_private.h"
#include "cluster/cluster_rpc.h"

/* Rooms in one merged listing at most (the rest are left out, "truncated"). */
#define LISTING_MAX_ROOMS 10000

typedef struct {
    moat_cluster *cluster;
    char *method;
    char *path;
    char *body;
    size_t body_length;
    char room[MOAT_CLUSTER_NAME_MAX];
    char key[320];
    char owner[MOAT_CLUSTER_NAME_MAX];
    moat_http_respond_fn respond;
    void *respond_data;
    /* GET /api/rooms: */
    json_t *rooms;
    json_t *nodes; /* id -> "ok" | "timeout" | ... */
    unsigned waiting;
    bool truncated;
} api_call;

static api_call *call_new(moat_cluster *cluster, const moat_http_request *request)
{
    api_call *call = g_new0(api_call, 1);
    call->cluster = cluster;
    call->method = g_strdup(request->method);
    call->path = g_strdup(request->path);
    call->body = g_malloc(request->body_length + 1); /* NULs included */
    if (request->body_length)
        memcpy(call->body, request->body, request->body_length);
    call->body[request->body_length] = '\0';
    call->body_length = request->body_length;
    return call;
}

static void call_free(api_call *call)
{
    g_free(call->method);
    g_free(call->path);
    g_free(call->body);
    json_decref(call->rooms);
    json_decref(call->nodes);
    g_free(call);
}

static void call_release(void *data)
{
    call_free(data);
}

static void call_respond(api_call *call, moat_http_response *response)
{
    call->respond(call->respond_data, response);
    call_free(call);
}

static const char *no_header(const void *context, const char *name)
{
    return NULL;
}

/* The request answered by this node's plugin API. */
static void serve_local(moat_cluster *cluster, const char *method, const char *path,
                        const char *body, size_t body_length, moat_http_response *response)
{
    moat_http_request request = {
        .method = method,
        .path = path,
        .body = body,
        .body_length = body_length,
        .peer = "",
        .header = no_header,
    };
    if (!moat_http_serve_plugin_api_local(cluster->gateway, &request, response))
        moat_http_response_error(response, 404, "not_found", "no such API");
}

/* ---- one room's API at its owner ------------------------------------------------ */

static void owner_answered(void *user, unsigned status, const char *body, size_t length, bool local)
{
    api_call *call = user;
    moat_http_response response = {0};
    /* Only a final status is relayed (cluster_message.c refuses others). */
    if (status < 200 || status > 599)
        moat_http_response_error(&response, 502, "bad_answer",
                                 "the room's owner answered with no final status");
    else
        moat_http_response_set(&response, status, length ? "application/json" : NULL,
                               length ? g_strndup(body, length) : NULL, length);
    moat_http_response_allow_from_body(&response);
    moat_http_response_header(&response, "X-Moat-Node", call->owner);
    call_respond(call, &response);
}

static void owner_read(void *user, const redisReply *reply, const char *error)
{
    api_call *call = user;
    moat_cluster *cluster = call->cluster;
    moat_http_response response = {0};
    if (error && strcmp(error, "closing") == 0) {
        moat_http_response_error(&response, 503, "shutting_down", "the node is stopping");
        call_respond(call, &response);
        return;
    }
    bool read = reply && reply->type == REDIS_REPLY_ARRAY && reply->elements >= 2 &&
                reply->element[0]->type == REDIS_REPLY_STRING;
    const char *owner = read ? reply->element[0]->str : "";
    /* No owner, this node, or Redis did not say: answered here. */
    if (!*owner || strcmp(owner, cluster->node_id) == 0 || !moat_cluster_node_id_valid(owner)) {
        serve_local(cluster, call->method, call->path, call->body, call->body_length, &response);
        call_respond(call, &response);
        return;
    }
    /* A subscriber served here as a cascade edge is in this node's copy
     * of the room: its own API (its layer) is answered here; any other
     * subscriber's goes to the owner. */
    if (strstr(call->path, "/subscribers/")) {
        serve_local(cluster, call->method, call->path, call->body, call->body_length, &response);
        if (response.status != 404) {
            moat_http_response_header(&response, "X-Moat-Node", cluster->node_id);
            call_respond(call, &response);
            return;
        }
        moat_http_response_clear(&response);
    }
    snprintf(call->owner, sizeof call->owner, "%s", owner);
    moat_cluster_rpc_request(cluster->rpc, owner, call->method, call->path, call->body,
                             call->body_length, owner_answered, call);
}

static void room_start(void *data, moat_http_respond_fn respond, void *respond_data)
{
    api_call *call = data;
    call->respond = respond;
    call->respond_data = respond_data;
    char lease[24];
    snprintf(lease, sizeof lease, "%" G_GUINT64_FORMAT, call->cluster->lease_ms);
    /* Claim "0": read the owner (renewing only this node's own lease). */
    const char *argv[] = {"EVAL",    moat_cluster_claim_script,    "1",
                          call->key, call->cluster->node_id,       lease,
                          "0",       MOAT_CLUSTER_CLAIM_RECORD_MAX};
    size_t lengths[G_N_ELEMENTS(argv)];
    for (size_t i = 0; i < G_N_ELEMENTS(argv); i++)
        lengths[i] = strlen(argv[i]);
    if (!moat_redis_command(call->cluster->redis, owner_read, call, G_N_ELEMENTS(argv), argv,
                            lengths))
        owner_read(call, NULL, "down");
}

/* ---- GET /api/rooms across the cluster ---------------------------------------------- */

static void listing_add(api_call *call, const char *node, unsigned status, const char *body,
                        size_t length, const char *failure)
{
    const char *state = failure;
    if (!state) {
        state = status == 200 &&
                        moat_cluster_rooms_merge(call->rooms, node, body, length, LISTING_MAX_ROOMS)
                    ? "ok"
                    : "bad_answer";
        call->truncated |= json_array_size(call->rooms) >= LISTING_MAX_ROOMS;
    }
    json_object_set_new(call->nodes, node, json_string(state));
}

static void listing_finish(api_call *call)
{
    json_t *unknown = json_array();
    const char *id;
    json_t *state;
    json_object_foreach(call->nodes, id, state)
    {
        if (strcmp(json_string_value(state), "ok") != 0)
            json_array_append_new(unknown, json_string(id));
    }
    json_t *root = json_pack("{s:O,s:O,s:o,s:b,s:b}", "rooms", call->rooms, "nodes", call->nodes,
                             "unknown_nodes", unknown, "complete", json_array_size(unknown) == 0,
                             "truncated", call->truncated);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    moat_http_response response = {0};
    moat_http_response_set(&response, 200, "application/json", g_strdup(text), strlen(text));
    free(text);
    call_respond(call, &response);
}

typedef struct {
    api_call *call;
    char node[MOAT_CLUSTER_NAME_MAX];
} listing_ask;

static void node_listed(void *user, unsigned status, const char *body, size_t length, bool local)
{
    listing_ask *ask = user;
    api_call *call = ask->call;
    const char *failure = NULL;
    if (local)
        failure = status == 504 ? "timeout" : "unreachable";
    listing_add(call, ask->node, status, body, length, failure);
    g_free(ask);
    if (--call->waiting == 0)
        listing_finish(call);
}

static void listing_start(void *data, moat_http_respond_fn respond, void *respond_data)
{
    api_call *call = data;
    moat_cluster *cluster = call->cluster;
    call->respond = respond;
    call->respond_data = respond_data;
    call->rooms = json_array();
    call->nodes = json_object();
    moat_http_response local = {0};
    serve_local(cluster, "GET", "/api/rooms", "", 0, &local);
    listing_add(call, cluster->node_id, local.status, local.body, local.body_length, NULL);
    moat_http_response_clear(&local);
    bool up = moat_redis_link_state(cluster->redis) == MOAT_REDIS_UP;
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, cluster->nodes);
    GPtrArray *asked = g_ptr_array_new();
    while (g_hash_table_iter_next(&iter, &key, NULL)) {
        if (strcmp(key, cluster->node_id) == 0)
            continue;
        if (!up)
            json_object_set_new(call->nodes, key, json_string("unknown"));
        else
            g_ptr_array_add(asked, key);
    }
    /* Counted before the first request: one may be answered at once. */
    call->waiting = asked->len + 1;
    for (guint i = 0; i < asked->len; i++) {
        listing_ask *ask = g_new0(listing_ask, 1);
        ask->call = call;
        snprintf(ask->node, sizeof ask->node, "%s", (const char *)g_ptr_array_index(asked, i));
        moat_cluster_rpc_request(cluster->rpc, ask->node, "GET", "/api/rooms", NULL, 0, node_listed,
                                 ask);
    }
    g_ptr_array_free(asked, TRUE);
    if (--call->waiting == 0)
        listing_finish(call);
}

/* ---- the hook ---------------------------------------------------------------------- */

static bool room_owned_here(moat_cluster *cluster, const char *key)
{
    owned_room *room = g_hash_table_lookup(cluster->rooms, key);
    return room && room->lease.state == MOAT_LEASE_OWNED;
}

bool moat_cluster_api_hook(void *user, const moat_http_request *request,
                           moat_http_response *response)
{
    moat_cluster *cluster = user;
    const char *path = request->path ? request->path : "";
    const char *method = request->method ? request->method : "";
    if (!cluster->rpc || !moat_cluster_path_forwardable(path))
        return false;
    if (strcmp(path, "/api/rooms") == 0 || strcmp(path, "/api/rooms/") == 0) {
        if (strcmp(method, "GET") != 0)
            return false; /* POST creates here */
        api_call *call = call_new(cluster, request);
        response->deferred_reply = (moat_http_deferred_reply){listing_start, call_release, call};
        return true;
    }
    api_call probe = {0};
    if (!moat_cluster_room_of_api_path(path, probe.room, sizeof probe.room) ||
        !moat_cluster_room_key("room", probe.room, probe.key, sizeof probe.key) ||
        room_owned_here(cluster, probe.key) ||
        moat_redis_link_state(cluster->redis) != MOAT_REDIS_UP)
        return false;
    api_call *call = call_new(cluster, request);
    memcpy(call->room, probe.room, sizeof call->room);
    memcpy(call->key, probe.key, sizeof call->key);
    response->deferred_reply = (moat_http_deferred_reply){room_start, call_release, call};
    return true;
}

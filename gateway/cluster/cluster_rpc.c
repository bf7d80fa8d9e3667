/* Owns node-to-node requests and relayed room events over Redis pub/sub
 * (cluster_rpc.h): the subscriber link, the requests in flight and their
 * timeouts, answering other nodes' requests with this node's plugin API,
 * and the drop counters of what arrives on the channels. */
#include "cluster/cluster_rpc.h"
#include "cluster/cluster_private.h"

#include "session/events.h"

#define DROP_LOG_BURST       5
#define DROP_LOG_INTERVAL_US (10ull * 1000000ull)
/* Requests in flight at once; more are answered 503 at once. */
#define MAX_IN_FLIGHT 1024

struct moat_cluster_rpc {
    moat_cluster *cluster;
    moat_redis_link *subscriber;
    char channel[MOAT_CLUSTER_NAME_MAX + 16]; /* moat:rpc:<this node> */
    unsigned timeout_ms;
    GHashTable *in_flight; /* id -> rpc_request */
    uint64_t next_id;
    uint64_t dropped[MOAT_CLUSTER_DROP_COUNT];
    uint64_t sent, timed_out, served, events_out, events_in;
    moat_log_limiter drop_log;
};

typedef struct {
    moat_cluster_rpc *rpc;
    char id[MOAT_CLUSTER_ID_MAX];
    char node[MOAT_CLUSTER_NAME_MAX];
    moat_cluster_rpc_done_fn done;
    void *user;
    guint timer;
} rpc_request;

static void drop(moat_cluster_rpc *rpc, moat_cluster_drop_reason reason, const char *channel)
{
    rpc->dropped[reason]++;
    uint64_t suppressed = 0;
    if (moat_log_limiter_allow(&rpc->drop_log, (uint64_t)g_get_monotonic_time(), &suppressed))
        moat_log_warn("cluster",
                      "hostile: dropped a message on %s: %s (%" G_GUINT64_FORMAT
                      " more suppressed)",
                      channel, moat_cluster_drop_reason_name(reason), suppressed);
}

/* Answers and forgets a request in flight. */
static void finish(rpc_request *request, unsigned status, const char *body, size_t length,
                   bool local)
{
    moat_cluster_rpc *rpc = request->rpc;
    if (request->timer)
        g_source_remove(request->timer);
    request->timer = 0;
    g_hash_table_steal(rpc->in_flight, request->id);
    request->done(request->user, status, body, length, local);
    g_free(request);
}

static void finish_error(rpc_request *request, unsigned status, const char *code,
                         const char *detail)
{
    size_t length = 0;
    char *body = moat_http_error_json(status, code, detail, &length);
    finish(request, status, body, length, true);
    g_free(body);
}

static gboolean request_timed_out(gpointer data)
{
    rpc_request *request = data;
    request->timer = 0;
    request->rpc->timed_out++;
    char detail[256];
    snprintf(detail, sizeof detail, "node %s did not answer within %u ms", request->node,
             request->rpc->timeout_ms);
    finish_error(request, 504, "node_timeout", detail);
    return G_SOURCE_REMOVE;
}

typedef struct {
    moat_cluster_rpc *rpc;
    char id[MOAT_CLUSTER_ID_MAX];
} publish_sent;

/* PUBLISH's answer: how many subscribers got it (0: the node is not
 * listening; answered at once rather than at the timeout). */
static void publish_reply(void *user, const redisReply *reply, const char *error)
{
    publish_sent *sent = user;
    rpc_request *request = g_hash_table_lookup(sent->rpc->in_flight, sent->id);
    if (request && reply && reply->type == REDIS_REPLY_INTEGER && reply->integer == 0)
        finish_error(request, 502, "node_not_listening",
                     "the owner is not subscribed to its channel (stopped or restarting)");
    g_free(sent);
}

static void ignore_reply(void *user, const redisReply *reply, const char *error) {}

static bool publish(moat_cluster_rpc *rpc, const char *channel, const char *text, size_t length,
                    moat_redis_reply_fn fn, void *user)
{
    const char *argv[] = {"PUBLISH", channel, text};
    size_t lengths[] = {7, strlen(channel), length};
    return moat_redis_command(rpc->cluster->redis, fn, user, 3, argv, lengths);
}

void moat_cluster_rpc_request(moat_cluster_rpc *rpc, const char *node_id, const char *method,
                              const char *path, const char *body, size_t body_length,
                              moat_cluster_rpc_done_fn done, void *user)
{
    rpc_request *request = g_new0(rpc_request, 1);
    request->rpc = rpc;
    request->done = done;
    request->user = user;
    snprintf(request->node, sizeof request->node, "%s", node_id);
    snprintf(request->id, sizeof request->id, "%" G_GUINT64_FORMAT "-%08x%08x", ++rpc->next_id,
             g_random_int(), g_random_int());
    g_hash_table_replace(rpc->in_flight, request->id, request);
    moat_cluster_message message = {.kind = MOAT_CLUSTER_MSG_REQUEST};
    snprintf(message.from, sizeof message.from, "%s", rpc->cluster->node_id);
    snprintf(message.id, sizeof message.id, "%s", request->id);
    snprintf(message.reply_to, sizeof message.reply_to, "%s", rpc->channel);
    snprintf(message.method, sizeof message.method, "%s", method);
    snprintf(message.path, sizeof message.path, "%s", path);
    if (body_length) { /* bytes as they came, NULs included */
        message.body = g_malloc(body_length + 1);
        memcpy(message.body, body, body_length);
        message.body[body_length] = '\0';
    }
    message.body_length = body_length;
    char channel[MOAT_CLUSTER_NAME_MAX + 16];
    size_t length = 0;
    char *text = moat_cluster_rpc_channel(node_id, channel, sizeof channel)
                     ? moat_cluster_message_to_json(&message, &length)
                     : NULL;
    moat_cluster_message_clear(&message);
    if (!text) {
        finish_error(request, 400, "not_forwardable",
                     "the request cannot be forwarded (its path, method or body)");
        return;
    }
    if (g_hash_table_size(rpc->in_flight) > MAX_IN_FLIGHT) {
        g_free(text);
        finish_error(request, 503, "busy", "too many requests to other nodes in flight");
        return;
    }
    publish_sent *sent = g_new0(publish_sent, 1);
    sent->rpc = rpc;
    snprintf(sent->id, sizeof sent->id, "%s", request->id);
    if (!publish(rpc, channel, text, length, publish_reply, sent)) {
        g_free(sent);
        g_free(text);
        finish_error(request, 503, "cluster_unavailable", "Redis is not reachable");
        return;
    }
    g_free(text);
    rpc->sent++;
    request->timer = g_timeout_add(rpc->timeout_ms, request_timed_out, request);
}

static const char *no_header(const void *context, const char *name)
{
    return NULL;
}

/* Another node's request, answered by this node's plugin API. */
static void serve_request(moat_cluster_rpc *rpc, const moat_cluster_message *message)
{
    moat_http_request request = {
        .method = message->method,
        .path = message->path,
        .body = message->body,
        .body_length = message->body_length,
        .peer = "",
        .header = no_header,
    };
    moat_http_response response = {0};
    if (message->body_length > (size_t)rpc->cluster->gateway->config.max_body_bytes)
        moat_http_response_error(&response, 413, "body_too_large", "the body is too large");
    else if (!moat_http_serve_plugin_api_local(rpc->cluster->gateway, &request, &response))
        moat_http_response_error(&response, 404, "not_found", "no such API");
    if (response.deferred.start || response.deferred_reply.start || response.status == 0) {
        moat_http_response_clear(&response);
        moat_http_response_error(&response, 500, "not_forwardable",
                                 "this API cannot be answered for another node");
    }
    rpc->served++;
    moat_cluster_message reply = {.kind = MOAT_CLUSTER_MSG_REPLY, .status = response.status};
    snprintf(reply.from, sizeof reply.from, "%s", rpc->cluster->node_id);
    snprintf(reply.id, sizeof reply.id, "%s", message->id);
    reply.body = response.body;
    reply.body_length = response.body_length;
    size_t length = 0;
    char *text = moat_cluster_message_to_json(&reply, &length);
    if (!text) {
        moat_http_response_clear(&response);
        moat_http_response_error(&response, 502, "answer_too_large",
                                 "the answer does not fit a cluster message");
        reply.status = 502;
        reply.body = response.body;
        reply.body_length = response.body_length;
        text = moat_cluster_message_to_json(&reply, &length);
    }
    if (text)
        publish(rpc, message->reply_to, text, length, ignore_reply, NULL);
    g_free(text);
    moat_http_response_clear(&response);
}

static bool node_known(moat_cluster_rpc *rpc, const char *id)
{
    return strcmp(id, rpc->cluster->node_id) != 0 && g_hash_table_contains(rpc->cluster->nodes, id);
}

static void on_message(void *user, const char *channel, const char *payload, size_t length)
{
    moat_cluster_rpc *rpc = user;
    bool events = strcmp(channel, MOAT_CLUSTER_EVENTS_CHANNEL) == 0;
    moat_cluster_message message;
    moat_cluster_drop_reason reason;
    if (!moat_cluster_message_parse(payload, length, &message, &reason)) {
        drop(rpc, reason, channel);
        return;
    }
    /* Events are sent to every node, this one included: its own echo. */
    if (events && message.kind == MOAT_CLUSTER_MSG_EVENT &&
        strcmp(message.from, rpc->cluster->node_id) == 0) {
        moat_cluster_message_clear(&message);
        return;
    }
    if (!node_known(rpc, message.from)) {
        drop(rpc, MOAT_CLUSTER_DROP_UNKNOWN_NODE, channel);
    } else if (events != (message.kind == MOAT_CLUSTER_MSG_EVENT)) {
        drop(rpc, MOAT_CLUSTER_DROP_MALFORMED, channel);
    } else if (message.kind == MOAT_CLUSTER_MSG_EVENT) {
        rpc->events_in++;
        moat_events_publish_relayed(message.topic, message.body);
    } else if (message.kind == MOAT_CLUSTER_MSG_REQUEST) {
        serve_request(rpc, &message);
    } else {
        rpc_request *request = g_hash_table_lookup(rpc->in_flight, message.id);
        if (!request || strcmp(request->node, message.from) != 0)
            drop(rpc, MOAT_CLUSTER_DROP_UNKNOWN_REQUEST, channel);
        else
            finish(request, message.status, message.body ? message.body : "", message.body_length,
                   false);
    }
    moat_cluster_message_clear(&message);
}

/* The events tap: this node's room events go to the other nodes. */
static void on_event(void *user, const char *topic, const char *json)
{
    moat_cluster_rpc *rpc = user;
    if (!g_str_has_prefix(topic, "rooms/") ||
        moat_redis_link_state(rpc->cluster->redis) != MOAT_REDIS_UP)
        return;
    moat_cluster_message message = {.kind = MOAT_CLUSTER_MSG_EVENT};
    snprintf(message.from, sizeof message.from, "%s", rpc->cluster->node_id);
    snprintf(message.topic, sizeof message.topic, "%s", topic);
    message.body = (char *)json;
    message.body_length = strlen(json);
    size_t length = 0;
    char *text = moat_cluster_message_to_json(&message, &length);
    if (text && publish(rpc, MOAT_CLUSTER_EVENTS_CHANNEL, text, length, ignore_reply, NULL))
        rpc->events_out++;
    g_free(text);
}

moat_cluster_rpc *moat_cluster_rpc_new(moat_cluster *cluster, unsigned timeout_ms, char *error,
                                       size_t error_size)
{
    moat_cluster_rpc *rpc = g_new0(moat_cluster_rpc, 1);
    rpc->cluster = cluster;
    rpc->timeout_ms = MAX(timeout_ms, 100u);
    moat_log_limiter_init(&rpc->drop_log, DROP_LOG_BURST, DROP_LOG_INTERVAL_US);
    if (!moat_cluster_rpc_channel(cluster->node_id, rpc->channel, sizeof rpc->channel)) {
        snprintf(error, error_size, "[cluster] node_id makes no channel name");
        g_free(rpc);
        return NULL;
    }
    moat_config *config = &cluster->gateway->config;
    rpc->subscriber = moat_redis_link_new(config->cluster_redis, config->cluster_password,
                                          timeout_ms, NULL, NULL, error, error_size);
    if (!rpc->subscriber) {
        g_free(rpc);
        return NULL;
    }
    rpc->in_flight = g_hash_table_new(g_str_hash, g_str_equal);
    const char *channels[] = {rpc->channel, MOAT_CLUSTER_EVENTS_CHANNEL, NULL};
    moat_redis_link_subscribe(rpc->subscriber, channels, on_message, rpc);
    moat_events_set_tap(on_event, rpc);
    return rpc;
}

void moat_cluster_rpc_free(moat_cluster_rpc *rpc)
{
    if (!rpc)
        return;
    moat_events_set_tap(NULL, NULL);
    moat_redis_link_free(rpc->subscriber);
    GHashTableIter iter;
    gpointer value;
    while (g_hash_table_size(rpc->in_flight) > 0) {
        g_hash_table_iter_init(&iter, rpc->in_flight);
        g_hash_table_iter_next(&iter, NULL, &value);
        finish_error(value, 503, "shutting_down", "the node is stopping");
    }
    g_hash_table_destroy(rpc->in_flight);
    g_free(rpc);
}

bool moat_cluster_rpc_up(const moat_cluster_rpc *rpc)
{
    return rpc && moat_redis_link_state(rpc->subscriber) == MOAT_REDIS_UP;
}

uint64_t moat_cluster_rpc_dropped(const moat_cluster_rpc *rpc, moat_cluster_drop_reason reason)
{
    return (unsigned)reason < MOAT_CLUSTER_DROP_COUNT ? rpc->dropped[reason] : 0;
}

void moat_cluster_rpc_metrics(const moat_cluster_rpc *rpc, GString *out)
{
    g_string_append_printf(
        out,
        "# HELP moat_cluster_subscriber_up 1 while this node's pub/sub link to Redis is up\n"
        "# TYPE moat_cluster_subscriber_up gauge\nmoat_cluster_subscriber_up %d\n"
        "# HELP moat_cluster_subscriber_reconnects_total Pub/sub links to Redis re-established "
        "(lost, or silent past timeout_ms)\n"
        "# TYPE moat_cluster_subscriber_reconnects_total counter\n"
        "moat_cluster_subscriber_reconnects_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_requests_total Requests to other nodes over pub/sub, by outcome\n"
        "# TYPE moat_cluster_requests_total counter\n"
        "moat_cluster_requests_total{outcome=\"sent\"} %" G_GUINT64_FORMAT "\n"
        "moat_cluster_requests_total{outcome=\"timeout\"} %" G_GUINT64_FORMAT "\n"
        "moat_cluster_requests_total{outcome=\"served_for_others\"} %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_events_relayed_total Room events sent to and received from other "
        "nodes\n# TYPE moat_cluster_events_relayed_total counter\n"
        "moat_cluster_events_relayed_total{direction=\"out\"} %" G_GUINT64_FORMAT "\n"
        "moat_cluster_events_relayed_total{direction=\"in\"} %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_messages_dropped_total Pub/sub messages refused, by reason\n"
        "# TYPE moat_cluster_messages_dropped_total counter\n",
        moat_cluster_rpc_up(rpc), moat_redis_link_counters(rpc->subscriber)->reconnects, rpc->sent,
        rpc->timed_out, rpc->served, rpc->events_out, rpc->events_in);
    for (int reason = 0; reason < MOAT_CLUSTER_DROP_COUNT; reason++)
        g_string_append_printf(
            out, "moat_cluster_messages_dropped_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
            moat_cluster_drop_reason_name(reason), rpc->dropped[reason]);
}

/* The node registry in Redis: this node's record written and every live
 * record read back each tick (one script), each indexed under the id of
 * the key it was read from; records that are malformed, unusable or filed
 * under another node's key are refused, counted and logged rate-limited. */
#include "cluster/cluster_private.h"

#include "cluster/cluster_keys.h"
#include "cluster/node_record.h"
#include "cluster/redis_link.h"

#include "base/log.h"
#include "call/call_registry.h"

#include <stdio.h>
#include <string.h>

/* SET this node's record, index it, read every live record back. An id
 * whose record expired, or whose key holds something other than a string
 * (a stray HSET: its GET would fail the whole script, every tick, on every
 * node) or a string longer than a record may be (ARGV[4] bytes: read
 * whole by every node every tick, only to be refused, it took the link
 * past its timeout), leaves the index; an index that is not a set is
 * replaced (every node adds itself again within a tick). Returns
 * {unusable, id, record, id, record...}: how many ids (and indexes) were
 * thrown out as unusable, then each id of the index with the record of its
 * key (registry_read checks that the record names that id). KEYS: node key,
 * index; ARGV: id, record, ms, the most bytes a record may have. */
static const char register_script[] =
    "local unusable = 0 "
    "local index = redis.call('TYPE', KEYS[2]).ok "
    "if index ~= 'set' and index ~= 'none' then "
    "  redis.call('DEL', KEYS[2]) unusable = 1 end "
    "redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) "
    "redis.call('SADD', KEYS[2], ARGV[1]) "
    "local out = {0} "
    "for _, id in ipairs(redis.call('SMEMBERS', KEYS[2])) do "
    "  local key = 'moat:node:' .. id "
    "  local kind = redis.call('TYPE', key).ok "
    "  if kind == 'string' and redis.call('STRLEN', key) <= tonumber(ARGV[4]) then "
    "    table.insert(out, id) table.insert(out, redis.call('GET', key)) "
    "  else "
    "    redis.call('SREM', KEYS[2], id) "
    "    if kind ~= 'none' then unusable = unusable + 1 end "
    "  end "
    "end "
    "out[1] = unusable "
    "return out";

/* The room's owner after the call: an owner whose node record is gone is
 * dead and replaced; with no owner, ARGV[1] takes it when ARGV[3] is "1";
 * the owner named ARGV[1] has its lease renewed. Returns {owner, record,
 * full} ({"", "", 0}: nobody); full is 1 while the optional KEYS[2] (the
 * room's full key) exists. A room key that is not a string (no node writes
 * one) is removed first: its GET would fail the script for that room on
 * every node for good, and each node would serve the room as its own. The
 * owner's record is read only when it is a string of at most ARGV[4]
 * bytes (measured with STRLEN): any other comes back as "", which the
 * offer refuses as an unusable record (a record of 200 MiB named by a
 * room key was read whole for every offer to the room, and took the
 * node's one Redis link past its timeout for every room).
 * KEYS: room key[, full key]; ARGV: candidate, lease ms, claim, the most
 * bytes a record may have (MOAT_CLUSTER_CLAIM_RECORD_MAX). */
const char moat_cluster_claim_script[] =
    "local full = 0 "
    "if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then full = 1 end "
    "local kind = redis.call('TYPE', KEYS[1]).ok "
    "if kind ~= 'string' and kind ~= 'none' then redis.call('DEL', KEYS[1]) end "
    "local cur = redis.call('GET', KEYS[1]) "
    "if cur and cur ~= ARGV[1] and redis.call('EXISTS', 'moat:node:' .. cur) == 0 then "
    "  cur = false end "
    "if not cur then "
    "  if ARGV[3] ~= '1' then return {'', '', 0} end "
    "  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) cur = ARGV[1] "
    "elseif cur == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end "
    "local record = '' "
    "local node = 'moat:node:' .. cur "
    "if redis.call('TYPE', node).ok == 'string' and "
    "   redis.call('STRLEN', node) <= tonumber(ARGV[4]) then "
    "  record = redis.call('GET', node) end "
    "return {cur, record, full}";

/* ---- the registry ---------------------------------------------------------------- */

void moat_cluster_fill_own_record(moat_cluster *cluster, moat_cluster_node *node)
{
    moat_gateway *gateway = cluster->gateway;
    memset(node, 0, sizeof *node);
    snprintf(node->id, sizeof node->id, "%s", cluster->node_id);
    snprintf(node->http, sizeof node->http, "%s", cluster->advertise_http);
    snprintf(node->media, sizeof node->media, "%s", cluster->advertise_media);
    if (gateway->config.ng_port)
        snprintf(node->ng, sizeof node->ng, "%s:%d", gateway->config.ng_bind,
                 gateway->config.ng_port);
    snprintf(node->region, sizeof node->region, "%s", gateway->config.cluster_region);
    snprintf(node->version, sizeof node->version, "%s", MOAT_VERSION);
    node->draining = cluster->draining;
    node->workers = gateway->n_workers;
    node->sessions = (uint32_t)moat_session_registry_count(gateway->sessions);
    node->max_sessions = (uint32_t)MAX(gateway->config.max_sessions, 0);
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, cluster->rooms);
    while (g_hash_table_iter_next(&iter, NULL, &value))
        node->rooms += ((owned_room *)value)->lease.state == MOAT_LEASE_OWNED;
    node->calls = gateway->calls ? (uint32_t)moat_call_count(gateway->calls) : 0;
}

/* A record refused: counted, and logged at most a few times a minute
 * (whoever writes Redis could otherwise fill the log every tick). */
static void record_refused(moat_cluster *cluster, const char *key_id, const char *why)
{
    cluster->records_rejected++;
    uint64_t suppressed = 0;
    if (moat_log_limiter_allow(&cluster->record_log, (uint64_t)g_get_monotonic_time(), &suppressed))
        moat_log_warn("cluster",
                      "hostile: node record under moat:node:%.64s ignored: %s (%" G_GUINT64_FORMAT
                      " more suppressed)",
                      key_id, why, suppressed);
}

/* One {id, record} pair of the register script's reply: indexed under the
 * id of its key, and only when the record names that same id (a record
 * under another node's key would otherwise replace that node's entry). */
static void registry_read_one(moat_cluster *cluster, const redisReply *id, const redisReply *record)
{
    moat_cluster_node node;
    char why[96];
    if (id->type != REDIS_REPLY_STRING || record->type != REDIS_REPLY_STRING) {
        record_refused(cluster, "?", "not a string");
        return;
    }
    if (!moat_cluster_node_parse(record->str, record->len, &node, why, sizeof why)) {
        record_refused(cluster, id->str, why);
        return;
    }
    if (strlen(node.id) != id->len || memcmp(node.id, id->str, id->len) != 0) {
        cluster->records_misfiled++;
        record_refused(cluster, id->str, "its id is not its key's");
        return;
    }
    g_hash_table_replace(cluster->nodes, g_strdup(node.id), g_memdup2(&node, sizeof node));
}

static void registry_read(void *user, const redisReply *reply, const char *error)
{
    moat_cluster *cluster = user;
    cluster->register_in_flight = false;
    if (!reply || reply->type != REDIS_REPLY_ARRAY) {
        if (reply && reply->type == REDIS_REPLY_ERROR)
            moat_log_warn("cluster", "registry: %s", reply->str);
        return;
    }
    if (reply->elements < 1 || reply->element[0]->type != REDIS_REPLY_INTEGER) {
        moat_log_warn("cluster", "registry: unexpected reply to the register script");
        return;
    }
    /* Ids the script took out of the index (their keys unusable). */
    cluster->records_rejected += (uint64_t)MAX(reply->element[0]->integer, 0);
    g_hash_table_remove_all(cluster->nodes);
    for (size_t i = 1; i + 1 < reply->elements && i < 2 * MOAT_CLUSTER_MAX_NODES; i += 2)
        registry_read_one(cluster, reply->element[i], reply->element[i + 1]);
    cluster->nodes_read_ms = moat_cluster_now_ms();
}

void moat_cluster_registry_write(moat_cluster *cluster)
{
    if (cluster->register_in_flight)
        return;
    moat_cluster_node self;
    moat_cluster_fill_own_record(cluster, &self);
    char *record = moat_cluster_node_to_json(&self);
    char ttl[24], max_bytes[24];
    snprintf(ttl, sizeof ttl, "%" G_GUINT64_FORMAT, cluster->lease_ms);
    snprintf(max_bytes, sizeof max_bytes, "%d", MOAT_CLUSTER_RECORD_MAX_BYTES);
    const char *argv[] = {
        "EVAL",           register_script, "2", cluster->node_key, MOAT_CLUSTER_NODES_KEY,
        cluster->node_id, record,          ttl, max_bytes};
    size_t lengths[G_N_ELEMENTS(argv)];
    for (size_t i = 0; i < G_N_ELEMENTS(argv); i++)
        lengths[i] = strlen(argv[i]);
    if (moat_redis_command(cluster->redis, registry_read, cluster, G_N_ELEMENTS(argv), argv,
                           lengths))
        cluster->register_in_flight = true;
    g_free(record);
}

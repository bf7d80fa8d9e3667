/* Owns this node's ng calls in Redis ([cluster] keep_calls): the hash
 * moat:calls:<node id>, one field per restorable call holding its record
 * (call/call_journal.h), written as calls change and removed when they end;
 * read back once, when a (re)started node first reaches Redis, and replayed
 * into the call registry; rewritten whole each later time the link comes
 * back (whatever changed while Redis was away). Redis trouble never touches
 * a call's media: a write that cannot be sent waits for that rewrite.
 * Control thread. */
#include "cluster/cluster_calls.h"
#include "cluster/cluster_private.h"

#include <string.h>

struct moat_cluster_calls {
    moat_cluster *cluster;
    moat_call_registry *registry;
    char key[220];
    bool loaded;         /* the records were read back (once per process) */
    bool load_in_flight; /* HGETALL sent, not answered */
    uint64_t writes_failed;
};

static void write_reply(void *user, const redisReply *reply, const char *error)
{
    moat_cluster_calls *calls = user;
    if (!reply || reply->type == REDIS_REPLY_ERROR)
        calls->writes_failed++; /* the next rewrite (link back) puts it again */
}

static void send_words(moat_cluster_calls *calls, int argc, const char **argv,
                       const size_t *lengths)
{
    if (!moat_redis_command(calls->cluster->redis, write_reply, calls, argc, argv, lengths))
        calls->writes_failed++;
}

static void put_record(void *user, const char *call_id, const uint8_t *record, size_t length)
{
    moat_cluster_calls *calls = user;
    const char *argv[] = {"HSET", calls->key, call_id, (const char *)record};
    size_t lengths[] = {4, strlen(calls->key), strlen(call_id), length};
    send_words(calls, 4, argv, lengths);
}

static void remove_record(void *user, const char *call_id)
{
    moat_cluster_calls *calls = user;
    const char *argv[] = {"HDEL", calls->key, call_id};
    size_t lengths[] = {4, strlen(calls->key), strlen(call_id)};
    send_words(calls, 3, argv, lengths);
}

/* The whole hash again: what Redis holds is exactly this node's calls. */
static void rewrite(moat_cluster_calls *calls)
{
    const char *argv[] = {"DEL", calls->key};
    size_t lengths[] = {3, strlen(calls->key)};
    send_words(calls, 2, argv, lengths);
    moat_call_registry_journal_all(calls->registry);
}

static void restore_all(moat_cluster_calls *calls, const redisReply *reply)
{
    size_t counts[MOAT_CALL_RESTORE_OUTCOMES] = {0};
    for (size_t i = 0; i + 1 < reply->elements; i += 2) {
        const redisReply *value = reply->element[i + 1];
        char error[192] = "";
        moat_call_restore_outcome outcome = MOAT_CALL_RESTORE_FAILED;
        if (value->type == REDIS_REPLY_STRING)
            outcome = moat_call_registry_restore(calls->registry, (const uint8_t *)value->str,
                                                 value->len, error, sizeof error);
        else
            g_strlcpy(error, "not a string", sizeof error);
        counts[outcome]++;
        if (outcome == MOAT_CALL_RESTORE_FAILED)
            moat_log_warn("cluster", "call record %.*s not restored: %s",
                          reply->element[i]->type == REDIS_REPLY_STRING
                              ? (int)MIN(reply->element[i]->len, 128)
                              : 0,
                          reply->element[i]->str ? reply->element[i]->str : "", error);
    }
    if (reply->elements > 0)
        moat_log_info("cluster",
                      "calls from before the restart: %zu restored, %zu failed, %zu "
                      "already here",
                      counts[MOAT_CALL_RESTORED], counts[MOAT_CALL_RESTORE_FAILED],
                      counts[MOAT_CALL_RESTORE_SKIPPED]);
}

static void load_reply(void *user, const redisReply *reply, const char *error)
{
    moat_cluster_calls *calls = user;
    calls->load_in_flight = false;
    if (!reply || reply->type != REDIS_REPLY_ARRAY) {
        moat_log_warn("cluster",
                      "reading this node's calls from Redis failed (%s): tried again "
                      "when the link is back",
                      reply && reply->type == REDIS_REPLY_ERROR ? reply->str
                      : error                                   ? error
                                                                : "bad reply");
        return;
    }
    calls->loaded = true;
    restore_all(calls, reply);
    rewrite(calls); /* calls made before the records were read included */
}

void moat_cluster_calls_link_up(moat_cluster_calls *calls)
{
    if (!calls)
        return;
    if (calls->loaded) {
        rewrite(calls);
        return;
    }
    if (calls->load_in_flight)
        return;
    const char *argv[] = {"HGETALL", calls->key};
    size_t lengths[] = {7, strlen(calls->key)};
    calls->load_in_flight =
        moat_redis_command(calls->cluster->redis, load_reply, calls, 2, argv, lengths);
}

moat_cluster_calls *moat_cluster_calls_new(moat_cluster *cluster)
{
    moat_gateway *gateway = cluster->gateway;
    if (!gateway->calls || !gateway->config.cluster_keep_calls)
        return NULL;
    moat_cluster_calls *calls = g_new0(moat_cluster_calls, 1);
    calls->cluster = cluster;
    calls->registry = gateway->calls;
    if (!moat_cluster_calls_key(cluster->node_id, calls->key, sizeof calls->key)) {
        g_free(calls);
        return NULL; /* the node id was checked at configure(): not reached */
    }
    moat_call_journal_sink sink = {put_record, remove_record, calls};
    moat_call_registry_set_journal(calls->registry, &sink,
                                   gateway->config.cluster_restored_call_idle_s);
    return calls;
}

void moat_cluster_calls_free(moat_cluster_calls *calls)
{
    if (!calls)
        return;
    moat_call_registry_set_journal(calls->registry, NULL, 0);
    g_free(calls);
}

uint64_t moat_cluster_calls_writes_failed(const moat_cluster_calls *calls)
{
    return calls ? calls->writes_failed : 0;
}

bool moat_cluster_calls_loaded(const moat_cluster_calls *calls)
{
    return calls && calls->loaded;
}

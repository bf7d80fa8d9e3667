/* Owns the cluster's Redis connection: the name lookup, connect, AUTH,
 * reconnect with backoff, per-command timeouts, subscriptions and their
 * probes (redis_link.h); the event-loop glue is redis_source.c. */
#include "cluster/redis_link.h"
#include "cluster/redis_lookup.h"
#include "cluster/redis_source.h"

#include "base/log.h"

#include <glib.h>
#include <hiredis/async.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
/* Consecutive command timeouts after which the link is presumed stuck
 * (Redis stopped, a black-holed route) and dropped. */
#define STUCK_AFTER_TIMEOUTS 3
/* A subscribing connection is probed this often (subscriptions below). */
#define PROBE_INTERVAL_MS 1000
/* A name lookup may take this many command timeouts (10 s by default: a
 * dead first nameserver costs glibc 5 s before the second answers). One
 * lookup is never cut short and restarted at each attempt: a resolver
 * slower than the connect timeout would then never connect. */
#define LOOKUP_TIMEOUTS 10u

struct moat_redis_link {
    char *host; /* as configured (a name or an address), for logs */
    int port;
    moat_redis_lookup *lookup; /* a host name being resolved */
    char address[64];          /* the numeric address connected to */
    char *socket_path;
    char *password;
    unsigned timeout_ms;
    moat_redis_state_fn on_state;
    void *user;
    redisAsyncContext *context;
    moat_redis_source *source;
    moat_redis_state state;
    guint reconnect_timer;
    guint connect_timer;
    unsigned backoff_ms;
    unsigned consecutive_timeouts;
    bool ever_up;
    bool freeing;
    char error[256];
    moat_redis_counters counters;
    char **channels; /* subscriber links: SUBSCRIBEd on each connection */
    moat_redis_message_fn on_message;
    void *message_user;
    uint64_t messages;
    guint probe_timer;    /* subscriber links: every PROBE_INTERVAL_MS */
    guint probe_deadline; /* a probe awaits its answer (timeout_ms) */
};

typedef struct {
    moat_redis_link *link;
    moat_redis_reply_fn fn;
    void *user;
    guint timer;
    bool finished; /* fn was called (timeout) or is not to be */
} pending_command;

static void connect_now(moat_redis_link *link);
static void subscribe_now(moat_redis_link *link);

static void source_drop(moat_redis_link *link)
{
    moat_redis_source_drop(link->source);
    link->source = NULL;
}

/* ---- connection life ---------------------------------------------------------- */

static void set_state(moat_redis_link *link, moat_redis_state state)
{
    bool was_up = link->state == MOAT_REDIS_UP;
    link->state = state;
    bool up = state == MOAT_REDIS_UP;
    if (was_up != up && link->on_state && !link->freeing)
        link->on_state(link->user, up);
}

/* A connect that failed, at once (an unresolvable host, a missing unix
 * socket) or later: one warning naming the address and the reason, kept as
 * the link's error. Each attempt waits for the backoff (at most one a
 * BACKOFF_MAX_MS), which bounds these lines. */
static void connect_failed(moat_redis_link *link, const char *reason, char *why, size_t why_size)
{
    if (link->socket_path)
        snprintf(why, why_size, "cannot connect to %s: %s", link->socket_path, reason);
    else if (strchr(link->host, ':'))
        snprintf(why, why_size, "cannot connect to [%s]:%d: %s", link->host, link->port, reason);
    else if (link->address[0] && strcmp(link->address, link->host) != 0)
        snprintf(why, why_size, "cannot connect to %s:%d (%s): %s", link->host, link->port,
                 link->address, reason);
    else
        snprintf(why, why_size, "cannot connect to %s:%d: %s", link->host, link->port, reason);
    if (!link->freeing)
        moat_log_warn("cluster", "redis: %s", why);
}

static gboolean reconnect_due(gpointer data)
{
    moat_redis_link *link = data;
    link->reconnect_timer = 0;
    connect_now(link);
    return G_SOURCE_REMOVE;
}

/* The context is gone (hiredis freed it or is about to): forget it and try
 * again after the backoff. */
static void link_lost(moat_redis_link *link, const char *why)
{
    if (link->connect_timer) {
        g_source_remove(link->connect_timer);
        link->connect_timer = 0;
    }
    if (link->probe_deadline) {
        g_source_remove(link->probe_deadline);
        link->probe_deadline = 0;
    }
    link->context = NULL;
    source_drop(link);
    if (why && *why)
        snprintf(link->error, sizeof link->error, "%s", why);
    if (link->state != MOAT_REDIS_AUTH_FAILED)
        set_state(link, MOAT_REDIS_DOWN);
    if (link->freeing || link->reconnect_timer)
        return;
    link->reconnect_timer = g_timeout_add(link->backoff_ms, reconnect_due, link);
    link->backoff_ms = MIN(link->backoff_ms * 2, BACKOFF_MAX_MS);
}

/* Drops the connection from outside hiredis's callbacks (a timer). */
static void drop_connection(moat_redis_link *link, const char *why)
{
    redisAsyncContext *context = link->context;
    if (!context)
        return;
    snprintf(link->error, sizeof link->error, "%s", why);
    moat_log_warn("cluster", "redis: dropping the connection: %s", why);
    /* Its callbacks run from redisAsyncFree (pending commands with NULL,
     * on_disconnect) and see the context as lost. */
    redisAsyncFree(context);
    if (link->context == context) /* never connected: no disconnect callback */
        link_lost(link, why);
}

static void on_disconnect(const redisAsyncContext *context, int status)
{
    moat_redis_link *link = context->data;
    if (!link || link->context != context)
        return;
    char why[200];
    snprintf(why, sizeof why, "connection lost%s%s", context->errstr[0] ? ": " : "",
             context->errstr);
    if (!link->freeing)
        moat_log_warn("cluster", "redis: %s", why);
    link_lost(link, link->state == MOAT_REDIS_AUTH_FAILED ? NULL : why);
}

static void auth_reply(redisAsyncContext *context, void *r, void *privdata)
{
    moat_redis_link *link = privdata;
    redisReply *reply = r;
    if (!link || link->freeing || link->context != context)
        return;
    /* The connect timer covers AUTH too (a stopped Redis accepts TCP). */
    if (link->connect_timer) {
        g_source_remove(link->connect_timer);
        link->connect_timer = 0;
    }
    if (!reply)
        return; /* the context is going away: on_disconnect or the dropper handles it */
    if (reply->type == REDIS_REPLY_STATUS) {
        link->error[0] = '\0';
        link->backoff_ms = BACKOFF_MIN_MS;
        link->consecutive_timeouts = 0;
        if (link->ever_up)
            link->counters.reconnects++;
        link->ever_up = true;
        moat_log_info("cluster", "redis: connected and authenticated");
        set_state(link, MOAT_REDIS_UP);
        subscribe_now(link);
        return;
    }
    link->counters.auth_failures++;
    snprintf(link->error, sizeof link->error, "authentication failed: %s",
             reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
    moat_log_error("cluster", "redis: %s (check [cluster] password / MOAT_CLUSTER_PASSWORD)",
                   link->error);
    set_state(link, MOAT_REDIS_AUTH_FAILED);
    link->backoff_ms = BACKOFF_MAX_MS;
    redisAsyncDisconnect(context);
}

static void on_connect(const redisAsyncContext *context, int status)
{
    moat_redis_link *link = context->data;
    if (!link || link->context != context)
        return;
    if (status != REDIS_OK) {
        if (link->connect_timer) {
            g_source_remove(link->connect_timer);
            link->connect_timer = 0;
        }
        char why[200];
        connect_failed(link, context->errstr, why, sizeof why);
        /* hiredis frees the context after this callback. */
        link->state = MOAT_REDIS_CONNECTING; /* not AUTH_FAILED any more */
        link_lost(link, why);
        return;
    }
    /* hiredis 0.14 leaves it off; a silent peer is then found only by the
     * link's own timeouts (and probes, for a subscriber). */
    if (!link->socket_path)
        redisEnableKeepAlive((redisContext *)&context->c);
    set_state(link, MOAT_REDIS_AUTHENTICATING);
    const char *argv[] = {"AUTH", link->password};
    size_t lengths[] = {4, strlen(link->password)};
    redisAsyncCommandArgv((redisAsyncContext *)context, auth_reply, link, 2, argv, lengths);
}

/* The link stops waiting for its lookup; the lookup's answer, whenever it
 * comes, is dropped. */
static void lookup_abandon(moat_redis_link *link)
{
    moat_redis_lookup_abandon(link->lookup);
    link->lookup = NULL;
}

/* The lookup or the connect failed: logged, and retried after the backoff. */
static void attempt_failed(moat_redis_link *link, const char *reason)
{
    if (link->connect_timer) {
        g_source_remove(link->connect_timer);
        link->connect_timer = 0;
    }
    char why[200];
    connect_failed(link, reason, why, sizeof why);
    link->state = MOAT_REDIS_CONNECTING; /* not AUTH_FAILED any more */
    link_lost(link, why);
}

static gboolean connect_timed_out(gpointer data)
{
    moat_redis_link *link = data;
    link->connect_timer = 0;
    if (link->lookup) {
        lookup_abandon(link);
        attempt_failed(link, "name lookup timed out");
        return G_SOURCE_REMOVE;
    }
    drop_connection(link, "connect or AUTH timed out");
    return G_SOURCE_REMOVE;
}

/* Connects to `address` (numeric; NULL: the unix socket): hiredis resolves
 * nothing then, so nothing here blocks. */
static void connect_to(moat_redis_link *link, const char *address)
{
    redisAsyncContext *context =
        address ? redisAsyncConnect(address, link->port) : redisAsyncConnectUnix(link->socket_path);
    if (!context || context->err) {
        char why[200];
        connect_failed(link, context ? context->errstr : "no memory", why, sizeof why);
        if (context)
            redisAsyncFree(context);
        link_lost(link, why);
        return;
    }
    if (link->state != MOAT_REDIS_AUTH_FAILED)
        set_state(link, MOAT_REDIS_CONNECTING);
    context->data = link;
    link->context = context;
    link->source = moat_redis_source_attach(context);
    redisAsyncSetConnectCallback(context, on_connect);
    redisAsyncSetDisconnectCallback(context, on_disconnect);
    link->connect_timer = g_timeout_add(MAX(link->timeout_ms, 1000u), connect_timed_out, link);
}

static void lookup_answered(void *user, const char *address, const char *error)
{
    moat_redis_link *link = user;
    link->lookup = NULL;
    if (!address) {
        attempt_failed(link, error);
        return;
    }
    snprintf(link->address, sizeof link->address, "%s", address);
    if (link->connect_timer) {
        g_source_remove(link->connect_timer);
        link->connect_timer = 0;
    }
    connect_to(link, link->address);
}

/* A host name is resolved off this thread (redis_lookup.h), within
 * LOOKUP_TIMEOUTS command timeouts; the connect gets its own timeout. */
static void lookup_start(moat_redis_link *link)
{
    link->address[0] = '\0';
    if (link->state != MOAT_REDIS_AUTH_FAILED)
        set_state(link, MOAT_REDIS_CONNECTING);
    link->connect_timer =
        g_timeout_add(MAX(link->timeout_ms * LOOKUP_TIMEOUTS, 1000u), connect_timed_out, link);
    link->lookup = moat_redis_lookup_start(link->host, lookup_answered, link);
}

static void connect_now(moat_redis_link *link)
{
    if (link->socket_path) {
        connect_to(link, NULL);
    } else if (g_hostname_is_ip_address(link->host)) {
        snprintf(link->address, sizeof link->address, "%s", link->host);
        connect_to(link, link->address);
    } else {
        lookup_start(link);
    }
}

/* ---- commands ------------------------------------------------------------------ */

static gboolean command_timed_out(gpointer data)
{
    pending_command *command = data;
    moat_redis_link *link = command->link;
    command->timer = 0;
    command->finished = true;
    link->counters.command_timeouts++;
    command->fn(command->user, NULL, "timeout");
    if (++link->consecutive_timeouts >= STUCK_AFTER_TIMEOUTS && link->context) {
        link->consecutive_timeouts = 0;
        drop_connection(link, "commands time out");
    }
    return G_SOURCE_REMOVE;
}

static void command_reply(redisAsyncContext *context, void *r, void *privdata)
{
    pending_command *command = privdata;
    moat_redis_link *link = command->link;
    if (command->timer)
        g_source_remove(command->timer);
    if (!command->finished) {
        if (link->freeing) {
            command->fn(command->user, NULL, "closing");
            g_free(command);
            return;
        }
        if (r) {
            link->consecutive_timeouts = 0;
            if (((redisReply *)r)->type == REDIS_REPLY_ERROR)
                link->counters.command_errors++;
        } else {
            link->counters.command_errors++;
        }
        command->fn(command->user, r, r ? NULL : "link lost");
    }
    g_free(command);
}

bool moat_redis_command(moat_redis_link *link, moat_redis_reply_fn fn, void *user, int argc,
                        const char **argv, const size_t *lengths)
{
    if (!link || link->state != MOAT_REDIS_UP || !link->context)
        return false;
    pending_command *command = g_new0(pending_command, 1);
    command->link = link;
    command->fn = fn;
    command->user = user;
    if (redisAsyncCommandArgv(link->context, command_reply, command, argc, argv, lengths) !=
        REDIS_OK) {
        g_free(command);
        return false;
    }
    command->timer = g_timeout_add(link->timeout_ms, command_timed_out, command);
    return true;
}

/* ---- subscriptions ------------------------------------------------------------- */

/* A subscribing connection sends nothing of its own after SUBSCRIBE, so a
 * silent partition (no FIN, no RST) would leave it up forever, receiving
 * nothing. Every PROBE_INTERVAL_MS it SUBSCRIBEs again to a channel it is
 * on (a no-op for Redis) and is dropped (reconnected, subscribed again)
 * when nothing at all arrives within timeout_ms. Not PING: hiredis 0.14
 * files a subscribed connection's PING callback where the ["pong", ""]
 * reply never reaches it, and keeps it until the connection ends. */
static gboolean probe_unanswered(gpointer data)
{
    moat_redis_link *link = data;
    link->probe_deadline = 0;
    link->counters.command_timeouts++;
    drop_connection(link, "subscribed connection silent (probe unanswered)");
    return G_SOURCE_REMOVE;
}

static void subscription_reply(redisAsyncContext *context, void *r, void *privdata);

static gboolean probe_due(gpointer data)
{
    moat_redis_link *link = data;
    if (link->state != MOAT_REDIS_UP || !link->context || link->probe_deadline || !link->channels ||
        !link->channels[0])
        return G_SOURCE_CONTINUE;
    const char *argv[] = {"SUBSCRIBE", link->channels[0]};
    size_t lengths[] = {strlen(argv[0]), strlen(argv[1])};
    if (redisAsyncCommandArgv(link->context, subscription_reply, link, 2, argv, lengths) ==
        REDIS_OK)
        link->probe_deadline = g_timeout_add(link->timeout_ms, probe_unanswered, link);
    return G_SOURCE_CONTINUE;
}

/* Every reply on a subscribing connection: the SUBSCRIBE confirmations
 * (probes' too) and each ["message", channel, payload]; any of them shows
 * the connection alive. hiredis keeps this callback for the connection's
 * life and calls it with NULL when it goes. */
static void subscription_reply(redisAsyncContext *context, void *r, void *privdata)
{
    moat_redis_link *link = privdata;
    redisReply *reply = r;
    if (!reply || !link || link->freeing || link->context != context)
        return;
    if (link->probe_deadline) {
        g_source_remove(link->probe_deadline);
        link->probe_deadline = 0;
    }
    if (!link->on_message)
        return;
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3 ||
        reply->element[0]->type != REDIS_REPLY_STRING ||
        strcmp(reply->element[0]->str, "message") != 0 ||
        reply->element[1]->type != REDIS_REPLY_STRING ||
        reply->element[2]->type != REDIS_REPLY_STRING)
        return;
    link->messages++;
    link->on_message(link->message_user, reply->element[1]->str, reply->element[2]->str,
                     reply->element[2]->len);
}

static void subscribe_now(moat_redis_link *link)
{
    if (!link->channels || !link->context || link->state != MOAT_REDIS_UP)
        return;
    guint n = g_strv_length(link->channels);
    const char **argv = g_new0(const char *, n + 1);
    size_t *lengths = g_new0(size_t, n + 1);
    argv[0] = "SUBSCRIBE";
    lengths[0] = strlen(argv[0]);
    for (guint i = 0; i < n; i++) {
        argv[i + 1] = link->channels[i];
        lengths[i + 1] = strlen(link->channels[i]);
    }
    redisAsyncCommandArgv(link->context, subscription_reply, link, (int)n + 1, argv, lengths);
    g_free(argv);
    g_free(lengths);
}

void moat_redis_link_subscribe(moat_redis_link *link, const char *const *channels,
                               moat_redis_message_fn fn, void *user)
{
    g_strfreev(link->channels);
    link->channels = g_strdupv((char **)channels);
    link->on_message = fn;
    link->message_user = user;
    if (!link->probe_timer)
        link->probe_timer = g_timeout_add(PROBE_INTERVAL_MS, probe_due, link);
    subscribe_now(link);
}

uint64_t moat_redis_link_messages(const moat_redis_link *link)
{
    return link ? link->messages : 0;
}

/* ---- life and state ------------------------------------------------------------ */

static bool parse_address(moat_redis_link *link, const char *address, char *error,
                          size_t error_size)
{
    if (address[0] == '/') {
        link->socket_path = g_strdup(address);
        return true;
    }
    const char *colon = strrchr(address, ':');
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : 0;
    if (!colon || colon == address || !end || *end || port < 1 || port > 65535) {
        snprintf(error, error_size,
                 "[cluster] redis = \"%s\": expected HOST:PORT or a unix socket path", address);
        return false;
    }
    const char *host = address;
    size_t length = (size_t)(colon - address);
    if (host[0] == '[' && length >= 2 && host[length - 1] == ']') {
        host++;
        length -= 2;
    }
    link->host = g_strndup(host, length);
    link->port = (int)port;
    return true;
}

int moat_redis_link_check_address(const char *address, char *error, size_t error_size)
{
    moat_redis_link probe = {0};
    bool ok = parse_address(&probe, address, error, error_size);
    g_free(probe.host);
    g_free(probe.socket_path);
    return ok ? 0 : -1;
}

moat_redis_link *moat_redis_link_new(const char *address, const char *password, unsigned timeout_ms,
                                     moat_redis_state_fn on_state, void *user, char *error,
                                     size_t error_size)
{
    moat_redis_link *link = g_new0(moat_redis_link, 1);
    if (!parse_address(link, address, error, error_size)) {
        g_free(link);
        return NULL;
    }
    link->password = g_strdup(password ? password : "");
    link->timeout_ms = timeout_ms ? timeout_ms : 1000;
    link->on_state = on_state;
    link->user = user;
    link->backoff_ms = BACKOFF_MIN_MS;
    link->state = MOAT_REDIS_DOWN;
    connect_now(link);
    return link;
}

void moat_redis_link_free(moat_redis_link *link)
{
    if (!link)
        return;
    link->freeing = true;
    lookup_abandon(link);
    if (link->reconnect_timer)
        g_source_remove(link->reconnect_timer);
    if (link->connect_timer)
        g_source_remove(link->connect_timer);
    if (link->probe_timer)
        g_source_remove(link->probe_timer);
    if (link->probe_deadline)
        g_source_remove(link->probe_deadline);
    link->connect_timer = 0;
    link->reconnect_timer = 0;
    link->probe_timer = 0;
    link->probe_deadline = 0;
    if (link->context) {
        redisAsyncContext *context = link->context;
        context->data = NULL;
        link->context = NULL;
        redisAsyncFree(context);
    }
    source_drop(link);
    if (link->password)
        memset(link->password, 0, strlen(link->password));
    g_free(link->password);
    g_free(link->host);
    g_free(link->socket_path);
    g_strfreev(link->channels);
    g_free(link);
}

moat_redis_state moat_redis_link_state(const moat_redis_link *link)
{
    return link ? link->state : MOAT_REDIS_DOWN;
}

const char *moat_redis_state_name(moat_redis_state state)
{
    switch (state) {
    case MOAT_REDIS_DOWN:
        return "down";
    case MOAT_REDIS_CONNECTING:
        return "connecting";
    case MOAT_REDIS_AUTHENTICATING:
        return "authenticating";
    case MOAT_REDIS_UP:
        return "up";
    case MOAT_REDIS_AUTH_FAILED:
        return "auth_failed";
    }
    return "?";
}

const char *moat_redis_link_error(const moat_redis_link *link)
{
    return link ? link->error : "";
}

const moat_redis_counters *moat_redis_link_counters(const moat_redis_link *link)
{
    return &link->counters;
}

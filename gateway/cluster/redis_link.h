/* The cluster's one Redis connection (hiredis 0.14 async API on the control
 * thread's GLib main context): connects (TCP HOST:PORT or a unix socket),
 * authenticates, reconnects with backoff when the link drops, and gives
 * every command Moat's own timeout (hiredis has none). Link state and its
 * counters are exposed for /metrics and /api/cluster. Control thread only;
 * the link owns its hiredis context. */
#ifndef MOAT_CLUSTER_REDIS_LINK_H
#define MOAT_CLUSTER_REDIS_LINK_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    MOAT_REDIS_DOWN, /* waiting to reconnect */
    MOAT_REDIS_CONNECTING,
    MOAT_REDIS_AUTHENTICATING,
    MOAT_REDIS_UP,
    MOAT_REDIS_AUTH_FAILED, /* Redis refused the password; retried with backoff */
} moat_redis_state;

typedef struct moat_redis_link moat_redis_link;

/* A command's reply: `reply` NULL on failure (timeout, link lost, refused
 * before sending), with `error` saying why; an error reply from Redis comes
 * as a REDIS_REPLY_ERROR reply. Called exactly once: with error "closing"
 * from moat_redis_link_free for commands still unanswered. */
typedef void (*moat_redis_reply_fn)(void *user, const redisReply *reply, const char *error);
/* The link went up (true) or down (false). */
typedef void (*moat_redis_state_fn)(void *user, bool up);

typedef struct {
    uint64_t reconnects;       /* connections (re)established after the first */
    uint64_t command_timeouts; /* commands not answered within the timeout */
    uint64_t command_errors;   /* error replies and commands lost with the link */
    uint64_t auth_failures;
} moat_redis_counters;

/* Whether `address` is one moat_redis_link_new takes (no connection made):
 * 0, or -1 with a message. For --check-config. */
int moat_redis_link_check_address(const char *address, char *error, size_t error_size);

/* `address`: HOST:PORT, [V6]:PORT or /path/to/socket. Starts connecting on
 * the thread-default main context. A HOST that is a name is resolved at
 * each attempt by GResolver, off this thread, within ten times timeout_ms
 * (at least 1 s; a slow resolver is waited for, not cut short and asked
 * again); the connect and AUTH then get MAX(timeout_ms, 1 s); nothing here
 * blocks on DNS. NULL with `error` on a bad address. */
moat_redis_link *moat_redis_link_new(const char *address, const char *password, unsigned timeout_ms,
                                     moat_redis_state_fn on_state, void *user, char *error,
                                     size_t error_size);
void moat_redis_link_free(moat_redis_link *link);

/* Sends a command; false (and `fn` not called) when the link is not up. */
bool moat_redis_command(moat_redis_link *link, moat_redis_reply_fn fn, void *user, int argc,
                        const char **argv, const size_t *lengths);

/* A message on a channel this link subscribed to: `payload` is `length`
 * bytes (not NUL-terminated), valid only during the call. */
typedef void (*moat_redis_message_fn)(void *user, const char *channel, const char *payload,
                                      size_t length);
/* Makes the link a subscriber: SUBSCRIBE to `channels` (NULL-terminated,
 * copied) now if up and again each time it comes up; its messages go to
 * `fn`. A subscribing link takes no other command (hiredis: a separate
 * connection for SUBSCRIBE). It probes its connection every second and
 * drops it (counted as a command timeout, reconnected, subscribed again)
 * when Redis says nothing within the timeout: a silent partition is found.
 * Once, before or after the link is up. */
void moat_redis_link_subscribe(moat_redis_link *link, const char *const *channels,
                               moat_redis_message_fn fn, void *user);
/* Bulk messages received on subscribed channels. */
uint64_t moat_redis_link_messages(const moat_redis_link *link);

moat_redis_state moat_redis_link_state(const moat_redis_link *link);
const char *moat_redis_state_name(moat_redis_state state);
/* The last connection or authentication error ("" when none). */
const char *moat_redis_link_error(const moat_redis_link *link);
const moat_redis_counters *moat_redis_link_counters(const moat_redis_link *link);

#endif

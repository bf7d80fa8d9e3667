/* Forwards a request to another node and brings its answer back: a
 * WHIP/WHEP offer to the room's owner (signalling = proxy), PATCH and
 * DELETE of a resource the owner made (cluster_resources.c), cascade link
 * requests. libsoup's client on the control thread, Moat's own timeout, no
 * redirects followed, the answer's body bounded, at most
 * MOAT_CLUSTER_PROXY_MAX_IN_FLIGHT forwards at once. Control thread only. */
#ifndef MOAT_CLUSTER_PROXY_H
#define MOAT_CLUSTER_PROXY_H

#include "http/http_message.h"

#include <stdint.h>

typedef struct moat_cluster_proxy moat_cluster_proxy;

/* Answers over this size are refused (502 owner_answer_too_large): one
 * whose Content-Length says so as soon as its headers are in, any other
 * once its body passes it (read 16 KiB at a time; never more than this
 * and one chunk held); the connection is then dropped unread. The
 * forward's timeout (504 owner_timeout) covers the body too. */
#define MOAT_CLUSTER_PROXY_MAX_ANSWER (256 * 1024)
/* Forwards in flight at most; more are answered 503 forwards_busy at once. */
#define MOAT_CLUSTER_PROXY_MAX_IN_FLIGHT 512

moat_cluster_proxy *moat_cluster_proxy_new(unsigned timeout_ms);
/* Cancels forwards in flight: each is answered (502) before this returns. */
void moat_cluster_proxy_free(moat_cluster_proxy *proxy);

/* Called exactly once with the owner's answer or a 502/504 of our own; the
 * callee takes the response's contents. */
typedef void (*moat_cluster_proxy_done_fn)(void *user, moat_http_response *response);
/* Sends `request` (its method, POST when none; its body with its
 * Content-Type; Authorization and If-Match kept) to `url` with
 * X-Moat-Forwarded: `token` and X-Forwarded-For: the request's peer. */
void moat_cluster_proxy_forward(moat_cluster_proxy *proxy, const char *url,
                                const moat_http_request *request, const char *token,
                                moat_cluster_proxy_done_fn done, void *user);
uint64_t moat_cluster_proxy_failures(const moat_cluster_proxy *proxy);
/* Forwards refused because MOAT_CLUSTER_PROXY_MAX_IN_FLIGHT were in flight. */
uint64_t moat_cluster_proxy_busy(const moat_cluster_proxy *proxy);

#endif

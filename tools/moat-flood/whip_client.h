/* The HTTP half of WHIP (RFC 9725) on libsoup's synchronous API: POST an
 * offer, read the answer and the resource's Location, DELETE the resource.
 * One thread uses a client (each request blocks it, within its deadline). */
#ifndef WHIP_CLIENT_H
#define WHIP_CLIENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

typedef struct whip_client whip_client;

/* token: "Authorization: Bearer <token>" on every request, or NULL.
 * timeout_s bounds each request as a whole (connecting, sending, the
 * answer's headers and body, however slowly they come); an answer's body is
 * read to a bound (an SDP answer 64 KiB, a PATCH's or DELETE's or an error's
 * 4 KiB: more is an error, or for an error status ignored). signals: the
 * count the tool's SIGINT/SIGTERM handler raises, or NULL: a request in
 * flight when it changes ends at once ("interrupted"), and none is sent
 * after a second signal. NULL on allocation failure. */
whip_client *whip_client_new(const char *token, unsigned timeout_s,
                             const volatile sig_atomic_t *signals);
void whip_client_free(whip_client *c);

/* Redirects are not followed (a 3xx is an error): every URL the tool
 * contacts has passed the target policy. */

/* POSTs offer to url. On 201 Created returns 0 with *answer (the SDP) and
 * *resource_url (Location resolved against url), both g_malloc'd; a
 * Location on another origin than url's (scheme, host, port) is an error
 * and not used, as PATCH and DELETE carry the token. A 429 or
 * 503 carrying Retry-After is retried after that wait (each wait at most
 * WHIP_RETRY_MAX_WAIT_S, all of them at most WHIP_RETRY_TOTAL_S). Otherwise
 * -1 with a message that names the status and the body's first line (every
 * message of this client is printable ASCII: what the server said, with
 * its control and non-ASCII bytes replaced, tool_text.h). May
 * block the calling thread while it waits (a signal ends the wait).
 * setup_deadline_us: 0, or the caller's setup deadline (CLOCK_MONOTONIC
 * microseconds: flood_now_us, g_get_monotonic_time) that the POST, its
 * waits and its retries never run past: each exchange ends there, a
 * Retry-After that would end at or after it is not waited for, and the
 * message then says "setup timeout". */
#define WHIP_RETRY_MAX_WAIT_S 5
#define WHIP_RETRY_TOTAL_S    30
int whip_client_post_offer(whip_client *c, const char *url, const char *offer,
                           int64_t setup_deadline_us, char **answer, char **resource_url,
                           char *error, size_t error_size);

/* An ICE restart (RFC 9725 §4.3.2): PATCHes the resource with an
 * application/trickle-ice-sdpfrag fragment (If-Match: *). On 200 returns 0
 * with *answer, the gateway's fragment (g_malloc'd); -1 with a message
 * otherwise. */
int whip_client_patch_ice(whip_client *c, const char *resource_url, const char *fragment,
                          char **answer, char *error, size_t error_size);

/* DELETEs a resource. 0 on a 2xx status, -1 with a message otherwise. A
 * DELETE that ran out of time or was interrupted by a signal ends the
 * client's requests: the hang-up of further sessions is not sent (they end
 * at the gateway's timeouts). */
int whip_client_delete(whip_client *c, const char *resource_url, char *error, size_t error_size);

#endif

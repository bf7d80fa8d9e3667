/* The HTTP half of WHIP (RFC 9725) on libsoup's synchronous API: POST the
 * offer (retrying 429/503 after Retry-After), read the answer and Location,
 * PATCH for an ICE restart, DELETE the resource; every exchange bounded by
 * http_guard.h. */
#include "whip_client.h"
#include "http_guard.h"
#include "tool_text.h"
#include "whip_address.h"

#include <glib.h>
#include <libsoup/soup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An SDP answer's body at most; a PATCH's answer (an SDP fragment) and a
 * DELETE's at most HTTP_GUARD_ERROR_BODY_LIMIT. */
#define ANSWER_LIMIT   65536
#define FRAGMENT_LIMIT HTTP_GUARD_ERROR_BODY_LIMIT

struct whip_client {
    SoupSession *session;
    char *authorization; /* "Bearer ..." or NULL */
    http_guard guard;
};

whip_client *whip_client_new(const char *token, unsigned timeout_s,
                             const volatile sig_atomic_t *signals)
{
    whip_client *c = g_new0(whip_client, 1);
    c->guard = (http_guard){.timeout_s = timeout_s, .signals = signals};
    c->session = soup_session_new_with_options("timeout", timeout_s, "idle-timeout", timeout_s,
                                               "user-agent", "moat-flood/" MOAT_VERSION, NULL);
    if (c->session == NULL) {
        g_free(c);
        return NULL;
    }
    if (token != NULL && token[0] != '\0')
        c->authorization = g_strdup_printf("Bearer %s", token);
    return c;
}

void whip_client_free(whip_client *c)
{
    if (c == NULL)
        return;
    g_object_unref(c->session);
    g_free(c->authorization);
    g_free(c);
}

/* The first line of a body, for error messages (JSON errors fit on one),
 * printable ASCII only (tool_text.h). */
static void first_line(GBytes *body, char *out, size_t size)
{
    out[0] = '\0';
    if (body == NULL)
        return;
    gsize length = 0;
    const char *data = g_bytes_get_data(body, &length);
    size_t n = 0;
    while (n < length && n + 1 < size && data[n] != '\n' && data[n] != '\r' && data[n] != '\0')
        n++;
    memcpy(out, data, n);
    out[n] = '\0';
    tool_text_printable(out);
}

/* Sends msg; 0 with *answer (its body at most limit bytes, over_limit when
 * a 2xx body was longer), or -1 with error filled. */
static int exchange(whip_client *c, SoupMessage *msg, size_t limit, http_answer *answer,
                    char *error, size_t error_size)
{
    if (c->authorization != NULL)
        soup_message_headers_replace(soup_message_get_request_headers(msg), "Authorization",
                                     c->authorization);
    /* A redirect could point anywhere: the target policy checks the URLs
     * given, so none is followed. */
    soup_message_add_flags(msg, SOUP_MESSAGE_NO_REDIRECT);
    return http_guard_exchange(&c->guard, c->session, msg, limit, answer, error, error_size);
}

/* A refusal a gateway asks us to retry (429 Too Many Requests, 503 with
 * Retry-After, RFC 9110 §10.2.3): the seconds to wait, or -1 when not one. */
static int retry_after_s(SoupMessage *msg)
{
    guint status = soup_message_get_status(msg);
    if (status != 429 && status != 503)
        return -1;
    const char *value =
        soup_message_headers_get_one(soup_message_get_response_headers(msg), "Retry-After");
    if (value == NULL)
        return -1;
    char *end = NULL;
    long seconds = strtol(value, &end, 10);
    if (end == value || seconds < 0)
        return -1;
    return seconds > WHIP_RETRY_MAX_WAIT_S ? WHIP_RETRY_MAX_WAIT_S : (int)seconds;
}

/* A 201's Location resolved against url into *resource_url, when it is on
 * url's origin: 0, or -1 with a message. */
static int take_location(SoupMessage *msg, const char *url, char **resource_url, char *error,
                         size_t error_size)
{
    const char *location =
        soup_message_headers_get_one(soup_message_get_response_headers(msg), "Location");
    if (location == NULL) {
        snprintf(error, error_size, "WHIP POST %s: 201 without a Location header", url);
        return -1;
    }
    for (const unsigned char *p = (const unsigned char *)location; *p; p++) {
        if (*p <= 0x20 || *p >= 0x7f) {
            snprintf(error, error_size, "WHIP POST %s: a Location that is not a URL", url);
            return -1;
        }
    }
    GError *resolve_error = NULL;
    char *resolved = g_uri_resolve_relative(url, location, G_URI_FLAGS_NONE, &resolve_error);
    if (resolved == NULL) {
        snprintf(error, error_size, "WHIP POST %s: bad Location %s: %s", url, location,
                 resolve_error->message);
        g_error_free(resolve_error);
        return -1;
    }
    /* DELETE and PATCH carry the bearer token: never to another origin
     * (another host or port, or http after https). */
    if (!whip_same_origin(url, resolved)) {
        snprintf(error, error_size,
                 "WHIP POST %s: Location %s is not on the WHIP URL's origin (scheme, host and "
                 "port): not used",
                 url, resolved);
        g_free(resolved);
        return -1;
    }
    *resource_url = resolved;
    return 0;
}

static int post_offer_once(whip_client *c, const char *url, const char *offer, char **answer,
                           char **resource_url, int *retry_s, char *error, size_t error_size)
{
    *retry_s = -1;
    SoupMessage *msg = soup_message_new("POST", url);
    if (msg == NULL) {
        snprintf(error, error_size, "bad WHIP URL %s", url);
        return -1;
    }
    GBytes *request = g_bytes_new(offer, strlen(offer));
    soup_message_set_request_body_from_bytes(msg, "application/sdp", request);
    g_bytes_unref(request);
    http_answer reply;
    int result = exchange(c, msg, ANSWER_LIMIT, &reply, error, error_size);
    if (result == 0) {
        char line[200];
        first_line(reply.body, line, sizeof line);
        result = -1;
        if (reply.status != 201) {
            *retry_s = retry_after_s(msg);
            snprintf(error, error_size, "WHIP POST %s: HTTP %u %s", url, reply.status, line);
        } else if (reply.over_limit) {
            snprintf(error, error_size, "WHIP POST %s: an answer over %d bytes", url, ANSWER_LIMIT);
        } else if (take_location(msg, url, resource_url, error, error_size) == 0) {
            gsize length = 0;
            const char *data = g_bytes_get_data(reply.body, &length);
            *answer = g_strndup(data, length);
            result = 0;
        }
        g_bytes_unref(reply.body);
    }
    g_object_unref(msg);
    return result;
}

/* Whether a Retry-After of wait_s may be waited for: within the total and,
 * with a setup deadline, ending before it (else a note joins the message). */
static bool may_retry(const whip_client *c, int waited_s, int wait_s, char *error,
                      size_t error_size)
{
    if (waited_s >= WHIP_RETRY_TOTAL_S)
        return false;
    gint64 deadline = c->guard.setup_deadline_us;
    if (deadline == 0 || g_get_monotonic_time() + (gint64)wait_s * G_USEC_PER_SEC < deadline)
        return true;
    size_t used = strlen(error);
    if (used < error_size)
        snprintf(error + used, error_size - used,
                 "; setup timeout (Retry-After %d s ends past the setup deadline)", wait_s);
    return false;
}

/* The retry loop under the guard's setup deadline (whip_client_post_offer). */
static int post_offer_retrying(whip_client *c, const char *url, const char *offer, char **answer,
                               char **resource_url, char *error, size_t error_size)
{
    /* A gateway's admission control (per-source offer rate, pending-session
     * cap) refuses with Retry-After: a load tool paces its setup to it
     * instead of failing the session, within a bounded total wait (which a
     * signal or the setup deadline cuts short). */
    int waited_s = 0;
    for (;;) {
        int retry_s = -1;
        if (post_offer_once(c, url, offer, answer, resource_url, &retry_s, error, error_size) == 0)
            return 0;
        int wait_s = retry_s > 0 ? retry_s : 1;
        if (retry_s < 0 || !may_retry(c, waited_s, wait_s, error, error_size))
            return -1;
        if (http_guard_sleep(&c->guard, (unsigned)wait_s) != 0)
            return -1;
        waited_s += wait_s;
    }
}

int whip_client_post_offer(whip_client *c, const char *url, const char *offer,
                           int64_t setup_deadline_us, char **answer, char **resource_url,
                           char *error, size_t error_size)
{
    c->guard.setup_deadline_us = setup_deadline_us;
    int result = post_offer_retrying(c, url, offer, answer, resource_url, error, error_size);
    /* PATCH and DELETE (a hang-up after the setup) have their own deadline only. */
    c->guard.setup_deadline_us = 0;
    /* What the server said (the status line's text, Location) is in the
     * message: never a byte a terminal would act on. */
    if (result != 0)
        tool_text_printable(error);
    return result;
}

int whip_client_delete(whip_client *c, const char *resource_url, char *error, size_t error_size)
{
    SoupMessage *msg = soup_message_new("DELETE", resource_url);
    if (msg == NULL) {
        snprintf(error, error_size, "bad resource URL %s", resource_url);
        tool_text_printable(error);
        return -1;
    }
    http_answer reply;
    int result = exchange(c, msg, FRAGMENT_LIMIT, &reply, error, error_size);
    /* A server that held one hang-up to its deadline, or whose hang-up a
     * signal cut short, is not asked for the others (N sessions would wait
     * N deadlines). */
    if (result != 0 && c->guard.last_cut)
        c->guard.gave_up = true;
    if (result == 0) {
        if (reply.status < 200 || reply.status >= 300) {
            char line[200];
            first_line(reply.body, line, sizeof line);
            snprintf(error, error_size, "WHIP DELETE %s: HTTP %u %s", resource_url, reply.status,
                     line);
            result = -1;
        }
        g_bytes_unref(reply.body);
    }
    g_object_unref(msg);
    if (result != 0)
        tool_text_printable(error);
    return result;
}

int whip_client_patch_ice(whip_client *c, const char *resource_url, const char *fragment,
                          char **answer, char *error, size_t error_size)
{
    SoupMessage *msg = soup_message_new("PATCH", resource_url);
    if (msg == NULL) {
        snprintf(error, error_size, "bad resource URL %s", resource_url);
        tool_text_printable(error);
        return -1;
    }
    GBytes *request = g_bytes_new(fragment, strlen(fragment));
    soup_message_set_request_body_from_bytes(msg, "application/trickle-ice-sdpfrag", request);
    g_bytes_unref(request);
    soup_message_headers_replace(soup_message_get_request_headers(msg), "If-Match", "*");
    http_answer reply;
    int result = exchange(c, msg, FRAGMENT_LIMIT, &reply, error, error_size);
    if (result == 0) {
        gsize length = 0;
        const char *data = g_bytes_get_data(reply.body, &length);
        result = -1;
        if (reply.status != 200) {
            char line[200];
            first_line(reply.body, line, sizeof line);
            snprintf(error, error_size, "WHIP PATCH %s: HTTP %u %s", resource_url, reply.status,
                     line);
        } else if (reply.over_limit) {
            snprintf(error, error_size, "WHIP PATCH %s: an answer over %d bytes", resource_url,
                     FRAGMENT_LIMIT);
        } else {
            *answer = g_strndup(data, length);
            result = 0;
        }
        g_bytes_unref(reply.body);
    }
    g_object_unref(msg);
    if (result != 0)
        tool_text_printable(error);
    return result;
}

/* The HTTP half of WHIP (RFC 9725) on libsoup's synchronous API: POST the
 * offer (retrying 429/503 after Retry-After), read the answer and Location,
 * PATCH for an ICE restart, DELETE the resource. */
#include "whip_client.h"

#include <glib.h>
#include <libsoup/soup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct whip_client {
    SoupSession *session;
    char *authorization; /* "Bearer ..." or NULL */
};

whip_client *whip_client_new(const char *token, unsigned timeout_s)
{
    whip_client *c = g_new0(whip_client, 1);
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

/* The first line of a body, for error messages (JSON errors fit on one). */
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
}

/* Sends msg; returns the body (or NULL with error filled). */
static GBytes *send(whip_client *c, SoupMessage *msg, char *error, size_t error_size)
{
    if (c->authorization != NULL)
        soup_message_headers_replace(soup_message_get_request_headers(msg), "Authorization",
                                     c->authorization);
    /* A redirect could point anywhere: the target policy checks the URLs
     * given, so none is followed. */
    soup_message_add_flags(msg, SOUP_MESSAGE_NO_REDIRECT);
    GError *send_error = NULL;
    GBytes *body = soup_session_send_and_read(c->session, msg, NULL, &send_error);
    if (body == NULL) {
        char *uri = g_uri_to_string(soup_message_get_uri(msg));
        snprintf(error, error_size, "%s %s: %s", soup_message_get_method(msg), uri,
                 send_error->message);
        g_free(uri);
        g_error_free(send_error);
    }
    return body;
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
    GBytes *body = send(c, msg, error, error_size);
    int result = -1;
    if (body != NULL) {
        guint status = soup_message_get_status(msg);
        const char *location =
            soup_message_headers_get_one(soup_message_get_response_headers(msg), "Location");
        char line[200];
        first_line(body, line, sizeof line);
        if (status != 201) {
            *retry_s = retry_after_s(msg);
            snprintf(error, error_size, "WHIP POST %s: HTTP %u %s", url, status, line);
        } else if (location == NULL) {
            snprintf(error, error_size, "WHIP POST %s: 201 without a Location header", url);
        } else {
            GError *resolve_error = NULL;
            char *resolved =
                g_uri_resolve_relative(url, location, G_URI_FLAGS_NONE, &resolve_error);
            if (resolved == NULL) {
                snprintf(error, error_size, "WHIP POST %s: bad Location %s: %s", url, location,
                         resolve_error->message);
                g_error_free(resolve_error);
            } else {
                gsize length = 0;
                const char *data = g_bytes_get_data(body, &length);
                *answer = g_strndup(data, length);
                *resource_url = resolved;
                result = 0;
            }
        }
        g_bytes_unref(body);
    }
    g_object_unref(msg);
    return result;
}

int whip_client_post_offer(whip_client *c, const char *url, const char *offer, char **answer,
                           char **resource_url, char *error, size_t error_size)
{
    /* A gateway's admission control (per-source offer rate, pending-session
     * cap) refuses with Retry-After: a load tool paces its setup to it
     * instead of failing the session, within a bounded total wait. */
    int waited_s = 0;
    for (;;) {
        int retry_s = -1;
        if (post_offer_once(c, url, offer, answer, resource_url, &retry_s, error, error_size) == 0)
            return 0;
        if (retry_s < 0 || waited_s >= WHIP_RETRY_TOTAL_S)
            return -1;
        int wait_s = retry_s > 0 ? retry_s : 1;
        g_usleep((gulong)wait_s * G_USEC_PER_SEC);
        waited_s += wait_s;
    }
}

int whip_client_delete(whip_client *c, const char *resource_url, char *error, size_t error_size)
{
    SoupMessage *msg = soup_message_new("DELETE", resource_url);
    if (msg == NULL) {
        snprintf(error, error_size, "bad resource URL %s", resource_url);
        return -1;
    }
    GBytes *body = send(c, msg, error, error_size);
    int result = -1;
    if (body != NULL) {
        guint status = soup_message_get_status(msg);
        if (status >= 200 && status < 300) {
            result = 0;
        } else {
            char line[200];
            first_line(body, line, sizeof line);
            snprintf(error, error_size, "WHIP DELETE %s: HTTP %u %s", resource_url, status, line);
        }
        g_bytes_unref(body);
    }
    g_object_unref(msg);
    return result;
}

int whip_client_patch_ice(whip_client *c, const char *resource_url, const char *fragment,
                          char **answer, char *error, size_t error_size)
{
    SoupMessage *msg = soup_message_new("PATCH", resource_url);
    if (msg == NULL) {
        snprintf(error, error_size, "bad resource URL %s", resource_url);
        return -1;
    }
    GBytes *request = g_bytes_new(fragment, strlen(fragment));
    soup_message_set_request_body_from_bytes(msg, "application/trickle-ice-sdpfrag", request);
    g_bytes_unref(request);
    soup_message_headers_replace(soup_message_get_request_headers(msg), "If-Match", "*");
    GBytes *body = send(c, msg, error, error_size);
    int result = -1;
    if (body != NULL) {
        guint status = soup_message_get_status(msg);
        gsize length = 0;
        const char *data = g_bytes_get_data(body, &length);
        if (status == 200) {
            *answer = g_strndup(data, length);
            result = 0;
        } else {
            char line[200];
            first_line(body, line, sizeof line);
            snprintf(error, error_size, "WHIP PATCH %s: HTTP %u %s", resource_url, status, line);
        }
        g_bytes_unref(body);
    }
    g_object_unref(msg);
    return result;
}

#include "whip_client.h"

#include <glib.h>
#include <libsoup/soup.h>
#include <stdio.h>
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

int whip_client_post_offer(whip_client *c, const char *url, const char *offer, char **answer,
                           char **resource_url, char *error, size_t error_size)
{
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

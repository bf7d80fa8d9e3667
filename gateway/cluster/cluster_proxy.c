/* Owns forwarded offers (cluster_proxy.h). */
#include "cluster/cluster_proxy.h"

#include "base/log.h"

#include <libsoup/soup.h>
#include <stdio.h>
#include <string.h>

struct moat_cluster_proxy {
    SoupSession *session;
    unsigned timeout_ms;
    GList *in_flight;
    unsigned n_in_flight;
    uint64_t failures;
    uint64_t busy;
};

/* The answer's body is read this much at a time. */
#define READ_CHUNK 16384

typedef struct {
    moat_cluster_proxy *proxy;
    SoupMessage *message;
    GCancellable *cancellable;
    guint timer; /* the forward's deadline: headers and body */
    bool timed_out;
    GInputStream *body_stream; /* once the owner's headers are in */
    GByteArray *body;          /* at most MOAT_CLUSTER_PROXY_MAX_ANSWER bytes */
    char chunk[READ_CHUNK];
    moat_cluster_proxy_done_fn done;
    void *user;
} forward;

/* Request headers passed on to the owner (Content-Type goes with the body). */
static const char *const request_headers[] = {"Authorization", "If-Match"};

/* Answer headers passed back to the client (WHIP's own). */
static const char *const answer_headers[] = {"Location", "ETag", "Link", "Accept-Patch",
                                             "Retry-After"};

moat_cluster_proxy *moat_cluster_proxy_new(unsigned timeout_ms)
{
    moat_cluster_proxy *proxy = g_new0(moat_cluster_proxy, 1);
    proxy->timeout_ms = timeout_ms;
    proxy->session = soup_session_new_with_options(
        "user-agent", "moat-cluster/" MOAT_VERSION, "max-conns", 64, "max-conns-per-host", 16,
        "timeout", (guint)(timeout_ms / 1000 + 1), "idle-timeout", 30, NULL);
    return proxy;
}

static void finish(forward *job, moat_http_response *response)
{
    moat_cluster_proxy *proxy = job->proxy;
    proxy->in_flight = g_list_remove(proxy->in_flight, job);
    proxy->n_in_flight--;
    if (job->timer)
        g_source_remove(job->timer);
    if (response->status >= 500 && response->status != 503)
        proxy->failures++;
    if (job->body_stream) {
        /* Never reads what is left: libsoup drops the connection instead. */
        g_input_stream_close(job->body_stream, NULL, NULL);
        g_object_unref(job->body_stream);
    }
    if (job->body)
        g_byte_array_unref(job->body);
    job->done(job->user, response);
    moat_http_response_clear(response);
    g_object_unref(job->message);
    g_object_unref(job->cancellable);
    g_free(job);
}

static const char *static_content_type(const char *type)
{
    if (!type)
        return NULL;
    if (g_ascii_strncasecmp(type, "application/sdp", 15) == 0)
        return "application/sdp";
    if (g_ascii_strncasecmp(type, "application/json", 16) == 0)
        return "application/json";
    if (g_ascii_strncasecmp(type, "application/trickle-ice-sdpfrag", 31) == 0)
        return "application/trickle-ice-sdpfrag";
    return "application/octet-stream";
}

/* A failed send or read: 504 past the deadline, else 502. */
static void fail(forward *job, GError *error)
{
    moat_http_response response = {0};
    if (job->timed_out)
        moat_http_response_error(&response, 504, "owner_timeout",
                                 "the room's owner did not answer in time");
    else
        moat_http_response_error(&response, 502, "owner_unreachable",
                                 "the room's owner could not be reached: %s",
                                 error ? error->message : "?");
    finish(job, &response);
}

static void too_large(forward *job, const char *what)
{
    moat_http_response response = {0};
    moat_http_response_error(&response, 502, "owner_answer_too_large",
                             "the room's owner answered with %s (at most %d bytes taken)", what,
                             MOAT_CLUSTER_PROXY_MAX_ANSWER);
    finish(job, &response);
}

/* The whole body is in: the owner's status, WHIP headers and body. */
static void answer_complete(forward *job)
{
    moat_http_response response = {0};
    SoupMessageHeaders *headers = soup_message_get_response_headers(job->message);
    for (size_t i = 0; i < G_N_ELEMENTS(answer_headers); i++) {
        const char *value = soup_message_headers_get_one(headers, answer_headers[i]);
        if (value)
            moat_http_response_header(&response, answer_headers[i], value);
    }
    const char *type = soup_message_headers_get_content_type(headers, NULL);
    size_t length = job->body->len;
    char *bytes = (char *)g_byte_array_free(job->body, FALSE);
    job->body = NULL;
    if (!length)
        g_clear_pointer(&bytes, g_free);
    moat_http_response_set(&response, soup_message_get_status(job->message),
                           length ? static_content_type(type) : NULL, bytes, length);
    finish(job, &response);
}

static void read_more(forward *job);

static void body_read(GObject *source, GAsyncResult *result, gpointer data)
{
    forward *job = data;
    GError *error = NULL;
    gssize n = g_input_stream_read_finish(G_INPUT_STREAM(source), result, &error);
    if (n < 0) {
        fail(job, error);
        g_clear_error(&error);
        return;
    }
    if (n == 0) {
        answer_complete(job);
        return;
    }
    if (job->body->len + (size_t)n > MOAT_CLUSTER_PROXY_MAX_ANSWER) {
        too_large(job, "a body over the limit");
        return;
    }
    g_byte_array_append(job->body, (const guint8 *)job->chunk, (guint)n);
    read_more(job);
}

/* One more chunk, into the chunk buffer (the body holds at most the
 * limit; a chunk that would pass it ends the read). Always a whole chunk:
 * libsoup's chunked decoder fails a read of 2 bytes or less at a chunk
 * boundary without an error, and its task never returns. The deadline's
 * cancellable covers every read. */
static void read_more(forward *job)
{
    g_input_stream_read_async(job->body_stream, job->chunk, sizeof job->chunk, G_PRIORITY_DEFAULT,
                              job->cancellable, body_read, job);
}

/* The owner's headers are in: a declared length over the limit is refused
 * at once, any other body read in bounded chunks. */
static void answered(GObject *source, GAsyncResult *result, gpointer data)
{
    forward *job = data;
    GError *error = NULL;
    job->body_stream = soup_session_send_finish(SOUP_SESSION(source), result, &error);
    if (!job->body_stream) {
        fail(job, error);
        g_clear_error(&error);
        return;
    }
    SoupMessageHeaders *headers = soup_message_get_response_headers(job->message);
    if (soup_message_headers_get_encoding(headers) == SOUP_ENCODING_CONTENT_LENGTH &&
        soup_message_headers_get_content_length(headers) > MOAT_CLUSTER_PROXY_MAX_ANSWER) {
        char what[64];
        snprintf(what, sizeof what, "a Content-Length of %" G_GINT64_FORMAT " bytes",
                 (gint64)soup_message_headers_get_content_length(headers));
        too_large(job, what);
        return;
    }
    job->body = g_byte_array_new();
    read_more(job);
}

static gboolean timed_out(gpointer data)
{
    forward *job = data;
    job->timer = 0;
    job->timed_out = true;
    g_cancellable_cancel(job->cancellable);
    return G_SOURCE_REMOVE;
}

/* Answers `done` at once with an error of our own. */
static void refuse(moat_cluster_proxy *proxy, unsigned status, const char *code, const char *detail,
                   moat_cluster_proxy_done_fn done, void *user)
{
    moat_http_response response = {0};
    if (status == 503)
        moat_http_response_header(&response, "Retry-After", "1");
    moat_http_response_error(&response, status, code, "%s", detail);
    done(user, &response);
    moat_http_response_clear(&response);
}

void moat_cluster_proxy_forward(moat_cluster_proxy *proxy, const char *url,
                                const moat_http_request *request, const char *token,
                                moat_cluster_proxy_done_fn done, void *user)
{
    if (proxy->n_in_flight >= MOAT_CLUSTER_PROXY_MAX_IN_FLIGHT) {
        proxy->busy++;
        refuse(proxy, 503, "forwards_busy",
               "this node has too many requests in flight to other nodes", done, user);
        return;
    }
    const char *method = request->method && *request->method ? request->method : "POST";
    SoupMessage *message = soup_message_new(method, url);
    if (!message) {
        proxy->failures++;
        refuse(proxy, 502, "owner_unusable", "the owner's URL is invalid", done, user);
        return;
    }
    soup_message_add_flags(message, SOUP_MESSAGE_NO_REDIRECT);
    SoupMessageHeaders *headers = soup_message_get_request_headers(message);
    for (size_t i = 0; i < G_N_ELEMENTS(request_headers); i++) {
        const char *value = moat_http_request_header(request, request_headers[i]);
        if (value)
            soup_message_headers_replace(headers, request_headers[i], value);
    }
    soup_message_headers_replace(headers, "X-Moat-Forwarded", token);
    if (request->peer && *request->peer)
        soup_message_headers_replace(headers, "X-Forwarded-For", request->peer);
    if (strcmp(method, "POST") == 0 || request->body_length > 0) {
        const char *type = moat_http_request_header(request, "Content-Type");
        GBytes *body = g_bytes_new(request->body ? request->body : "", request->body_length);
        soup_message_set_request_body_from_bytes(message, type ? type : "application/sdp", body);
        g_bytes_unref(body);
    }
    forward *job = g_new0(forward, 1);
    job->proxy = proxy;
    job->message = message;
    job->cancellable = g_cancellable_new();
    job->done = done;
    job->user = user;
    job->timer = g_timeout_add(proxy->timeout_ms, timed_out, job);
    proxy->in_flight = g_list_prepend(proxy->in_flight, job);
    proxy->n_in_flight++;
    soup_session_send_async(proxy->session, message, G_PRIORITY_DEFAULT, job->cancellable, answered,
                            job);
}

void moat_cluster_proxy_free(moat_cluster_proxy *proxy)
{
    if (!proxy)
        return;
    /* Each cancelled forward completes from the main loop; answer them here. */
    while (proxy->in_flight) {
        forward *job = proxy->in_flight->data;
        g_cancellable_cancel(job->cancellable);
        while (g_list_find(proxy->in_flight, job))
            g_main_context_iteration(NULL, TRUE);
    }
    soup_session_abort(proxy->session);
    g_object_unref(proxy->session);
    g_free(proxy);
}

uint64_t moat_cluster_proxy_failures(const moat_cluster_proxy *proxy)
{
    return proxy ? proxy->failures : 0;
}

uint64_t moat_cluster_proxy_busy(const moat_cluster_proxy *proxy)
{
    return proxy ? proxy->busy : 0;
}

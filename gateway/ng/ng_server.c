/* One ng datagram in, one reply out: the cookie, the reply cache, bencode
 * and request parsing, ping, dispatch to the call layer's handlers, error
 * replies, and the counters /metrics shows. No I/O here (ng_server_socket.c
 * owns the socket), so tests and the fuzzer drive it directly. */
#include "ng/ng_server_private.h"

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static const char *const error_names[NG_ERROR_COUNT] = {
    [NG_ERROR_NO_COOKIE] = "no_cookie",
    [NG_ERROR_TOO_LARGE] = "too_large",
    [NG_ERROR_NOT_BENCODE] = "not_bencode",
    [NG_ERROR_NOT_DICTIONARY] = "not_dictionary",
    [NG_ERROR_BAD_REQUEST] = "bad_request",
    [NG_ERROR_UNKNOWN_COMMAND] = "unknown_command",
    [NG_ERROR_MISSING_KEY] = "missing_key",
    [NG_ERROR_HANDLER] = "handler_error",
    [NG_ERROR_SEND] = "send_failed",
    [NG_ERROR_OWN_SOURCE] = "own_source",
    [NG_ERROR_REPLY_TOO_LARGE] = "reply_too_large",
    [NG_ERROR_NOT_KEPT] = "reply_not_kept",
    [NG_ERROR_COOKIE_TOO_LONG] = "cookie_too_long",
};

moat_ng_server *moat_ng_server_new_detached(const moat_ng_handlers *handlers)
{
    moat_ng_server *server = g_new0(moat_ng_server, 1);
    if (handlers)
        server->handlers = *handlers;
    server->cache = moat_ng_cookie_cache_new(MOAT_NG_CACHE_ENTRIES, MOAT_NG_CACHE_BYTES,
                                             MOAT_NG_CACHE_LIFETIME_US);
    server->fd = -1;
    return server;
}

/* An error reply; the counter says why. */
static void reply_error(moat_ng_server *server, moat_bencode *reply, ng_error_reason reason,
                        const char *text)
{
    server->errors[reason]++;
    moat_bencode_set_string(reply, "result", "error");
    moat_bencode_set_string(reply, "error-reason", text);
}

static moat_ng_handler_fn handler_for(const moat_ng_handlers *handlers, moat_ng_command command)
{
    switch (command) {
    case MOAT_NG_OFFER:
        return handlers->offer;
    case MOAT_NG_ANSWER:
        return handlers->answer;
    case MOAT_NG_DELETE:
        return handlers->delete_call;
    case MOAT_NG_QUERY:
        return handlers->query;
    case MOAT_NG_LIST:
        return handlers->list;
    default:
        return NULL;
    }
}

/* A parsed request: ping here, the rest to its handler. */
static void dispatch(moat_ng_server *server, const moat_ng_request *request, moat_bencode *reply)
{
    server->requests[request->command]++;
    if (request->command == MOAT_NG_PING) {
        moat_bencode_set_string(reply, "result", "pong");
        return;
    }
    if (request->command == MOAT_NG_UNKNOWN) {
        reply_error(server, reply, NG_ERROR_UNKNOWN_COMMAND, "Unrecognized command");
        return;
    }
    char reason[160] = "";
    if (moat_ng_request_check(request, reason, sizeof reason) != 0) {
        reply_error(server, reply, NG_ERROR_MISSING_KEY, reason);
        return;
    }
    moat_ng_handler_fn handler = handler_for(&server->handlers, request->command);
    if (!handler) {
        reply_error(server, reply, NG_ERROR_UNKNOWN_COMMAND, "Unrecognized command");
        return;
    }
    handler(server->handlers.context, request, reply);
    const char *result = moat_bencode_string(moat_bencode_get(reply, "result"), NULL);
    if (!result)
        reply_error(server, reply, NG_ERROR_HANDLER, "internal error: no result");
    else if (strcmp(result, "error") == 0)
        server->errors[NG_ERROR_HANDLER]++;
}

/* The bencoded body after the cookie, answered into reply. */
static void handle_body(moat_ng_server *server, const uint8_t *body, size_t length,
                        moat_bencode *reply)
{
    char error[160] = "";
    size_t consumed = 0;
    /* Bytes after the dictionary (a trailing newline from a script) are
     * tolerated; a truncated dictionary is not. */
    moat_bencode *command = moat_bencode_parse(body, length, &consumed, error, sizeof error);
    if (!command) {
        char reason[200];
        snprintf(reason, sizeof reason, "invalid bencode: %s", error);
        reply_error(server, reply, NG_ERROR_NOT_BENCODE, reason);
        return;
    }
    if (moat_bencode_type_of(command) != MOAT_BENCODE_DICTIONARY) {
        reply_error(server, reply, NG_ERROR_NOT_DICTIONARY, "message is not a dictionary");
        moat_bencode_free(command);
        return;
    }
    moat_ng_request request;
    if (moat_ng_request_parse(command, &request, error, sizeof error) != 0)
        reply_error(server, reply, NG_ERROR_BAD_REQUEST, error);
    else
        dispatch(server, &request, reply);
    moat_ng_request_clear(&request);
    moat_bencode_free(command);
}

/* The encoded reply from `body` on would not fit a datagram (sendto:
 * EMSGSIZE, and the proxy would never hear what the command did): an
 * error reply in its place. */
static void replace_too_large(moat_ng_server *server, GByteArray *reply, guint body)
{
    g_byte_array_set_size(reply, body);
    moat_bencode *error = moat_bencode_new_dictionary();
    reply_error(server, error, NG_ERROR_REPLY_TOO_LARGE, "reply too large for a datagram");
    moat_bencode_encode(error, reply);
    moat_bencode_free(error);
}

/* A retransmission: the cached reply, or, when the cache kept only that
 * the command ran (its reply too large to keep), an error: the command is
 * not run twice. */
static void answer_retransmission(moat_ng_server *server, GBytes *cached, const uint8_t *datagram,
                                  size_t cookie_length, GByteArray *reply)
{
    server->retransmissions++;
    gsize cached_length = 0;
    const guint8 *bytes = g_bytes_get_data(cached, &cached_length);
    if (cached_length > 0) {
        g_byte_array_append(reply, bytes, (guint)cached_length);
        return;
    }
    g_byte_array_append(reply, datagram, (guint)cookie_length + 1);
    moat_bencode *error = moat_bencode_new_dictionary();
    reply_error(server, error, NG_ERROR_NOT_KEPT,
                "retransmission of a command whose reply was too large to keep; not run again");
    moat_bencode_encode(error, reply);
    moat_bencode_free(error);
}

/* A cookie over MOAT_NG_MAX_COOKIE: its reply could not be cached, so a
 * retransmission would run the command again, and it would eat into the
 * datagram the reply's SDP was sized for; an error, the command not run. */
static void refuse_long_cookie(moat_ng_server *server, const uint8_t *datagram,
                               size_t cookie_length, GByteArray *reply)
{
    char text[96];
    snprintf(text, sizeof text, "cookie too long (%zu bytes, at most %d)", cookie_length,
             MOAT_NG_MAX_COOKIE);
    g_byte_array_append(reply, datagram, (guint)cookie_length + 1);
    moat_bencode *error = moat_bencode_new_dictionary();
    reply_error(server, error, NG_ERROR_COOKIE_TOO_LONG, text);
    moat_bencode_encode(error, reply);
    moat_bencode_free(error);
}

/* Cache key: the source address (its bytes up to the port and address)
 * followed by the cookie. */
static GByteArray *cache_key(const struct sockaddr *from, socklen_t from_length,
                             const uint8_t *cookie, size_t cookie_length)
{
    GByteArray *key = g_byte_array_sized_new(64 + (guint)cookie_length);
    uint8_t family = from ? (uint8_t)from->sa_family : 0;
    g_byte_array_append(key, &family, 1);
    if (from && from->sa_family == AF_INET && from_length >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)from;
        g_byte_array_append(key, (const guint8 *)&v4->sin_port, sizeof v4->sin_port);
        g_byte_array_append(key, (const guint8 *)&v4->sin_addr, sizeof v4->sin_addr);
    } else if (from && from->sa_family == AF_INET6 && from_length >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)from;
        g_byte_array_append(key, (const guint8 *)&v6->sin6_port, sizeof v6->sin6_port);
        g_byte_array_append(key, (const guint8 *)&v6->sin6_addr, sizeof v6->sin6_addr);
    }
    g_byte_array_append(key, cookie, (guint)cookie_length);
    return key;
}

void moat_ng_server_process_from(moat_ng_server *server, const uint8_t *datagram, size_t length,
                                 const struct sockaddr *from, socklen_t from_length,
                                 GByteArray *reply)
{
    const uint8_t *space = datagram ? memchr(datagram, ' ', length) : NULL;
    if (!space || space == datagram) {
        server->errors[NG_ERROR_NO_COOKIE]++;
        return;
    }
    if (from && server->handlers.refuse_source &&
        server->handlers.refuse_source(server->handlers.context, from, from_length)) {
        server->errors[NG_ERROR_OWN_SOURCE]++;
        return;
    }
    size_t cookie_length = (size_t)(space - datagram);
    if (cookie_length > MOAT_NG_MAX_COOKIE) {
        refuse_long_cookie(server, datagram, cookie_length, reply);
        return;
    }
    int64_t now = g_get_monotonic_time();
    GByteArray *key = cache_key(from, from_length, datagram, cookie_length);
    GBytes *cached = moat_ng_cookie_cache_lookup(server->cache, key->data, key->len, now);
    if (cached) {
        answer_retransmission(server, cached, datagram, cookie_length, reply);
        g_byte_array_free(key, TRUE);
        return;
    }
    moat_bencode *answer = moat_bencode_new_dictionary();
    if (length > MOAT_NG_MAX_DATAGRAM)
        reply_error(server, answer, NG_ERROR_TOO_LARGE, "message too large");
    else
        handle_body(server, space + 1, length - cookie_length - 1, answer);
    guint start = reply->len;
    g_byte_array_append(reply, datagram, (guint)cookie_length + 1); /* the cookie and a space */
    moat_bencode_encode(answer, reply);
    moat_bencode_free(answer);
    if (reply->len - start > MOAT_NG_MAX_REPLY)
        replace_too_large(server, reply, start + (guint)cookie_length + 1);
    moat_ng_cookie_cache_insert(server->cache, key->data, key->len, reply->data + start,
                                reply->len - start, now);
    g_byte_array_free(key, TRUE);
}

void moat_ng_server_process(moat_ng_server *server, const uint8_t *datagram, size_t length,
                            GByteArray *reply)
{
    moat_ng_server_process_from(server, datagram, length, NULL, 0, reply);
}

void moat_ng_server_metrics(const moat_ng_server *server, GString *out)
{
    g_string_append(out, "# HELP moat_ng_requests_total ng control commands received (rtpengine "
                         "protocol), by command; retransmissions not included\n"
                         "# TYPE moat_ng_requests_total counter\n");
    for (int c = 0; c < NG_COMMAND_COUNT; c++)
        g_string_append_printf(
            out, "moat_ng_requests_total{command=\"%s\"} %" G_GUINT64_FORMAT "\n",
            moat_ng_command_name((moat_ng_command)c), server ? server->requests[c] : 0);
    g_string_append(out, "# HELP moat_ng_errors_total ng datagrams answered with an error (or "
                         "dropped: no_cookie, send_failed), by reason\n"
                         "# TYPE moat_ng_errors_total counter\n");
    for (int r = 0; r < NG_ERROR_COUNT; r++)
        g_string_append_printf(out, "moat_ng_errors_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
                               error_names[r], server ? server->errors[r] : 0);
    g_string_append_printf(out,
                           "# HELP moat_ng_retransmissions_total ng datagrams answered from the "
                           "reply cache (a repeated cookie)\n"
                           "# TYPE moat_ng_retransmissions_total counter\n"
                           "moat_ng_retransmissions_total %" G_GUINT64_FORMAT "\n",
                           server ? server->retransmissions : 0);
    g_string_append_printf(out,
                           "# HELP moat_ng_reply_cache_bytes What the ng reply cache holds (keys, "
                           "replies, ~160 bytes an entry; at most 16 MiB)\n"
                           "# TYPE moat_ng_reply_cache_bytes gauge\n"
                           "moat_ng_reply_cache_bytes %zu\n",
                           server ? moat_ng_cookie_cache_bytes(server->cache) : 0);
}

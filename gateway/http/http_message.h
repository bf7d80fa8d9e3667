/* HTTP requests and responses as plain structs, independent of the server
 * library: the router and every handler (WHIP, the JSON API, /metrics) work
 * on these, the SoupServer adapter (http_server.c) converts to and from the
 * wire, and the fuzz target drives the router with them directly. Every
 * error body is JSON that is valid UTF-8 whatever the request contained.
 * Control thread only; a response owns its body and header values. */
#ifndef MOAT_HTTP_MESSAGE_H
#define MOAT_HTTP_MESSAGE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_session moat_session;
typedef struct moat_worker moat_worker;

typedef struct {
    const char *method;
    const char *path; /* decoded, NUL-terminated */
    const char *body; /* may be NULL when body_length is 0 */
    size_t body_length;
    const char *peer; /* source IP address as text; NULL or "" when unknown */
    /* The named header's value (case-insensitive name; repeated headers
     * joined with ", "), or NULL when absent. */
    const char *(*header)(const void *context, const char *name);
    const void *header_context;
    const char *query; /* the raw query string without '?'; NULL when none */
} moat_http_request;

#define MOAT_HTTP_MAX_RESPONSE_HEADERS 16

/* Completes a deferred reply on the control thread: `body` (g_malloc'd JSON
 * or NULL) is taken. */
typedef void (*moat_http_done_fn)(void *done_data, unsigned status, char *body);

/* A reply that another thread computes (a plugin's message on its session's
 * worker): the transport holds the request, calls start(data, done,
 * done_data) once, and start's side calls done exactly once, on the control
 * thread. A deferred never started is freed with release(data). */
typedef struct {
    void (*start)(void *data, moat_http_done_fn done, void *done_data);
    void (*release)(void *data);
    void *data;
} moat_http_deferred;

typedef struct moat_http_response moat_http_response;
/* Completes a deferred whole reply on the control thread: status, headers,
 * body and a session to start (start_session) are taken from `response`,
 * which the callee then clears. */
typedef void (*moat_http_respond_fn)(void *respond_data, moat_http_response *response);

/* A whole reply (headers and all) computed later on the control thread: a
 * request forwarded to another node, or an offer served once a Redis reply
 * said where. The transport calls start(data, respond, respond_data) once;
 * start's side calls respond exactly once, on the control thread. Never
 * started: release(data). */
typedef struct {
    void (*start)(void *data, moat_http_respond_fn respond, void *respond_data);
    void (*release)(void *data);
    void *data;
} moat_http_deferred_reply;

typedef struct {
    const char *name; /* static */
    char *value;      /* owned */
} moat_http_header;

struct moat_http_response {
    unsigned status;          /* 0 until a handler answers */
    const char *content_type; /* static; NULL without a body */
    char *body;               /* owned (g_malloc) */
    size_t body_length;
    moat_http_header headers[MOAT_HTTP_MAX_RESPONSE_HEADERS];
    size_t n_headers;
    /* A WHIP session the reply announces: the transport sends the reply only
     * once the session's worker has started it (moat_whip_start), so a
     * client's first check never arrives before its ufrag is known. Owned by
     * the response until then; moat_http_response_clear frees it. */
    moat_session *start_session;
    moat_worker *start_worker;
    moat_http_deferred deferred;             /* start == NULL: the reply is complete */
    moat_http_deferred_reply deferred_reply; /* start == NULL: none */
};

/* The request header's value or NULL. */
const char *moat_http_request_header(const moat_http_request *request, const char *name);
/* The media type of Content-Type without parameters matches `type`
 * (case-insensitive). */
bool moat_http_request_content_type_is(const moat_http_request *request, const char *type);

/* Sets status and body (takes ownership of `body`, g_malloc'd; may be NULL). */
void moat_http_response_set(moat_http_response *response, unsigned status, const char *content_type,
                            char *body, size_t length);
/* {"error": code, "detail": detail, "status": status} as the body. */
void moat_http_response_error(moat_http_response *response, unsigned status, const char *code,
                              const char *detail_format, ...) G_GNUC_PRINTF(4, 5);
/* A 405 with the JSON error body, and `allow` (the methods the path takes,
 * "GET, HEAD") as its Allow header (RFC 9110 §15.5.6). */
void moat_http_response_not_allowed(moat_http_response *response, const char *allow,
                                    const char *detail_format, ...) G_GNUC_PRINTF(3, 4);
/* A plugin's 405 reply names the methods in its JSON body's "allow"
 * (plugin.h handle_api): set as the Allow header when it is a list of
 * method names. Nothing for other replies. */
void moat_http_response_allow_from_body(moat_http_response *response);
/* Adds or replaces a header (the value is copied). */
void moat_http_response_header(moat_http_response *response, const char *name, const char *value);
const char *moat_http_response_get_header(const moat_http_response *response, const char *name);
/* Frees what the response owns (and a session or deferred it still holds). */
void moat_http_response_clear(moat_http_response *response);

/* The value of a request's Content-Length (repeated fields joined with
 * ", "): true, with the length in `length` (may be NULL), when it is one
 * decimal number (1*DIGIT) of at most 2^63 - 1, or that number repeated in
 * a list (RFC 9110 §8.6); false for anything else (a sign, other
 * characters, an overflow, differing values, nothing), which RFC 9112 §6.3
 * makes a framing error. */
bool moat_http_content_length_parse(const char *value, uint64_t *length);

/* The JSON error body, always valid UTF-8 (never NULL; g_free it). */
char *moat_http_error_json(unsigned status, const char *code, const char *detail, size_t *length);
/* `text` made safe for JSON strings and headers of a reply: invalid UTF-8
 * replaced by U+FFFD, then cut to at most `max_bytes` bytes on a character
 * boundary. g_free it. */
char *moat_utf8_sanitize(const char *text, size_t max_bytes);

#endif

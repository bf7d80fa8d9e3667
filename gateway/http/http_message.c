/* Owns the plain request/response structs shared by the router, the handlers
 * and the SoupServer adapter, and the JSON error bodies (valid UTF-8 always). */
#include "http/http_message.h"

#include "session/session.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Details longer than this are cut (on a character boundary). */
#define MAX_DETAIL_BYTES 480

const char *moat_http_request_header(const moat_http_request *request, const char *name)
{
    return request->header ? request->header(request->header_context, name) : NULL;
}

bool moat_http_request_content_type_is(const moat_http_request *request, const char *type)
{
    const char *value = moat_http_request_header(request, "Content-Type");
    if (!value)
        return false;
    while (*value == ' ' || *value == '\t')
        value++;
    size_t length = strcspn(value, ";");
    while (length > 0 && (value[length - 1] == ' ' || value[length - 1] == '\t'))
        length--;
    return length == strlen(type) && g_ascii_strncasecmp(value, type, length) == 0;
}

void moat_http_response_set(moat_http_response *response, unsigned status, const char *content_type,
                            char *body, size_t length)
{
    g_free(response->body);
    response->status = status;
    response->content_type = body ? content_type : NULL;
    response->body = body;
    response->body_length = body ? length : 0;
}

char *moat_utf8_sanitize(const char *text, size_t max_bytes)
{
    char *valid = g_utf8_make_valid(text ? text : "", -1);
    size_t length = strlen(valid);
    if (length > max_bytes) {
        /* Valid UTF-8: a byte that is not a continuation byte starts a
         * character, so cutting just before one leaves whole characters. */
        size_t cut = max_bytes;
        while (cut > 0 && ((unsigned char)valid[cut] & 0xC0) == 0x80)
            cut--;
        valid[cut] = '\0';
    }
    return valid;
}

/* One element of a Content-Length list, [start, end): 1*DIGIT within
 * int64 (libsoup reads it into a goffset). */
static bool content_length_element(const char *start, const char *end, uint64_t *value)
{
    if (start == end)
        return false;
    uint64_t n = 0;
    for (const char *p = start; p < end; p++) {
        if (!g_ascii_isdigit(*p))
            return false;
        unsigned digit = (unsigned)(*p - '0');
        if (n > ((uint64_t)G_MAXINT64 - digit) / 10)
            return false;
        n = n * 10 + digit;
    }
    *value = n;
    return true;
}

static const char *skip_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

bool moat_http_content_length_parse(const char *value, uint64_t *length)
{
    if (!value)
        return false;
    uint64_t first = 0;
    bool seen = false;
    const char *p = value;
    for (;;) {
        const char *start = skip_blanks(p);
        const char *end = start + strcspn(start, ", \t");
        uint64_t n = 0;
        if (!content_length_element(start, end, &n) || (seen && n != first))
            return false;
        first = n;
        seen = true;
        p = skip_blanks(end);
        if (*p == '\0')
            break;
        if (*p != ',')
            return false;
        p++;
    }
    if (length)
        *length = first;
    return true;
}

char *moat_http_error_json(unsigned status, const char *code, const char *detail, size_t *length)
{
    char *safe_code = moat_utf8_sanitize(code, 64);
    char *safe_detail = moat_utf8_sanitize(detail, MAX_DETAIL_BYTES);
    json_t *object = json_pack("{s:s, s:s, s:i}", "error", safe_code, "detail", safe_detail,
                               "status", (int)status);
    char *text = object ? json_dumps(object, JSON_COMPACT) : NULL;
    json_decref(object);
    g_free(safe_code);
    g_free(safe_detail);
    /* jansson allocates with malloc, the response frees with g_free. */
    char *body =
        text ? g_strdup(text)
             : g_strdup_printf("{\"error\":\"internal\",\"detail\":\"\",\"status\":%u}", status);
    free(text);
    if (length)
        *length = strlen(body);
    return body;
}

G_GNUC_PRINTF(4, 0)
static void response_error_v(moat_http_response *response, unsigned status, const char *code,
                             const char *detail_format, va_list args)
{
    char detail[512];
    vsnprintf(detail, sizeof detail, detail_format, args);
    size_t length = 0;
    char *body = moat_http_error_json(status, code, detail, &length);
    moat_http_response_set(response, status, "application/json", body, length);
}

void moat_http_response_error(moat_http_response *response, unsigned status, const char *code,
                              const char *detail_format, ...)
{
    va_list args;
    va_start(args, detail_format);
    response_error_v(response, status, code, detail_format, args);
    va_end(args);
}

void moat_http_response_not_allowed(moat_http_response *response, const char *allow,
                                    const char *detail_format, ...)
{
    va_list args;
    va_start(args, detail_format);
    response_error_v(response, 405, "method_not_allowed", detail_format, args);
    va_end(args);
    moat_http_response_header(response, "Allow", allow);
}

/* "GET, HEAD, POST": method names (RFC 9110 tokens, upper case here)
 * separated by ", ". */
static bool method_list(const char *text)
{
    if (strlen(text) > 64)
        return false;
    for (const char *at = text;;) {
        size_t name = strspn(at, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
        if (name == 0)
            return false;
        at += name;
        if (*at == '\0')
            return true;
        if (strncmp(at, ", ", 2) != 0)
            return false;
        at += 2;
    }
}

void moat_http_response_allow_from_body(moat_http_response *response)
{
    if (response->status != 405 || !response->body)
        return;
    json_t *body = json_loadb(response->body, response->body_length, 0, NULL);
    const char *allow = json_string_value(json_object_get(body, "allow"));
    if (allow && method_list(allow))
        moat_http_response_header(response, "Allow", allow);
    json_decref(body);
}

void moat_http_response_header(moat_http_response *response, const char *name, const char *value)
{
    for (size_t i = 0; i < response->n_headers; i++) {
        if (g_ascii_strcasecmp(response->headers[i].name, name) == 0) {
            g_free(response->headers[i].value);
            response->headers[i].value = g_strdup(value);
            return;
        }
    }
    if (response->n_headers == MOAT_HTTP_MAX_RESPONSE_HEADERS)
        return;
    response->headers[response->n_headers].name = name;
    response->headers[response->n_headers].value = g_strdup(value);
    response->n_headers++;
}

const char *moat_http_response_get_header(const moat_http_response *response, const char *name)
{
    for (size_t i = 0; i < response->n_headers; i++) {
        if (g_ascii_strcasecmp(response->headers[i].name, name) == 0)
            return response->headers[i].value;
    }
    return NULL;
}

void moat_http_response_clear(moat_http_response *response)
{
    g_free(response->body);
    for (size_t i = 0; i < response->n_headers; i++)
        g_free(response->headers[i].value);
    moat_session_free(response->start_session);
    if (response->deferred.start && response->deferred.release)
        response->deferred.release(response->deferred.data);
    if (response->deferred_reply.start && response->deferred_reply.release)
        response->deferred_reply.release(response->deferred_reply.data);
    memset(response, 0, sizeof *response);
}

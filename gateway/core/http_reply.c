#include "core/http_reply.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>

void moat_http_add_cors(SoupServerMessage *message)
{
    SoupMessageHeaders *headers = soup_server_message_get_response_headers(message);
    soup_message_headers_replace(headers, "Access-Control-Allow-Origin", "*");
    soup_message_headers_replace(headers, "Access-Control-Allow-Methods",
                                 "GET, POST, PATCH, DELETE, OPTIONS");
    soup_message_headers_replace(headers, "Access-Control-Allow-Headers",
                                 "Authorization, Content-Type, If-Match");
    soup_message_headers_replace(headers, "Access-Control-Expose-Headers",
                                 "Location, ETag, Link, Accept-Patch, Accept-Post");
}

void moat_http_reply(SoupServerMessage *message, unsigned status, const char *content_type,
                     char *body, size_t length)
{
    moat_http_add_cors(message);
    soup_server_message_set_status(message, status, NULL);
    if (body)
        soup_server_message_set_response(message, content_type, SOUP_MEMORY_TAKE, body, length);
}

void moat_http_reply_error(SoupServerMessage *message, unsigned status, const char *code,
                           const char *detail_format, ...)
{
    char detail[512];
    va_list args;
    va_start(args, detail_format);
    vsnprintf(detail, sizeof detail, detail_format, args);
    va_end(args);
    json_t *object =
        json_pack("{s:s, s:s, s:i}", "error", code, "detail", detail, "status", (int)status);
    char *text = json_dumps(object, JSON_COMPACT);
    json_decref(object);
    /* jansson allocates with malloc; libsoup frees with g_free, which is free. */
    char *body = g_strdup(text);
    free(text);
    moat_http_reply(message, status, "application/json", body, strlen(body));
}

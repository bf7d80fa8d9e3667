/* Replies shared by every HTTP handler: JSON errors that say what was wrong,
 * and the CORS headers browsers need for WHIP from another origin. */
#ifndef MOAT_HTTP_REPLY_H
#define MOAT_HTTP_REPLY_H

#include <libsoup/soup.h>

/* {"error": code, "detail": detail}; status 4xx/5xx. */
void moat_http_reply_error(SoupServerMessage *message, unsigned status, const char *code,
                           const char *detail_format, ...) G_GNUC_PRINTF(4, 5);
/* Takes ownership of `body` (g_malloc'd). */
void moat_http_reply(SoupServerMessage *message, unsigned status, const char *content_type,
                     char *body, size_t length);
void moat_http_add_cors(SoupServerMessage *message);

#endif

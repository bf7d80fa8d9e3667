/* The API token when none is configured: an API that listens beyond
 * loopback never runs open. moat_api_token_prepare generates a random token
 * at start, writes it to a file only Moat's user can read (mode 0600) and
 * says where; with a loopback-only address and no token the API stays open
 * (only local users reach it). Control thread, at start-up. */
#ifndef MOAT_API_TOKEN_H
#define MOAT_API_TOKEN_H

#include "base/config.h"

#include <stdbool.h>
#include <stddef.h>

/* True when `bind` (an IP address as text) is a loopback address
 * (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104). Anything else, the wildcard
 * addresses included, is not. */
bool moat_api_token_bind_is_loopback(const char *bind);

/* Where a generated token goes by default: $XDG_RUNTIME_DIR/moat/token,
 * else "moat-token" in the working folder. g_free it. */
char *moat_api_token_default_path(void);

/* Writes `token` and a newline to `path` (its folder made 0700 when
 * missing): created with mode 0600, never through a symbolic link, and
 * refused unless it is a regular file owned by this user. 0, or -1 with a
 * message. */
int moat_api_token_write(const char *path, const char *token, char *error, size_t error_size);

/* Start-up: when config->token is empty and the API binds a non-loopback
 * address, sets config->token to a fresh random token (64 hex digits),
 * writes it to [http] token_file (or the default path) and stores that path
 * in `written` (g_free it; NULL when nothing was generated). 0, or -1 with a
 * message (the gateway must not start with an open API then). */
int moat_api_token_prepare(moat_config *config, char **written, char *error, size_t error_size);

#endif

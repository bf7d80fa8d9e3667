/* The API token when none is configured: an API that listens beyond
 * loopback never runs open. moat_api_token_generate makes a random token at
 * start, moat_api_token_write puts it in a file only Moat's user can read
 * (mode 0600) once the gateway's ports are bound, and the gateway says where; with a loopback-only
 * address and no token the API stays open (only local users reach it). Control thread, at start-up.
 */
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
 * missing): into a new 0600 file beside it, renamed over `path` once
 * complete, so a reader sees the old token or the new one, never part of
 * one. Refused when `path` exists and is not a regular file owned by this
 * user (a symbolic link is never followed). 0, or -1 with a message. */
int moat_api_token_write(const char *path, const char *token, char *error, size_t error_size);

/* Start-up, before the HTTP port is bound: when config->token is empty and
 * the API binds a non-loopback address, sets config->token to a fresh random
 * token (64 hex digits) and stores in `path` where it must be written
 * ([http] token_file, or the default path; g_free it; NULL when nothing was
 * generated). Nothing is written yet: the caller writes the file with
 * moat_api_token_write once its listeners are bound, so a start that fails
 * (its port in use by a running Moat) leaves that Moat's file alone. 0, or
 * -1 with a message (the gateway must not start with an open API then). */
int moat_api_token_generate(moat_config *config, char **path, char *error, size_t error_size);

#endif

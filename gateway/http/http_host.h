/* The Host check of /api/ and event WebSocket upgrades (DNS rebinding): a
 * browser sends the Host the page's URL named, so a page on evil.example
 * whose name an attacker re-points at the gateway's address is same-origin
 * with itself, but its requests say Host: evil.example. /api/ answers only
 * Host headers naming the gateway: localhost, the HTTP bind address, an
 * address of one of the host's interfaces, or an entry of [http]
 * server_names ("*" there turns the check off). Pure functions; the list is
 * built once at start (control thread). */
#ifndef MOAT_HTTP_HOST_H
#define MOAT_HTTP_HOST_H

#include <stdbool.h>

/* A NULL-terminated list (g_strfreev): "localhost", `bind` unless it is a
 * wildcard, every interface address when `interfaces`, and the
 * comma-separated entries of `server_names`, all lower case, IPv6
 * addresses without brackets. */
char **moat_http_host_names(const char *bind, const char *server_names, bool interfaces);

/* Whether `host` (a Host header value: name or address, an optional
 * :port, IPv6 in brackets) is in `names`. NULL or empty: false. */
bool moat_http_host_allowed(const char *host, const char *const *names);

#endif

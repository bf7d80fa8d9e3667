/* The JSON API under /api/: list sessions, inspect one, send a plugin
 * control message, hang up. */
#ifndef MOAT_SESSION_API_H
#define MOAT_SESSION_API_H

#include "core/gateway.h"

#include <libsoup/soup.h>

void moat_session_api_handle(moat_gateway *gateway, SoupServerMessage *message, const char *path);

#endif

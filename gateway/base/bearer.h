/* The one check of an HTTP bearer credential, shared by the HTTP router and
 * the events WebSocket. Any thread; no allocation. */
#ifndef MOAT_BEARER_H
#define MOAT_BEARER_H

#include <stdbool.h>

/* True when `authorization` (an Authorization header's value, or NULL) is
 * "Bearer <secret>" (scheme case-insensitive). The comparison takes the
 * same time wherever the credential first differs from the secret; an empty
 * or NULL secret matches nothing. */
bool moat_bearer_matches(const char *authorization, const char *secret);

#endif

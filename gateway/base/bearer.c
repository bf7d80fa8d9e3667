/* Owns the bearer-credential comparison (constant time over the secret). */
#include "base/bearer.h"

#include <string.h>
#include <strings.h>

bool moat_bearer_matches(const char *authorization, const char *secret)
{
    if (!secret || !*secret || !authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
        return false;
    const char *given = authorization + 7;
    size_t a = strlen(given), b = strlen(secret);
    unsigned char diff = (unsigned char)(a != b);
    for (size_t i = 0; i < b; i++)
        diff |= (unsigned char)((i < a ? given[i] : 0) ^ secret[i]);
    return diff == 0;
}

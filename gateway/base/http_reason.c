/* Owns the reason phrases libsoup lacks (http_reason.h): RFC 9110 for 421
 * and 426, RFC 6585 for 428 and 429. */
#include "base/http_reason.h"

#include <stddef.h>

const char *moat_http_reason(unsigned status)
{
    switch (status) {
    case 421:
        return "Misdirected Request";
    case 426:
        return "Upgrade Required";
    case 428:
        return "Precondition Required";
    case 429:
        return "Too Many Requests";
    default:
        return NULL;
    }
}

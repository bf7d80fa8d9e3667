/* The stable lower-case names of the SRTP+ library's status codes, for logs and API
 * errors. */
#include "srtpplus_status.h"

const char *srtpplus_status_name(int status)
{
    switch (status) {
    case SRTPPLUS_OK:
        return "ok";
    case SRTPPLUS_ERR_PARAM:
        return "param";
    case SRTPPLUS_ERR_NOMEM:
        return "nomem";
    case SRTPPLUS_ERR_CRYPTO:
        return "crypto";
    case SRTPPLUS_ERR_MALFORMED:
        return "malformed";
    case SRTPPLUS_ERR_CAPACITY:
        return "capacity";
    case SRTPPLUS_ERR_PADDING:
        return "padding";
    case SRTPPLUS_ERR_FULL:
        return "full";
    case SRTPPLUS_ERR_EXISTS:
        return "exists";
    case SRTPPLUS_ERR_NOT_FOUND:
        return "not_found";
    case SRTPPLUS_ERR_STALE:
        return "stale";
    case SRTPPLUS_ERR_RANDOM:
        return "random";
    default:
        return "unknown";
    }
}

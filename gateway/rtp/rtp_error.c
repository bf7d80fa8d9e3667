/* Names of the RTP library's result codes. */
#include "rtp/rtp_error.h"

const char *moat_rtp_strerror(int result)
{
    switch (result) {
    case MOAT_RTP_OK:
        return "ok";
    case MOAT_RTP_ERR_TRUNCATED:
        return "truncated";
    case MOAT_RTP_ERR_VERSION:
        return "bad version";
    case MOAT_RTP_ERR_CSRC:
        return "bad CSRC count";
    case MOAT_RTP_ERR_EXTENSION:
        return "bad header extension";
    case MOAT_RTP_ERR_PADDING:
        return "bad padding";
    case MOAT_RTP_ERR_LENGTH:
        return "bad RTCP length";
    case MOAT_RTP_ERR_TYPE:
        return "unexpected packet type";
    case MOAT_RTP_ERR_MALFORMED:
        return "malformed";
    case MOAT_RTP_ERR_NOT_FOUND:
        return "not found";
    case MOAT_RTP_ERR_NO_SPACE:
        return "no space";
    case MOAT_RTP_ERR_INVALID:
        return "invalid argument";
    case MOAT_RTP_ERR_RATE_LIMITED:
        return "rate limited";
    default:
        return "unknown error";
    }
}

/* Result codes shared by the RTP/RTCP parsers, builders and caches. Each
 * failure has its own code so the packet path can count drops by reason. */
#ifndef MOAT_RTP_ERROR_H
#define MOAT_RTP_ERROR_H

typedef enum {
    MOAT_RTP_OK = 0,
    MOAT_RTP_ERR_TRUNCATED = -1,    /* shorter than a header or a declared length says */
    MOAT_RTP_ERR_VERSION = -2,      /* version field is not 2 */
    MOAT_RTP_ERR_CSRC = -3,         /* CSRC list runs past the end */
    MOAT_RTP_ERR_EXTENSION = -4,    /* header extension runs past the end */
    MOAT_RTP_ERR_PADDING = -5,      /* padding count is zero or larger than the room for it */
    MOAT_RTP_ERR_LENGTH = -6,       /* RTCP length field inconsistent with the data */
    MOAT_RTP_ERR_TYPE = -7,         /* packet is not of the type the parser handles */
    MOAT_RTP_ERR_MALFORMED = -8,    /* a field inside the packet is inconsistent */
    MOAT_RTP_ERR_NOT_FOUND = -9,    /* the requested item is absent */
    MOAT_RTP_ERR_NO_SPACE = -10,    /* caller's buffer or table is too small */
    MOAT_RTP_ERR_INVALID = -11,     /* caller passed an argument out of range */
    MOAT_RTP_ERR_RATE_LIMITED = -12 /* allowed again later, not now */
} moat_rtp_result;

/* A short constant description of a moat_rtp_result, for logs and metrics. */
const char *moat_rtp_strerror(int result);

#endif

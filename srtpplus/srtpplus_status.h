/* Status codes of the SRTP+ library: every fallible call returns one. */
#ifndef SRTPPLUS_STATUS_H
#define SRTPPLUS_STATUS_H

enum srtpplus_status {
    SRTPPLUS_OK = 0,
    SRTPPLUS_ERR_PARAM = -1,     /* bad argument or configuration */
    SRTPPLUS_ERR_NOMEM = -2,     /* allocation failed */
    SRTPPLUS_ERR_CRYPTO = -3,    /* OpenSSL reported an error */
    SRTPPLUS_ERR_MALFORMED = -4, /* packet too short or its fields are inconsistent */
    SRTPPLUS_ERR_CAPACITY = -5,  /* the buffer cannot hold what must be added */
    SRTPPLUS_ERR_PADDING = -6,   /* a chain block would push the RTP padding past 255 octets */
    SRTPPLUS_ERR_FULL = -7,      /* the SSRC table is full */
    SRTPPLUS_ERR_EXISTS = -8,    /* the SSRC is already tracked */
    SRTPPLUS_ERR_NOT_FOUND = -9, /* the SSRC is not tracked */
    SRTPPLUS_ERR_STALE = -10,    /* the index is too old for the sender's chain table */
    SRTPPLUS_ERR_RANDOM = -11,   /* the random source failed */
};

/* A stable, lower-case name for logs and API errors ("ok", "param", ...). */
const char *srtpplus_status_name(int status);

#endif

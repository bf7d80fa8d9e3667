/* The two SRTP+ schemes (SRTPPLUS.md sections 3 and 4), the chain parameters and the
 * defaults the spec names. */
#ifndef SRTPPLUS_SCHEME_H
#define SRTPPLUS_SCHEME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SRTPPLUS_TAG_LEN               4
#define SRTPPLUS_CHAIN_MAX_COPIES      4
#define SRTPPLUS_CHAIN_DEFAULT_DEPTH   32
#define SRTPPLUS_CHAIN_DEFAULT_COPIES  2
#define SRTPPLUS_WINDOW_DEFAULT_BEHIND 1024
#define SRTPPLUS_WINDOW_DEFAULT_AHEAD  4096
#define SRTPPLUS_WINDOW_MAX_BEHIND     4095
#define SRTPPLUS_WINDOW_MAX_AHEAD      32768
#define SRTPPLUS_BUDGET_MIN_RATE       20 /* packets per second */
#define SRTPPLUS_RTP_INDEX_LIMIT       ((uint64_t)1 << 48)
#define SRTPPLUS_RTCP_INDEX_LIMIT      ((uint64_t)1 << 31)

enum srtpplus_scheme {
    SRTPPLUS_SCHEME_PRN,
    SRTPPLUS_SCHEME_CHAIN,
};

/* The first octet of the prn input block: which packet kind a tag belongs to. */
enum srtpplus_kind {
    SRTPPLUS_KIND_RTP = 0,
    SRTPPLUS_KIND_RTCP = 1,
};

struct srtpplus_chain_params {
    uint8_t depth;  /* D, 1..255 */
    uint8_t copies; /* r, 1..4, r <= D */
};

static inline bool srtpplus_chain_params_valid(const struct srtpplus_chain_params *params)
{
    return params && params->depth >= 1 && params->copies >= 1 &&
           params->copies <= SRTPPLUS_CHAIN_MAX_COPIES && params->copies <= params->depth;
}

/* "prn" or "chain", as in the SDP attribute. */
const char *srtpplus_scheme_name(enum srtpplus_scheme scheme);

#endif

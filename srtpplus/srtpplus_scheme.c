/* The names of the two SRTP+ schemes, prn and chain (SRTPPLUS.md sections 3 and 4). */
#include "srtpplus_scheme.h"

const char *srtpplus_scheme_name(enum srtpplus_scheme scheme)
{
    switch (scheme) {
    case SRTPPLUS_SCHEME_PRN:
        return "prn";
    case SRTPPLUS_SCHEME_CHAIN:
        return "chain";
    default:
        return "unknown";
    }
}

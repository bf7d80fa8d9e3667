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

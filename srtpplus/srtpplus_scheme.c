#include "srtpplus_scheme.h"

#include <stddef.h>

bool srtpplus_chain_params_valid(const struct srtpplus_chain_params *params)
{
    return params != NULL && params->depth >= 1 && params->copies >= 1 &&
           params->copies <= SRTPPLUS_CHAIN_MAX_COPIES && params->copies <= params->depth;
}

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

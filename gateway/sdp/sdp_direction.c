/* Media direction keywords (RFC 8866 §6.7) and how an answer mirrors them
 * (RFC 3264 §6.1). */
#include "sdp_attr.h"
#include "sdp_direction.h"

bool moat_sdp_direction_from_name(moat_sdp_span name, moat_sdp_direction *out)
{
    if (moat_sdp_span_eq(name, "sendrecv"))
        *out = MOAT_SDP_SENDRECV;
    else if (moat_sdp_span_eq(name, "sendonly"))
        *out = MOAT_SDP_SENDONLY;
    else if (moat_sdp_span_eq(name, "recvonly"))
        *out = MOAT_SDP_RECVONLY;
    else if (moat_sdp_span_eq(name, "inactive"))
        *out = MOAT_SDP_INACTIVE;
    else
        return false;
    return true;
}

const char *moat_sdp_direction_name(moat_sdp_direction direction)
{
    switch (direction) {
    case MOAT_SDP_SENDONLY:
        return "sendonly";
    case MOAT_SDP_RECVONLY:
        return "recvonly";
    case MOAT_SDP_INACTIVE:
        return "inactive";
    case MOAT_SDP_SENDRECV:
    default:
        return "sendrecv";
    }
}

moat_sdp_direction moat_sdp_direction_answer(moat_sdp_direction offered)
{
    switch (offered) {
    case MOAT_SDP_SENDONLY:
        return MOAT_SDP_RECVONLY;
    case MOAT_SDP_RECVONLY:
        return MOAT_SDP_SENDONLY;
    case MOAT_SDP_INACTIVE:
        return MOAT_SDP_INACTIVE;
    case MOAT_SDP_SENDRECV:
    default:
        return MOAT_SDP_SENDRECV;
    }
}

bool moat_sdp_direction_sends(moat_sdp_direction direction)
{
    return direction == MOAT_SDP_SENDRECV || direction == MOAT_SDP_SENDONLY;
}

bool moat_sdp_direction_receives(moat_sdp_direction direction)
{
    return direction == MOAT_SDP_SENDRECV || direction == MOAT_SDP_RECVONLY;
}

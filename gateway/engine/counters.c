/* The names of the drop reasons (counters.h). */
#include "engine/counters.h"

const char *moat_drop_reason_name(moat_drop_reason reason)
{
    static const char *const names[MOAT_DROP_REASON_COUNT] = {
        [MOAT_DROP_MALFORMED] = "malformed",
        [MOAT_DROP_UNKNOWN_TUPLE] = "unknown_tuple",
        [MOAT_DROP_STUN_AUTH] = "stun_auth",
        [MOAT_DROP_NOT_READY] = "not_ready",
        [MOAT_DROP_UNKNOWN_SSRC] = "unknown_ssrc",
        [MOAT_DROP_INDEX] = "index",
        [MOAT_DROP_TAG] = "tag",
        [MOAT_DROP_REPLAY] = "replay",
        [MOAT_DROP_BUDGET] = "budget",
        [MOAT_DROP_AUTH] = "auth",
        [MOAT_DROP_DTLS] = "dtls",
        [MOAT_DROP_ICE_PAIR] = "ice_pair",
        [MOAT_DROP_TRUNCATED] = "truncated",
        [MOAT_DROP_STUN_RATE] = "stun_rate",
        [MOAT_DROP_NACK_LIMIT] = "nack_limit",
        [MOAT_DROP_DATA_LIMIT] = "datachannel_limit",
        [MOAT_DROP_SEND_EAGAIN] = "send_eagain",
        [MOAT_DROP_SEND_ERROR] = "send_error",
        [MOAT_DROP_DATA_STALLED] = "datachannel_stalled",
        [MOAT_DROP_NACK_GONE] = "nack_gone",
        [MOAT_DROP_DATA_REFUSED] = "datachannel_refused",
        [MOAT_DROP_LOOP] = "loop",
        [MOAT_DROP_NO_CONSENT] = "no_consent",
        [MOAT_DROP_RATE_LIMIT] = "rate_limit",
        [MOAT_DROP_DATA_ENDED] = "datachannel_ended",
        [MOAT_DROP_RTCP_IGNORED] = "rtcp_ignored",
        [MOAT_DROP_PAYLOAD_TYPE] = "payload_type",
    };
    return reason < MOAT_DROP_REASON_COUNT ? names[reason] : "unknown";
}

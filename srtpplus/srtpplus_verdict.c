/* The stable names of the receiver's check verdicts and confirmation results
 * (SRTPPLUS.md section 5), for logs and test messages. */
#include "srtpplus_verdict.h"

const char *srtpplus_verdict_name(enum srtpplus_verdict verdict)
{
    switch (verdict) {
    case SRTPPLUS_PASS:
        return "pass";
    case SRTPPLUS_UNVERIFIED_BUDGET_OK:
        return "unverified_budget_ok";
    case SRTPPLUS_DROP_MALFORMED:
        return "malformed";
    case SRTPPLUS_DROP_INDEX:
        return "index";
    case SRTPPLUS_DROP_TAG:
        return "tag";
    case SRTPPLUS_DROP_REPLAY:
        return "replay";
    case SRTPPLUS_DROP_BUDGET:
        return "budget";
    default:
        return "unknown";
    }
}

const char *srtpplus_confirm_name(enum srtpplus_confirm confirm)
{
    switch (confirm) {
    case SRTPPLUS_CONFIRMED:
        return "confirmed";
    case SRTPPLUS_CONFIRMED_CHAIN_MALFORMED:
        return "chain_malformed";
    case SRTPPLUS_CONFIRM_UNKNOWN_SSRC:
        return "unknown_ssrc";
    case SRTPPLUS_CONFIRM_MALFORMED:
        return "malformed";
    default:
        return "unknown";
    }
}

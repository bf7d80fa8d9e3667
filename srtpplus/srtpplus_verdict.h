/* The named results of the receiver (SRTPPLUS.md section 5). The library only reports
 * them; the caller decides what to drop and counts them. */
#ifndef SRTPPLUS_VERDICT_H
#define SRTPPLUS_VERDICT_H

#include <stdbool.h>

/* Outcome of srtpplus_receiver_check_rtp / _rtcp, before srtp_unprotect. */
enum srtpplus_verdict {
    SRTPPLUS_PASS = 0,             /* tag verified (or not enforcing): go on to srtp_unprotect */
    SRTPPLUS_UNVERIFIED_BUDGET_OK, /* tag could not be established; a budget token was spent */
    SRTPPLUS_DROP_MALFORMED,       /* too short for SRTP(C) plus the tag */
    SRTPPLUS_DROP_INDEX,           /* index outside the plausibility window */
    SRTPPLUS_DROP_TAG,             /* expected tag known and different */
    SRTPPLUS_DROP_REPLAY,          /* index already authenticated once */
    SRTPPLUS_DROP_BUDGET,          /* tag could not be established and the budget is empty */
    SRTPPLUS_VERDICT_COUNT,
};

/* Outcome of srtpplus_receiver_confirm_rtp / _rtcp, after a successful srtp_unprotect. */
enum srtpplus_confirm {
    SRTPPLUS_CONFIRMED = 0,             /* state updated; chain tags learned and block stripped */
    SRTPPLUS_CONFIRMED_CHAIN_MALFORMED, /* state updated, but the chain block was missing or
                                          malformed: nothing learned, packet left as it was */
    SRTPPLUS_CONFIRM_UNKNOWN_SSRC,      /* SSRC not tracked: nothing recorded (a valid chain
                                           block is still stripped) */
    SRTPPLUS_CONFIRM_MALFORMED,         /* not an RTP packet, or its sequence number does not
                                           match the index given */
    SRTPPLUS_CONFIRM_COUNT,
};

static inline bool srtpplus_verdict_is_drop(enum srtpplus_verdict verdict)
{
    return verdict != SRTPPLUS_PASS && verdict != SRTPPLUS_UNVERIFIED_BUDGET_OK;
}

/* Short names for counters and metrics: "pass", "unverified_budget_ok", "malformed",
 * "index", "tag", "replay", "budget". */
const char *srtpplus_verdict_name(enum srtpplus_verdict verdict);
const char *srtpplus_confirm_name(enum srtpplus_confirm confirm);

#endif

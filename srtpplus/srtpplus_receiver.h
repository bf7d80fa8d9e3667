/* SRTP+ receiver of one transport (SRTPPLUS.md section 5), for packets that can be
 * tested without sockets. Per datagram the caller does:
 *
 *   v = srtpplus_receiver_check_rtp(rx, pkt, len, enforcing, now_ns, &chk);
 *   if (srtpplus_verdict_is_drop(v)) -> count and drop (reason srtpplus_verdict_name(v))
 *   n = chk.len; srtp_unprotect(srtp, pkt, &n)   (the tag is already excluded)
 *   on success: srtpplus_receiver_confirm_rtp(rx, pkt, &n, chk.index)
 *
 * and srtpplus_receiver_maintain(rx) between batches, which refills the precomputed prn
 * windows. Per-SSRC state is created only by srtpplus_receiver_add_ssrc (from the SDP,
 * or after a packet of a new SSRC passed srtp_unprotect), never by a packet itself.
 * Not thread-safe: one receiver belongs to one worker. The per-packet calls take valid
 * pointers (they sit on the hot path and do not test them); packet contents are never
 * trusted. */
#ifndef SRTPPLUS_RECEIVER_H
#define SRTPPLUS_RECEIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "srtpplus_profile.h"
#include "srtpplus_scheme.h"
#include "srtpplus_verdict.h"

#define SRTPPLUS_RECEIVER_MAX_SSRCS 16

struct srtpplus_receiver_config {
    enum srtpplus_scheme scheme;
    enum srtpplus_profile profile;
    struct srtpplus_chain_params chain; /* the negotiated D and r (chain only) */
    uint32_t window_behind;             /* plausibility window, 1..4095 */
    uint32_t window_ahead;              /* 1..32768 */
    uint32_t budget_rate;               /* verification budget, packets per second */
    uint32_t budget_burst;
};

/* What check found out about a packet, for srtp_unprotect and confirm. */
struct srtpplus_check {
    size_t len;     /* packet length without the SRTP+ tag */
    uint64_t index; /* estimated SRTP index (RTP) or SRTCP index (RTCP) */
    uint32_t ssrc;  /* RTP SSRC, or sender SSRC of the first RTCP packet */
};

/* How much AES work the receiver did where. Verdicts and confirm outcomes are returned
 * to the caller, which counts them per transport. */
struct srtpplus_receiver_stats {
    uint64_t refill_tags; /* prn tags computed by srtpplus_receiver_maintain */
    uint64_t inline_tags; /* prn tags computed during a check (window not there) */
};

struct srtpplus_receiver;

/* Defaults of the spec: window 1024 behind / 4096 ahead, budget 20/s with a burst of
 * 20, chain D = 32, r = 2. */
void srtpplus_receiver_config_init(struct srtpplus_receiver_config *config,
                                   enum srtpplus_scheme scheme, enum srtpplus_profile profile);

int srtpplus_receiver_new(const struct srtpplus_receiver_config *config, const uint8_t *master_key,
                          size_t key_len, const uint8_t *master_salt, size_t salt_len,
                          struct srtpplus_receiver **out);
void srtpplus_receiver_free(struct srtpplus_receiver *rx);

/* roc: the roll-over counter to assume until the SSRC's first packet is authenticated. */
int srtpplus_receiver_add_ssrc(struct srtpplus_receiver *rx, uint32_t ssrc, uint32_t roc);
int srtpplus_receiver_remove_ssrc(struct srtpplus_receiver *rx, uint32_t ssrc);

/* The verification budget has one token bucket per class of unverifiable
 * packet, so a flood of one class cannot starve the others: RTP of known
 * SSRCs, SRTCP (its own, so real NACK/PLI/SR survive a forged SRTCP flood),
 * and RTP of SSRCs the receiver does not know. A packet of an SSRC not
 * tracked whose tag is tag_prn of its index (RTP at ROC 0; any SRTCP)
 * passes by it and spends nothing: a genuine new sender, or a receive-only
 * leg's RTCP SSRC, never competes with forgeries for these tokens. */
enum srtpplus_budget_class {
    SRTPPLUS_BUDGET_RTP = 0,
    SRTPPLUS_BUDGET_RTCP,
    SRTPPLUS_BUDGET_UNKNOWN_SSRC,
    SRTPPLUS_BUDGET_CLASSES
};

/* Sets every class's budget, e.g. to srtpplus_budget_default_rate(learned rate). */
void srtpplus_receiver_set_budget(struct srtpplus_receiver *rx, uint32_t rate_per_s,
                                  uint32_t burst);
/* Sets one class's budget (its bucket starts full again). */
void srtpplus_receiver_set_class_budget(struct srtpplus_receiver *rx,
                                        enum srtpplus_budget_class budget_class,
                                        uint32_t rate_per_s, uint32_t burst);
uint32_t srtpplus_receiver_class_budget(const struct srtpplus_receiver *rx,
                                        enum srtpplus_budget_class budget_class);

/* Rules 1-3 on an SRTP packet with its SRTP+ tag; never modifies the packet. With
 * enforcing false only the tag is stripped (out is filled, the verdict is PASS unless
 * the packet is too short). now_ns: the caller's monotonic clock, for the budget. */
enum srtpplus_verdict srtpplus_receiver_check_rtp(struct srtpplus_receiver *rx,
                                                  const uint8_t *packet, size_t len, bool enforcing,
                                                  uint64_t now_ns, struct srtpplus_check *out);
enum srtpplus_verdict srtpplus_receiver_check_rtcp(struct srtpplus_receiver *rx,
                                                   const uint8_t *packet, size_t len,
                                                   bool enforcing, uint64_t now_ns,
                                                   struct srtpplus_check *out);

/* Rule 5 and the bookkeeping after srtp_unprotect succeeded: records the index as
 * authenticated (replay, highest index), and for chain learns the carried tags and
 * strips the block from the plaintext (*len shrinks). Call it for every authenticated
 * packet, enforcing or not, so the state follows the stream. */
enum srtpplus_confirm srtpplus_receiver_confirm_rtp(struct srtpplus_receiver *rx, uint8_t *rtp,
                                                    size_t *len, uint64_t index);
enum srtpplus_confirm srtpplus_receiver_confirm_rtcp(struct srtpplus_receiver *rx, uint32_t ssrc,
                                                     uint64_t index);

/* Refills prn windows that fell behind; cheap when nothing is pending. Works only while
 * checks are enforced (as the last check call said): with the detector off legitimate
 * traffic pays for no tags. Returns an srtpplus_status (an OpenSSL failure; checks stay
 * correct, only slower). */
int srtpplus_receiver_maintain(struct srtpplus_receiver *rx);
bool srtpplus_receiver_maintenance_pending(const struct srtpplus_receiver *rx);

/* Introspection for tests, metrics and diagnostics. */
bool srtpplus_receiver_highest_index(const struct srtpplus_receiver *rx, uint32_t ssrc,
                                     uint64_t *index);
bool srtpplus_receiver_learned_tag(const struct srtpplus_receiver *rx, uint32_t ssrc,
                                   uint64_t index, uint32_t *tag);
/* The precomputed RTP prn window of ssrc, read-only, for exporting it (the
 * kernel filter): the tags of indexes [lo, hi) at tags[index & mask]. False for
 * scheme chain or an unknown SSRC. Valid until the next call on rx. */
struct srtpplus_window_view {
    const uint32_t *tags;
    uint64_t mask;
    uint64_t lo, hi;
};
bool srtpplus_receiver_rtp_window(const struct srtpplus_receiver *rx, uint32_t ssrc,
                                  struct srtpplus_window_view *view);
const struct srtpplus_receiver_stats *srtpplus_receiver_stats(const struct srtpplus_receiver *rx);

#endif

/* The SRTP+ receiver of one transport (SRTPPLUS.md section 5): per-SSRC state, the tag,
 * index, replay and budget checks before srtp_unprotect, the confirmation after it, and
 * the refills between batches (one worker, no clock of its own). */
#include "srtpplus_receiver.h"
#include "srtpplus_budget.h"
#include "srtpplus_byteorder.h"
#include "srtpplus_chain.h"
#include "srtpplus_index.h"
#include "srtpplus_kdf.h"
#include "srtpplus_prn.h"
#include "srtpplus_receiver_stream.h"
#include "srtpplus_rtp.h"
#include "srtpplus_status.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

struct srtpplus_receiver {
    /* Read by every check: kept together at the front. */
    uint32_t count;
    uint32_t last_hit;
    uint32_t ssrcs[SRTPPLUS_RECEIVER_MAX_SSRCS];
    struct srtpplus_receiver_stream *streams[SRTPPLUS_RECEIVER_MAX_SSRCS];
    size_t min_rtp_len;  /* SRTP packet plus the tag */
    size_t min_rtcp_len; /* SRTCP packet plus the tag */
    size_t srtcp_auth_len;
    uint32_t behind;
    uint32_t ahead;
    enum srtpplus_scheme scheme;
    struct srtpplus_chain_params chain;
    /* One budget per class, so that a flood of one (forged SRTCP, unknown
     * SSRCs) cannot spend what the others need. */
    struct srtpplus_budget budget[SRTPPLUS_BUDGET_CLASSES];
    uint32_t budget_rate[SRTPPLUS_BUDGET_CLASSES];
    uint32_t pending; /* bit i: streams[i] has a prn window to refill */
    bool enforcing;   /* as the last check was told; windows are refilled only then */
    struct srtpplus_prn *prn;
    struct srtpplus_receiver_stats stats;
};

void srtpplus_receiver_config_init(struct srtpplus_receiver_config *config,
                                   enum srtpplus_scheme scheme, enum srtpplus_profile profile)
{
    *config = (struct srtpplus_receiver_config){
        .scheme = scheme,
        .profile = profile,
        .chain = {.depth = SRTPPLUS_CHAIN_DEFAULT_DEPTH, .copies = SRTPPLUS_CHAIN_DEFAULT_COPIES},
        .window_behind = SRTPPLUS_WINDOW_DEFAULT_BEHIND,
        .window_ahead = SRTPPLUS_WINDOW_DEFAULT_AHEAD,
        .budget_rate = SRTPPLUS_BUDGET_MIN_RATE,
        .budget_burst = SRTPPLUS_BUDGET_MIN_RATE,
    };
}

static bool config_valid(const struct srtpplus_receiver_config *config)
{
    if (config->scheme != SRTPPLUS_SCHEME_PRN && config->scheme != SRTPPLUS_SCHEME_CHAIN)
        return false;
    if (config->scheme == SRTPPLUS_SCHEME_CHAIN && !srtpplus_chain_params_valid(&config->chain))
        return false;
    return config->window_behind >= 1 && config->window_behind <= SRTPPLUS_WINDOW_MAX_BEHIND &&
           config->window_ahead >= 1 && config->window_ahead <= SRTPPLUS_WINDOW_MAX_AHEAD;
}

int srtpplus_receiver_new(const struct srtpplus_receiver_config *config, const uint8_t *master_key,
                          size_t key_len, const uint8_t *master_salt, size_t salt_len,
                          struct srtpplus_receiver **out)
{
    if (!config || !out)
        return SRTPPLUS_ERR_PARAM;
    *out = NULL;
    struct srtpplus_profile_sizes sizes;
    if (srtpplus_profile_sizes(config->profile, &sizes) != SRTPPLUS_OK ||
        key_len != sizes.master_key_len || salt_len != sizes.master_salt_len ||
        !config_valid(config))
        return SRTPPLUS_ERR_PARAM;

    struct srtpplus_receiver *rx = calloc(1, sizeof(*rx));
    if (!rx)
        return SRTPPLUS_ERR_NOMEM;
    rx->min_rtp_len = sizes.min_srtp_len + SRTPPLUS_TAG_LEN;
    rx->min_rtcp_len = sizes.min_srtcp_len + SRTPPLUS_TAG_LEN;
    rx->srtcp_auth_len = sizes.srtcp_auth_len;
    rx->behind = config->window_behind;
    rx->ahead = config->window_ahead;
    rx->scheme = config->scheme;
    rx->chain = config->chain;
    for (int i = 0; i < SRTPPLUS_BUDGET_CLASSES; i++) {
        srtpplus_budget_init(&rx->budget[i], config->budget_rate, config->budget_burst);
        rx->budget_rate[i] = config->budget_rate;
    }

    uint8_t key[SRTPPLUS_PRN_KEY_LEN];
    int rc = srtpplus_derive_prn_key(master_key, key_len, master_salt, salt_len, key);
    if (rc == SRTPPLUS_OK)
        rc = srtpplus_prn_new(key, &rx->prn);
    OPENSSL_cleanse(key, sizeof(key));
    if (rc != SRTPPLUS_OK) {
        free(rx);
        return rc;
    }
    *out = rx;
    return SRTPPLUS_OK;
}

void srtpplus_receiver_free(struct srtpplus_receiver *rx)
{
    if (!rx)
        return;
    for (uint32_t i = 0; i < rx->count; i++) {
        srtpplus_receiver_stream_release(rx->streams[i]);
        free(rx->streams[i]);
    }
    srtpplus_prn_free(rx->prn);
    free(rx);
}

static int find_slot(const struct srtpplus_receiver *rx, uint32_t ssrc)
{
    for (uint32_t i = 0; i < rx->count; i++) {
        if (rx->ssrcs[i] == ssrc)
            return (int)i;
    }
    return -1;
}

/* On the packet path: most datagrams of a transport belong to the SSRC of the one
 * before, so that one is tried first. */
static inline struct srtpplus_receiver_stream *find_stream(struct srtpplus_receiver *rx,
                                                           uint32_t ssrc, uint32_t *slot)
{
    uint32_t hit = rx->last_hit;
    if (hit < rx->count && rx->ssrcs[hit] == ssrc) {
        *slot = hit;
        return rx->streams[hit];
    }
    int i = find_slot(rx, ssrc);
    if (i < 0)
        return NULL;
    rx->last_hit = (uint32_t)i;
    *slot = (uint32_t)i;
    return rx->streams[i];
}

int srtpplus_receiver_add_ssrc(struct srtpplus_receiver *rx, uint32_t ssrc, uint32_t roc)
{
    if (!rx)
        return SRTPPLUS_ERR_PARAM;
    if (find_slot(rx, ssrc) >= 0)
        return SRTPPLUS_ERR_EXISTS;
    if (rx->count == SRTPPLUS_RECEIVER_MAX_SSRCS)
        return SRTPPLUS_ERR_FULL;
    struct srtpplus_receiver_stream *stream = malloc(sizeof(*stream));
    if (!stream)
        return SRTPPLUS_ERR_NOMEM;
    int rc = srtpplus_receiver_stream_init(stream, ssrc, roc, rx->scheme, &rx->chain, rx->behind,
                                           rx->ahead);
    if (rc != SRTPPLUS_OK) {
        free(stream);
        return rc;
    }
    rx->ssrcs[rx->count] = ssrc;
    rx->streams[rx->count] = stream;
    rx->count++;
    return SRTPPLUS_OK;
}

int srtpplus_receiver_remove_ssrc(struct srtpplus_receiver *rx, uint32_t ssrc)
{
    if (!rx)
        return SRTPPLUS_ERR_PARAM;
    int i = find_slot(rx, ssrc);
    if (i < 0)
        return SRTPPLUS_ERR_NOT_FOUND;
    srtpplus_receiver_stream_release(rx->streams[i]);
    free(rx->streams[i]);
    uint32_t last = rx->count - 1;
    uint32_t pending_last = (rx->pending >> last) & 1;
    rx->pending &= ~((uint32_t)1 << i);
    if ((uint32_t)i != last) {
        rx->ssrcs[i] = rx->ssrcs[last];
        rx->streams[i] = rx->streams[last];
        rx->pending &= ~((uint32_t)1 << last);
        rx->pending |= pending_last << i;
    }
    rx->count = last;
    rx->last_hit = 0;
    return SRTPPLUS_OK;
}

void srtpplus_receiver_set_budget(struct srtpplus_receiver *rx, uint32_t rate_per_s, uint32_t burst)
{
    for (int i = 0; i < SRTPPLUS_BUDGET_CLASSES; i++)
        srtpplus_receiver_set_class_budget(rx, (enum srtpplus_budget_class)i, rate_per_s, burst);
}

void srtpplus_receiver_set_class_budget(struct srtpplus_receiver *rx,
                                        enum srtpplus_budget_class budget_class,
                                        uint32_t rate_per_s, uint32_t burst)
{
    if ((unsigned)budget_class >= SRTPPLUS_BUDGET_CLASSES)
        return;
    srtpplus_budget_init(&rx->budget[budget_class], rate_per_s, burst);
    rx->budget_rate[budget_class] = rate_per_s;
}

uint32_t srtpplus_receiver_class_budget(const struct srtpplus_receiver *rx,
                                        enum srtpplus_budget_class budget_class)
{
    return (unsigned)budget_class < SRTPPLUS_BUDGET_CLASSES ? rx->budget_rate[budget_class] : 0;
}

static inline enum srtpplus_verdict
spend_budget(struct srtpplus_receiver *rx, enum srtpplus_budget_class budget_class, uint64_t now_ns)
{
    return srtpplus_budget_take(&rx->budget[budget_class], now_ns) ? SRTPPLUS_UNVERIFIED_BUDGET_OK
                                                                   : SRTPPLUS_DROP_BUDGET;
}

/* A prn tag the window does not hold: computed now, at the cost of one AES call. It is
 * only reached when maintenance lags or for RTCP indexes far from the expected ones. */
static bool inline_tag(struct srtpplus_receiver *rx, uint8_t kind, uint32_t ssrc, uint64_t index,
                       uint32_t *tag)
{
    rx->stats.inline_tags++;
    return srtpplus_prn_tag(rx->prn, kind, ssrc, index, tag) == SRTPPLUS_OK;
}

/* Whether index lies in the plausibility window around the highest authenticated one. */
static inline bool plausible(const struct srtpplus_receiver *rx, uint64_t highest, uint64_t index)
{
    return index <= highest + rx->ahead && index + rx->behind >= highest;
}

/* The chain rule for the expected tag: T[m] when learned, else tag_prn, which can only
 * be right for m < i0 + D; since i0 is at most the lowest authenticated index, indexes
 * beyond that are unverifiable without spending an AES call on them. */
static enum srtpplus_verdict check_chain_tag(struct srtpplus_receiver *rx,
                                             const struct srtpplus_receiver_stream *stream,
                                             uint64_t index, uint32_t tag, bool *verified)
{
    uint32_t expected;
    if (srtpplus_chain_table_get(&stream->learned, index, &expected)) {
        if (expected != tag)
            return SRTPPLUS_DROP_TAG;
        *verified = true;
    } else if (index < stream->rtp_replay.lowest + rx->chain.depth) {
        *verified =
            inline_tag(rx, SRTPPLUS_KIND_RTP, stream->ssrc, index, &expected) && expected == tag;
    } else {
        *verified = false;
    }
    return SRTPPLUS_PASS;
}

/* Every case of rules 1-3. Out of line, so that the fast path of
 * srtpplus_receiver_check_rtp, which handles nearly every packet, makes no calls. */
static __attribute__((noinline)) enum srtpplus_verdict check_rtp(struct srtpplus_receiver *rx,
                                                                 const uint8_t *packet, size_t len,
                                                                 bool enforcing, uint64_t now_ns,
                                                                 struct srtpplus_check *out)
{
    if (len < rx->min_rtp_len) {
        *out = (struct srtpplus_check){0};
        return SRTPPLUS_DROP_MALFORMED;
    }
    size_t stripped = len - SRTPPLUS_TAG_LEN;
    uint32_t tag = srtpplus_load_be32(packet + stripped);
    uint32_t ssrc = srtpplus_load_be32(packet + 8);
    uint16_t seq = srtpplus_load_be16(packet + 2);
    out->len = stripped;
    out->ssrc = ssrc;
    out->index = seq;

    uint32_t slot = 0;
    struct srtpplus_receiver_stream *stream = find_stream(rx, ssrc, &slot);
    if (!stream) {
        if (!enforcing)
            return SRTPPLUS_PASS;
        /* A stream not yet followed: tag_prn of its first index (ROC 0) is
         * right in both schemes, so a genuine sender's packets pass by their
         * tag instead of competing with forgeries for the budget. */
        uint32_t expected;
        if (inline_tag(rx, SRTPPLUS_KIND_RTP, ssrc, seq, &expected) && expected == tag)
            return SRTPPLUS_PASS;
        return spend_budget(rx, SRTPPLUS_BUDGET_UNKNOWN_SSRC, now_ns);
    }

    const struct srtpplus_replay *replay = &stream->rtp_replay;
    if (!replay->started) {
        /* Nothing authenticated yet: no window to check against, but tag_prn of the
         * index is right for the first packets of both schemes. */
        out->index = (uint64_t)stream->initial_roc << 16 | seq;
        if (!enforcing)
            return SRTPPLUS_PASS;
        uint32_t expected;
        if (inline_tag(rx, SRTPPLUS_KIND_RTP, ssrc, out->index, &expected) && expected == tag)
            return SRTPPLUS_PASS;
        return spend_budget(rx, SRTPPLUS_BUDGET_RTP, now_ns);
    }

    uint64_t index;
    bool index_ok = srtpplus_index_estimate(replay->highest, seq, &index);
    if (index_ok)
        out->index = index;
    if (!enforcing)
        return SRTPPLUS_PASS;
    if (!index_ok || !plausible(rx, replay->highest, index))
        return SRTPPLUS_DROP_INDEX;

    bool verified = true;
    if (rx->scheme == SRTPPLUS_SCHEME_PRN) {
        uint32_t expected;
        if (!srtpplus_prn_window_lookup(&stream->rtp_window, index, &expected) &&
            !inline_tag(rx, SRTPPLUS_KIND_RTP, ssrc, index, &expected))
            verified = false;
        else if (expected != tag)
            return SRTPPLUS_DROP_TAG;
    } else {
        enum srtpplus_verdict v = check_chain_tag(rx, stream, index, tag, &verified);
        if (v != SRTPPLUS_PASS)
            return v;
    }
    if (srtpplus_replay_seen(replay, index))
        return SRTPPLUS_DROP_REPLAY;
    return verified ? SRTPPLUS_PASS : spend_budget(rx, SRTPPLUS_BUDGET_RTP, now_ns);
}

enum srtpplus_verdict srtpplus_receiver_check_rtp(struct srtpplus_receiver *rx,
                                                  const uint8_t *packet, size_t len, bool enforcing,
                                                  uint64_t now_ns, struct srtpplus_check *out)
{
    rx->enforcing = enforcing;
    /* Fast path: enforcing, the SSRC of the packet before, past its first authenticated
     * packet, and the expected tag at hand (precomputed or learned). The same rules as
     * check_rtp, in the same order; anything else is left to it. */
    uint32_t hit = rx->last_hit;
    if (enforcing && len >= rx->min_rtp_len && hit < rx->count) {
        uint32_t ssrc = srtpplus_load_be32(packet + 8);
        const struct srtpplus_receiver_stream *stream = rx->streams[hit];
        const struct srtpplus_replay *replay = &stream->rtp_replay;
        uint64_t index;
        uint32_t expected;
        if (rx->ssrcs[hit] == ssrc && replay->started &&
            srtpplus_index_estimate(replay->highest, srtpplus_load_be16(packet + 2), &index) &&
            plausible(rx, replay->highest, index) &&
            (rx->scheme == SRTPPLUS_SCHEME_PRN
                 ? srtpplus_prn_window_lookup(&stream->rtp_window, index, &expected)
                 : srtpplus_chain_table_get(&stream->learned, index, &expected))) {
            size_t stripped = len - SRTPPLUS_TAG_LEN;
            enum srtpplus_verdict v = expected != srtpplus_load_be32(packet + stripped)
                                          ? SRTPPLUS_DROP_TAG
                                      : srtpplus_replay_seen(replay, index) ? SRTPPLUS_DROP_REPLAY
                                                                            : SRTPPLUS_PASS;
            out->len = stripped;
            out->index = index;
            out->ssrc = ssrc;
            return v;
        }
    }
    return check_rtp(rx, packet, len, enforcing, now_ns, out);
}

static enum srtpplus_verdict check_rtcp(struct srtpplus_receiver *rx, const uint8_t *packet,
                                        size_t len, bool enforcing, uint64_t now_ns,
                                        struct srtpplus_check *out)
{
    if (len < rx->min_rtcp_len) {
        *out = (struct srtpplus_check){0};
        return SRTPPLUS_DROP_MALFORMED;
    }
    size_t stripped = len - SRTPPLUS_TAG_LEN;
    uint32_t tag = srtpplus_load_be32(packet + stripped);
    uint32_t ssrc = srtpplus_load_be32(packet + 4);
    /* min_rtcp_len guarantees the index field lies after the RTCP header. */
    const uint8_t *index_field = packet + stripped - rx->srtcp_auth_len - 4;
    uint64_t index = srtpplus_load_be32(index_field) & 0x7fffffff;
    out->len = stripped;
    out->ssrc = ssrc;
    out->index = index;
    if (!enforcing)
        return SRTPPLUS_PASS;

    uint32_t slot = 0;
    struct srtpplus_receiver_stream *stream = find_stream(rx, ssrc, &slot);
    uint32_t expected;
    if (!stream) {
        /* SRTCP's tag is tag_prn in both schemes, known for any sender SSRC
         * (a receive-only leg's random RTCP SSRC included): a genuine one
         * passes by it, a forged one competes for the budget. */
        if (inline_tag(rx, SRTPPLUS_KIND_RTCP, ssrc, index, &expected) && expected == tag)
            return SRTPPLUS_PASS;
        return spend_budget(rx, SRTPPLUS_BUDGET_RTCP, now_ns);
    }
    const struct srtpplus_replay *replay = &stream->rtcp_replay;
    if (!replay->started) {
        if (inline_tag(rx, SRTPPLUS_KIND_RTCP, ssrc, index, &expected) && expected == tag)
            return SRTPPLUS_PASS;
        return spend_budget(rx, SRTPPLUS_BUDGET_RTCP, now_ns);
    }
    if (!plausible(rx, replay->highest, index))
        return SRTPPLUS_DROP_INDEX;
    bool known = srtpplus_prn_window_lookup(&stream->rtcp_window, index, &expected) ||
                 inline_tag(rx, SRTPPLUS_KIND_RTCP, ssrc, index, &expected);
    if (known && expected != tag)
        return SRTPPLUS_DROP_TAG;
    if (srtpplus_replay_seen(replay, index))
        return SRTPPLUS_DROP_REPLAY;
    return known ? SRTPPLUS_PASS : spend_budget(rx, SRTPPLUS_BUDGET_RTCP, now_ns);
}

enum srtpplus_verdict srtpplus_receiver_check_rtcp(struct srtpplus_receiver *rx,
                                                   const uint8_t *packet, size_t len,
                                                   bool enforcing, uint64_t now_ns,
                                                   struct srtpplus_check *out)
{
    rx->enforcing = enforcing;
    return check_rtcp(rx, packet, len, enforcing, now_ns, out);
}

static inline void note_refill(struct srtpplus_receiver *rx, uint32_t slot,
                               const struct srtpplus_prn_window *window,
                               const struct srtpplus_replay *replay)
{
    if (srtpplus_prn_window_wants_refill(window, replay->highest))
        rx->pending |= (uint32_t)1 << slot;
}

/* Every case of rule 5 and the bookkeeping; out of line like check_rtp. */
static __attribute__((noinline)) enum srtpplus_confirm
confirm_rtp(struct srtpplus_receiver *rx, uint8_t *rtp, size_t *len, uint64_t index)
{
    if (*len < SRTPPLUS_RTP_FIXED_HEADER_LEN || index >= SRTPPLUS_RTP_INDEX_LIMIT ||
        srtpplus_load_be16(rtp + 2) != (uint16_t)index)
        return SRTPPLUS_CONFIRM_MALFORMED;
    uint32_t slot = 0;
    struct srtpplus_receiver_stream *stream = find_stream(rx, srtpplus_load_be32(rtp + 8), &slot);
    bool chain_ok = true;
    if (rx->scheme == SRTPPLUS_SCHEME_CHAIN) {
        struct srtpplus_chain_block block;
        chain_ok = srtpplus_chain_parse(rtp, *len, &rx->chain, &block) == SRTPPLUS_OK;
        if (chain_ok) {
            if (stream)
                srtpplus_receiver_stream_learn(stream, index, rx->chain.depth, &block);
            srtpplus_chain_strip(rtp, len, &block);
        }
    }
    if (!stream)
        return SRTPPLUS_CONFIRM_UNKNOWN_SSRC;
    srtpplus_replay_mark(&stream->rtp_replay, index);
    note_refill(rx, slot, &stream->rtp_window, &stream->rtp_replay);
    return chain_ok ? SRTPPLUS_CONFIRMED : SRTPPLUS_CONFIRMED_CHAIN_MALFORMED;
}

enum srtpplus_confirm srtpplus_receiver_confirm_rtp(struct srtpplus_receiver *rx, uint8_t *rtp,
                                                    size_t *len, uint64_t index)
{
    /* Fast path: the SSRC of the packet before, the next index in order, and for chain
     * a well-formed block. Anything else is left to confirm_rtp. */
    uint32_t hit = rx->last_hit;
    if (*len >= SRTPPLUS_RTP_FIXED_HEADER_LEN && hit < rx->count &&
        rx->ssrcs[hit] == srtpplus_load_be32(rtp + 8) &&
        srtpplus_load_be16(rtp + 2) == (uint16_t)index) {
        struct srtpplus_receiver_stream *stream = rx->streams[hit];
        struct srtpplus_replay *replay = &stream->rtp_replay;
        if (replay->started && index == replay->highest + 1 && index < SRTPPLUS_RTP_INDEX_LIMIT) {
            if (rx->scheme == SRTPPLUS_SCHEME_CHAIN) {
                struct srtpplus_chain_block block;
                if (srtpplus_chain_parse(rtp, *len, &rx->chain, &block) != SRTPPLUS_OK)
                    return confirm_rtp(rx, rtp, len, index);
                srtpplus_receiver_stream_learn(stream, index, rx->chain.depth, &block);
                srtpplus_chain_strip(rtp, len, &block);
            }
            srtpplus_replay_mark(replay, index);
            note_refill(rx, hit, &stream->rtp_window, replay);
            return SRTPPLUS_CONFIRMED;
        }
    }
    return confirm_rtp(rx, rtp, len, index);
}

enum srtpplus_confirm srtpplus_receiver_confirm_rtcp(struct srtpplus_receiver *rx, uint32_t ssrc,
                                                     uint64_t index)
{
    if (!rx)
        return SRTPPLUS_CONFIRM_MALFORMED;
    enum srtpplus_confirm c = SRTPPLUS_CONFIRMED;
    uint32_t slot = 0;
    struct srtpplus_receiver_stream *stream;
    if (index >= SRTPPLUS_RTCP_INDEX_LIMIT) {
        c = SRTPPLUS_CONFIRM_MALFORMED;
    } else if (!(stream = find_stream(rx, ssrc, &slot))) {
        c = SRTPPLUS_CONFIRM_UNKNOWN_SSRC;
    } else {
        srtpplus_replay_mark(&stream->rtcp_replay, index);
        note_refill(rx, slot, &stream->rtcp_window, &stream->rtcp_replay);
    }
    return c;
}

int srtpplus_receiver_maintain(struct srtpplus_receiver *rx)
{
    if (!rx)
        return SRTPPLUS_ERR_PARAM;
    /* With the detector off nothing is checked, so precomputing tags would only cost
     * legitimate traffic; the pending work waits until checks are enforced again (the
     * first batch then falls back to computing its tags one by one). */
    if (!rx->enforcing)
        return SRTPPLUS_OK;
    int result = SRTPPLUS_OK;
    while (rx->pending) {
        uint32_t slot = (uint32_t)__builtin_ctz(rx->pending);
        rx->pending &= rx->pending - 1;
        int rc =
            srtpplus_receiver_stream_refill(rx->streams[slot], rx->prn, &rx->stats.refill_tags);
        if (rc != SRTPPLUS_OK)
            result = rc;
    }
    return result;
}

bool srtpplus_receiver_maintenance_pending(const struct srtpplus_receiver *rx)
{
    return rx && rx->enforcing && rx->pending != 0;
}

bool srtpplus_receiver_highest_index(const struct srtpplus_receiver *rx, uint32_t ssrc,
                                     uint64_t *index)
{
    int i = rx ? find_slot(rx, ssrc) : -1;
    if (i < 0 || !rx->streams[i]->rtp_replay.started)
        return false;
    *index = rx->streams[i]->rtp_replay.highest;
    return true;
}

bool srtpplus_receiver_learned_tag(const struct srtpplus_receiver *rx, uint32_t ssrc,
                                   uint64_t index, uint32_t *tag)
{
    int i = rx ? find_slot(rx, ssrc) : -1;
    if (i < 0 || rx->scheme != SRTPPLUS_SCHEME_CHAIN)
        return false;
    return srtpplus_chain_table_get(&rx->streams[i]->learned, index, tag);
}

bool srtpplus_receiver_rtp_window(const struct srtpplus_receiver *rx, uint32_t ssrc,
                                  struct srtpplus_window_view *view)
{
    int i = rx ? find_slot(rx, ssrc) : -1;
    if (i < 0 || rx->scheme != SRTPPLUS_SCHEME_PRN || !rx->streams[i]->rtp_window.tags)
        return false;
    const struct srtpplus_prn_window *window = &rx->streams[i]->rtp_window;
    *view = (struct srtpplus_window_view){
        .tags = window->tags, .mask = window->mask, .lo = window->lo, .hi = window->hi};
    return true;
}

const struct srtpplus_receiver_stats *srtpplus_receiver_stats(const struct srtpplus_receiver *rx)
{
    return &rx->stats;
}

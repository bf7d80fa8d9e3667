/* Owns the structural prefilter of transports without SRTP+: plausibility
 * window, jump probe, replay record and fair overload admission per stream
 * (see stream_guard.h for the rules). */
#include "prefilter/stream_guard.h"

#include <string.h>

#define UNKNOWN_SSRC_PPS    20
#define RTCP_MIN_PPS        50
#define RATE_WINDOW_US      1000000u
#define ADMISSION_WINDOW_US 100000u
/* Packets a second of one stream ahead of its window that may reach
 * srtp_unprotect: the first one after an outage re-centres the window when
 * nothing else competes; a flood of forgeries there costs about 20 HMACs/s. */
#define JUMP_PROBE_PPS 20

static void admission_init(moat_guard_admission *admission, uint32_t pps)
{
    memset(admission, 0, sizeof *admission);
    uint32_t allowance = (uint32_t)((uint64_t)pps * ADMISSION_WINDOW_US / 1000000u);
    admission->allowance = allowance ? allowance : 1;
    admission->fair_chance = MOAT_GUARD_CHANCE_ALL;
}

static uint32_t fair_chance(uint32_t allowance, uint32_t arrivals)
{
    if (arrivals <= allowance)
        return MOAT_GUARD_CHANCE_ALL;
    return (uint32_t)((uint64_t)allowance * MOAT_GUARD_CHANCE_ALL / arrivals);
}

/* Counts a plausible arrival; the fair chance of a window is known when it
 * closes and applies to the next one. */
static void admission_count(moat_guard_admission *admission, uint64_t now_us)
{
    if (now_us - admission->window_start_us >= ADMISSION_WINDOW_US) {
        /* A window that closed long ago says nothing about now. */
        bool recent = now_us - admission->window_start_us < 2 * ADMISSION_WINDOW_US;
        admission->fair_chance =
            recent ? fair_chance(admission->allowance, admission->arrivals) : MOAT_GUARD_CHANCE_ALL;
        admission->window_start_us = now_us;
        admission->arrivals = 0;
    }
    admission->arrivals++;
}

static uint32_t next_random(moat_stream_guard *guard)
{
    uint32_t x = guard->random;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    guard->random = x;
    return x;
}

/* Every packet of the class has the same chance: the larger of its fair
 * share and what the worker can afford. */
static bool admit(moat_stream_guard *guard, moat_guard_admission *admission,
                  const moat_guard_load *load, uint64_t now_us)
{
    admission_count(admission, now_us);
    if (load->chance >= MOAT_GUARD_CHANCE_ALL)
        return true;
    uint32_t chance = admission->fair_chance > load->chance ? admission->fair_chance : load->chance;
    /* Within the window, a class still under its allowance is not flooded. */
    if (chance >= MOAT_GUARD_CHANCE_ALL || admission->arrivals <= admission->allowance)
        return true;
    return (next_random(guard) & (MOAT_GUARD_CHANCE_ALL - 1)) < chance;
}

/* The jump probe: every packet of the class has the same chance, its
 * allowance over the larger of the last window's arrivals and this one's so
 * far (a flood that just started gets no free window), whether or not the
 * worker is overloaded; certain while the class stays within its
 * allowance. */
static bool probe(moat_stream_guard *guard, moat_guard_admission *admission, uint64_t now_us)
{
    admission_count(admission, now_us);
    uint32_t chance = fair_chance(admission->allowance, admission->arrivals);
    if (admission->fair_chance < chance)
        chance = admission->fair_chance;
    if (chance >= MOAT_GUARD_CHANCE_ALL)
        return true;
    return (next_random(guard) & (MOAT_GUARD_CHANCE_ALL - 1)) < chance;
}

void moat_stream_guard_init(moat_stream_guard *guard, const moat_stream_guard_config *config)
{
    memset(guard, 0, sizeof *guard);
    guard->config = *config;
    srtpplus_budget_init(&guard->unknown_budget, UNKNOWN_SSRC_PPS, UNKNOWN_SSRC_PPS);
    admission_init(&guard->rtcp, RTCP_MIN_PPS);
    guard->random = 0x9e3779b9u ^ (uint32_t)(uintptr_t)guard;
    if (!guard->random)
        guard->random = 1;
}

static moat_guarded_stream *find(moat_stream_guard *guard, uint32_t ssrc)
{
    for (unsigned i = 0; i < guard->n_streams; i++) {
        if (guard->streams[i].ssrc == ssrc)
            return &guard->streams[i];
    }
    return NULL;
}

static void set_budget(moat_stream_guard *guard, moat_guarded_stream *stream)
{
    double rate = stream->learned_pps * guard->config.budget_factor;
    /* Clamped before the cast: a rate past UINT32_MAX (or not a number)
     * would make it undefined. */
    uint32_t budget = !(rate > guard->config.budget_min_pps) ? guard->config.budget_min_pps
                      : rate >= (double)UINT32_MAX           ? UINT32_MAX
                                                             : (uint32_t)rate;
    if (budget == stream->budget_rate)
        return;
    stream->budget_rate = budget;
    uint32_t allowance = (uint32_t)((uint64_t)budget * ADMISSION_WINDOW_US / 1000000u);
    stream->admission.allowance = allowance ? allowance : 1;
}

static moat_guarded_stream *add(moat_stream_guard *guard, uint32_t ssrc, uint32_t expected_pps)
{
    if (guard->n_streams == MOAT_STREAM_GUARD_MAX_STREAMS)
        return NULL;
    moat_guarded_stream *stream = &guard->streams[guard->n_streams++];
    memset(stream, 0, sizeof *stream);
    stream->ssrc = ssrc;
    stream->learned_pps = expected_pps;
    admission_init(&stream->admission, guard->config.budget_min_pps);
    admission_init(&stream->jump_probe, JUMP_PROBE_PPS);
    set_budget(guard, stream);
    return stream;
}

void moat_stream_guard_declare(moat_stream_guard *guard, uint32_t ssrc, uint32_t expected_pps)
{
    if (ssrc && !find(guard, ssrc))
        add(guard, ssrc, expected_pps);
}

uint64_t moat_estimate_index(uint64_t highest_index, uint16_t sequence)
{
    uint32_t roc = (uint32_t)(highest_index >> 16);
    uint16_t highest_seq = (uint16_t)highest_index;
    uint64_t guess_roc = roc;
    if (highest_seq < 32768) {
        if (sequence > highest_seq && sequence - highest_seq > 32768 && roc > 0)
            guess_roc = roc - 1;
    } else if (highest_seq - 32768 > sequence) {
        guess_roc = (uint64_t)roc + 1;
    }
    return (guess_roc << 16) | sequence;
}

static bool replayed(const moat_guarded_stream *stream, uint64_t index)
{
    if (index > stream->highest_index)
        return false;
    uint64_t behind = stream->highest_index - index;
    return behind < MOAT_STREAM_GUARD_REPLAY_BITS && (stream->replay_bits >> behind) & 1u;
}

moat_guard_verdict moat_stream_guard_check_rtp(moat_stream_guard *guard, uint32_t ssrc,
                                               uint16_t sequence, const moat_guard_load *load,
                                               uint64_t now_us, uint64_t *index_out)
{
    moat_guarded_stream *stream = find(guard, ssrc);
    if (!stream) {
        *index_out = sequence;
        if (!load->enforcing)
            return MOAT_GUARD_PASS;
        /* A new SSRC may still be legitimate (a renegotiated track): a small
         * allowance of its own lets it prove itself. */
        return srtpplus_budget_take(&guard->unknown_budget, now_us * 1000u)
                   ? MOAT_GUARD_PASS
                   : MOAT_GUARD_DROP_UNKNOWN_SSRC;
    }
    uint64_t index =
        stream->authenticated ? moat_estimate_index(stream->highest_index, sequence) : sequence;
    *index_out = index;
    if (!load->enforcing)
        return MOAT_GUARD_PASS;
    if (stream->authenticated) {
        /* Behind libsrtp's replay window (as long as this window): certain. */
        if (index + guard->config.window_behind < stream->highest_index)
            return MOAT_GUARD_DROP_INDEX;
        /* Ahead: libsrtp's replay check passes any index its guess (the
         * same as ours) puts ahead of its highest, so this may be the
         * stream after a gap, whose window only an authenticated packet
         * moves: the jump probe's allowance, then dropped. */
        if (index > stream->highest_index + guard->config.window_ahead)
            return probe(guard, &stream->jump_probe, now_us) ? MOAT_GUARD_PASS
                                                             : MOAT_GUARD_DROP_INDEX;
        if (replayed(stream, index))
            return MOAT_GUARD_DROP_REPLAY;
    }
    return admit(guard, &stream->admission, load, now_us) ? MOAT_GUARD_PASS
                                                          : MOAT_GUARD_DROP_BUDGET;
}

static void remember(moat_guarded_stream *stream, uint64_t index)
{
    if (index > stream->highest_index) {
        uint64_t shift = index - stream->highest_index;
        stream->replay_bits =
            shift >= MOAT_STREAM_GUARD_REPLAY_BITS ? 1u : (stream->replay_bits << shift) | 1u;
        stream->highest_index = index;
        return;
    }
    uint64_t behind = stream->highest_index - index;
    if (behind < MOAT_STREAM_GUARD_REPLAY_BITS)
        stream->replay_bits |= (uint64_t)1 << behind;
}

void moat_stream_guard_confirm_rtp(moat_stream_guard *guard, uint32_t ssrc, uint64_t index,
                                   uint64_t now_us)
{
    moat_guarded_stream *stream = find(guard, ssrc);
    if (!stream && !(stream = add(guard, ssrc, guard->config.default_pps)))
        return;
    if (!stream->authenticated) {
        /* The first authenticated packet fixes the roll-over counter at 0,
         * as libsrtp assumes for a new stream. */
        stream->authenticated = true;
        stream->highest_index = index;
        stream->replay_bits = 1;
        stream->rate_window_start_us = now_us;
    } else {
        remember(stream, index);
    }
    stream->rate_window_packets++;
    uint64_t elapsed = now_us - stream->rate_window_start_us;
    if (elapsed >= RATE_WINDOW_US) {
        double rate = stream->rate_window_packets * 1e6 / (double)elapsed;
        /* Fast up, slow down: a stream that grows (video ramping up) gets its
         * share at once, an idle moment does not shrink it much. */
        stream->learned_pps = rate > stream->learned_pps
                                  ? rate
                                  : stream->learned_pps + 0.2 * (rate - stream->learned_pps);
        stream->rate_window_packets = 0;
        stream->rate_window_start_us = now_us;
        set_budget(guard, stream);
    }
}

moat_guard_verdict moat_stream_guard_check_rtcp(moat_stream_guard *guard,
                                                const moat_guard_load *load, uint64_t now_us)
{
    if (!load->enforcing)
        return MOAT_GUARD_PASS;
    return admit(guard, &guard->rtcp, load, now_us) ? MOAT_GUARD_PASS : MOAT_GUARD_DROP_BUDGET;
}

unsigned moat_stream_guard_count(const moat_stream_guard *guard)
{
    return guard->n_streams;
}

void moat_stream_guard_window(const moat_stream_guard *guard, unsigned i, moat_guard_window *out)
{
    const moat_guarded_stream *stream = &guard->streams[i];
    out->ssrc = stream->ssrc;
    out->known = stream->authenticated;
    out->authentic = stream->highest_index;
    if (!stream->authenticated) {
        out->lowest = 0;
        out->highest = UINT64_C(0xffffffffffff);
        return;
    }
    out->lowest = stream->highest_index > guard->config.window_behind
                      ? stream->highest_index - guard->config.window_behind
                      : 0;
    out->highest = stream->highest_index + guard->config.window_ahead;
}

bool moat_stream_guard_highest(const moat_stream_guard *guard, uint32_t ssrc, uint64_t *highest)
{
    for (unsigned i = 0; i < guard->n_streams; i++) {
        if (guard->streams[i].ssrc == ssrc && guard->streams[i].authenticated) {
            *highest = guard->streams[i].highest_index;
            return true;
        }
    }
    return false;
}

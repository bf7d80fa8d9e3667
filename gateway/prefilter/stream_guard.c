#include "prefilter/stream_guard.h"

#include <string.h>

#define UNKNOWN_SSRC_PPS 20
#define RTCP_MIN_PPS     50
#define RATE_WINDOW_US   1000000u

void moat_stream_guard_init(moat_stream_guard *guard, const moat_stream_guard_config *config)
{
    memset(guard, 0, sizeof *guard);
    guard->config = *config;
    srtpplus_budget_init(&guard->unknown_budget, UNKNOWN_SSRC_PPS, UNKNOWN_SSRC_PPS);
    srtpplus_budget_init(&guard->rtcp_budget, RTCP_MIN_PPS, RTCP_MIN_PPS);
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
    uint32_t budget =
        rate > guard->config.budget_min_pps ? (uint32_t)rate : guard->config.budget_min_pps;
    if (budget == stream->budget_rate)
        return;
    stream->budget_rate = budget;
    /* A fifth of a second of burst covers a video keyframe. */
    uint32_t burst = budget / 5 > 20 ? budget / 5 : 20;
    srtpplus_budget_init(&stream->budget, budget, burst);
    /* Resynchronising after a long loss burst needs only a trickle. */
    uint32_t wide =
        budget / 4 > guard->config.budget_min_pps ? budget / 4 : guard->config.budget_min_pps;
    srtpplus_budget_init(&stream->wide_budget, wide, wide / 5 > 10 ? wide / 5 : 10);
}

static moat_guarded_stream *add(moat_stream_guard *guard, uint32_t ssrc, uint32_t expected_pps)
{
    if (guard->n_streams == MOAT_STREAM_GUARD_MAX_STREAMS)
        return NULL;
    moat_guarded_stream *stream = &guard->streams[guard->n_streams++];
    memset(stream, 0, sizeof *stream);
    stream->ssrc = ssrc;
    stream->learned_pps = expected_pps;
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

moat_guard_verdict moat_stream_guard_check_rtp(moat_stream_guard *guard, uint32_t ssrc,
                                               uint16_t sequence, bool enforcing, uint64_t now_us,
                                               uint64_t *index_out)
{
    moat_guarded_stream *stream = find(guard, ssrc);
    if (!stream) {
        *index_out = sequence;
        if (!enforcing)
            return MOAT_GUARD_PASS;
        /* A new SSRC may still be legitimate (a renegotiated track): a small
         * shared budget lets it prove itself. */
        return srtpplus_budget_take(&guard->unknown_budget, now_us * 1000u)
                   ? MOAT_GUARD_PASS
                   : MOAT_GUARD_DROP_UNKNOWN_SSRC;
    }
    uint64_t index =
        stream->authenticated ? moat_estimate_index(stream->highest_index, sequence) : sequence;
    *index_out = index;
    if (!enforcing)
        return MOAT_GUARD_PASS;
    if (stream->authenticated && (index + guard->config.window_behind < stream->highest_index ||
                                  index > stream->highest_index + guard->config.window_ahead))
        return MOAT_GUARD_DROP_INDEX;
    bool near =
        !stream->authenticated || (index + MOAT_STREAM_GUARD_NEAR >= stream->highest_index &&
                                   index <= stream->highest_index + MOAT_STREAM_GUARD_NEAR);
    return srtpplus_budget_take(near ? &stream->budget : &stream->wide_budget, now_us * 1000u)
               ? MOAT_GUARD_PASS
               : MOAT_GUARD_DROP_BUDGET;
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
        stream->rate_window_start_us = now_us;
    } else if (index > stream->highest_index) {
        stream->highest_index = index;
    }
    stream->rate_window_packets++;
    uint64_t elapsed = now_us - stream->rate_window_start_us;
    if (elapsed >= RATE_WINDOW_US) {
        double rate = stream->rate_window_packets * 1e6 / (double)elapsed;
        /* Fast up, slow down: a stream that grows (video ramping up) gets its
         * budget at once, an idle moment does not shrink it much. */
        stream->learned_pps = rate > stream->learned_pps
                                  ? rate
                                  : stream->learned_pps + 0.2 * (rate - stream->learned_pps);
        stream->rate_window_packets = 0;
        stream->rate_window_start_us = now_us;
        set_budget(guard, stream);
    }
}

moat_guard_verdict moat_stream_guard_check_rtcp(moat_stream_guard *guard, bool enforcing,
                                                uint64_t now_us)
{
    if (!enforcing)
        return MOAT_GUARD_PASS;
    return srtpplus_budget_take(&guard->rtcp_budget, now_us * 1000u) ? MOAT_GUARD_PASS
                                                                     : MOAT_GUARD_DROP_BUDGET;
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

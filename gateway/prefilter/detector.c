/* The ingress anomaly detector's state machine (DESIGN.md, "The detector"):
 * packet rate over a 100 ms window against an EWMA baseline and the declared
 * rate, unprotect failures per second, on/off with hold time (time passed in),
 * and the adoption of a failure-free rate anomaly as the new baseline. */
#include "prefilter/detector.h"

#include <string.h>

/* The baseline needs this much history before the rate test applies; until
 * then only the declared rate and the failure test count. */
#define LEARNING_SLOTS  100
#define BASELINE_WEIGHT 0.02

void moat_detector_init(moat_detector *detector, const moat_detector_config *config,
                        uint64_t now_us)
{
    memset(detector, 0, sizeof *detector);
    detector->config = *config;
    detector->current_slot = now_us / MOAT_DETECTOR_SLOT_US;
    detector->enforcing = config->mode == MOAT_DETECTOR_MODE_ALWAYS;
}

double moat_detector_rate(const moat_detector *detector)
{
    return detector->window_packets * (1e6 / (MOAT_DETECTOR_SLOTS * MOAT_DETECTOR_SLOT_US));
}

static moat_anomaly detect(const moat_detector *detector)
{
    const double window_s = (MOAT_DETECTOR_SLOTS * MOAT_DETECTOR_SLOT_US) / 1e6;
    if (detector->window_failures >= detector->config.auth_failures_per_s * window_s)
        return MOAT_ANOMALY_AUTH_FAILURES;
    double reference = detector->config.declared_pps;
    if (detector->learned_slots >= LEARNING_SLOTS && detector->baseline_pps > reference)
        reference = detector->baseline_pps;
    if (reference <= 0)
        return MOAT_ANOMALY_NONE;
    double rate = moat_detector_rate(detector);
    if (rate > detector->config.rate_factor * reference &&
        rate > reference + detector->config.min_excess_pps)
        return MOAT_ANOMALY_RATE;
    return MOAT_ANOMALY_NONE;
}

/* Moves the ring to the slot of `now`, learning from each slot that closes. */
static void advance(moat_detector *detector, uint64_t now_us)
{
    uint64_t slot = now_us / MOAT_DETECTOR_SLOT_US;
    if (slot <= detector->current_slot)
        return;
    uint64_t steps = slot - detector->current_slot;
    if (!detector->enforcing && detector->last_anomaly_us + MOAT_DETECTOR_SLOT_US * 10 < now_us) {
        /* Learn only from calm windows, so an attack does not become normal. */
        double rate = moat_detector_rate(detector);
        if (detector->learned_slots == 0)
            detector->baseline_pps = rate;
        else
            detector->baseline_pps += BASELINE_WEIGHT * (rate - detector->baseline_pps);
        detector->learned_slots++;
    }
    if (steps > MOAT_DETECTOR_SLOTS)
        steps = MOAT_DETECTOR_SLOTS;
    for (uint64_t i = 1; i <= steps; i++) {
        unsigned index = (unsigned)((detector->current_slot + i) % MOAT_DETECTOR_SLOTS);
        detector->window_packets -= detector->packets[index];
        detector->window_failures -= detector->failures[index];
        detector->packets[index] = 0;
        detector->failures[index] = 0;
    }
    detector->current_slot = slot;
}

static moat_detector_event evaluate(moat_detector *detector, uint64_t now_us)
{
    if (detector->config.mode != MOAT_DETECTOR_MODE_AUTO)
        return MOAT_DETECTOR_EVENT_NONE;
    moat_anomaly anomaly = detect(detector);
    if (anomaly == MOAT_ANOMALY_NONE)
        return MOAT_DETECTOR_EVENT_NONE;
    detector->last_anomaly_us = now_us;
    detector->last_anomaly = anomaly;
    if (detector->enforcing)
        return MOAT_DETECTOR_EVENT_NONE;
    detector->enforcing = true;
    detector->switched_on_us = now_us;
    detector->clean_since_us = now_us;
    detector->clean_packets = 0;
    detector->switches_on++;
    return MOAT_DETECTOR_EVENT_ON;
}

moat_detector_event moat_detector_on_packet(moat_detector *detector, uint64_t arrival_us)
{
    advance(detector, arrival_us);
    /* A packet the gateway reads late (its own backlog) counts in the slot it
     * arrived in; one that arrived before the window is not part of the
     * current rate at all. Otherwise a backlog drained in one wake-up would
     * look like a burst of the stream that merely waited in the queue. */
    uint64_t slot = arrival_us / MOAT_DETECTOR_SLOT_US;
    if (slot + MOAT_DETECTOR_SLOTS <= detector->current_slot)
        return MOAT_DETECTOR_EVENT_NONE;
    unsigned index = (unsigned)(slot % MOAT_DETECTOR_SLOTS);
    detector->packets[index]++;
    detector->window_packets++;
    detector->clean_packets++;
    /* A rate test per packet would cost more than the packet is worth: test
     * once per slot and whenever the window grows by a power of two. */
    if ((detector->window_packets & (detector->window_packets - 1)) == 0 ||
        detector->packets[index] == 1)
        return evaluate(detector, arrival_us);
    return MOAT_DETECTOR_EVENT_NONE;
}

moat_detector_event moat_detector_on_failure(moat_detector *detector, uint64_t now_us)
{
    advance(detector, now_us);
    unsigned index = (unsigned)(detector->current_slot % MOAT_DETECTOR_SLOTS);
    detector->failures[index]++;
    detector->window_failures++;
    detector->clean_since_us = now_us;
    detector->clean_packets = 0;
    return evaluate(detector, now_us);
}

/* A rate anomaly that lasts past the hold time without one failed
 * authentication is a peer sending more than it declared (or than it used
 * to), not a forgery: the rate since the last failure (or the switch-on)
 * becomes the baseline, learned, so the same rate is no anomaly any more. */
static void adopt_rate(moat_detector *detector, uint64_t now_us)
{
    double seconds = (now_us - detector->clean_since_us) / 1e6;
    if (seconds > 0)
        detector->baseline_pps = detector->clean_packets / seconds;
    if (detector->learned_slots < LEARNING_SLOTS)
        detector->learned_slots = LEARNING_SLOTS;
    detector->rates_adopted++;
}

static moat_detector_event switch_off(moat_detector *detector)
{
    detector->enforcing = false;
    detector->switches_off++;
    return MOAT_DETECTOR_EVENT_OFF;
}

moat_detector_event moat_detector_tick(moat_detector *detector, uint64_t now_us)
{
    advance(detector, now_us);
    moat_detector_event event = evaluate(detector, now_us);
    if (event != MOAT_DETECTOR_EVENT_NONE)
        return event;
    if (!detector->enforcing || detector->config.mode != MOAT_DETECTOR_MODE_AUTO)
        return MOAT_DETECTOR_EVENT_NONE;
    uint64_t hold_us = (uint64_t)detector->config.hold_ms * 1000u;
    if (now_us - detector->last_anomaly_us >= hold_us)
        return switch_off(detector);
    /* Only failures keep it on: a rate anomaly still there after the hold
     * time without one failure is the peer's own rate. */
    if (now_us - detector->clean_since_us >= hold_us && detect(detector) == MOAT_ANOMALY_RATE) {
        adopt_rate(detector, now_us);
        return switch_off(detector);
    }
    return MOAT_DETECTOR_EVENT_NONE;
}

const char *moat_anomaly_name(moat_anomaly anomaly)
{
    switch (anomaly) {
    case MOAT_ANOMALY_RATE:
        return "ingress_rate";
    case MOAT_ANOMALY_AUTH_FAILURES:
        return "auth_failures";
    default:
        return "none";
    }
}

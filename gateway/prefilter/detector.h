/* The ingress anomaly detector (DESIGN.md, "The detector"). One per transport
 * and one per worker socket. It watches the ingress packet rate over a 100 ms
 * sliding window (ten 10 ms slots) against a learned baseline (EWMA) and the
 * rate the SDP declared, and srtp_unprotect failures per second. States: off
 * (legitimate traffic pays nothing) and enforcing. It switches on as soon as
 * an anomaly shows, even between timer ticks; it switches off after a hold
 * time without anomaly. Only failures (forgeries) keep it on longer: a rate
 * anomaly without a single failure for the hold time is a peer that sends
 * more than it declared, whose rate since then becomes the baseline as the
 * detector switches off. Pure state, time passed in, no clock reads. */
#ifndef MOAT_DETECTOR_H
#define MOAT_DETECTOR_H

#include <stdbool.h>
#include <stdint.h>

#define MOAT_DETECTOR_SLOTS   10
#define MOAT_DETECTOR_SLOT_US 10000u

typedef enum {
    MOAT_DETECTOR_MODE_OFF = 0,
    MOAT_DETECTOR_MODE_AUTO = 1,
    MOAT_DETECTOR_MODE_ALWAYS = 2,
} moat_detector_mode;

typedef enum {
    MOAT_DETECTOR_EVENT_NONE = 0,
    MOAT_DETECTOR_EVENT_ON,
    MOAT_DETECTOR_EVENT_OFF,
} moat_detector_event;

typedef enum {
    MOAT_ANOMALY_NONE = 0,
    MOAT_ANOMALY_RATE,
    MOAT_ANOMALY_AUTH_FAILURES,
} moat_anomaly;

typedef struct {
    moat_detector_mode mode;
    uint32_t hold_ms;
    double rate_factor;           /* anomaly above rate_factor x max(baseline, declared) */
    uint32_t min_excess_pps;      /* ... and at least this many packets/s above it */
    uint32_t auth_failures_per_s; /* anomaly at or above this failure rate */
    uint32_t declared_pps;        /* what the SDP lets us expect; 0 if unknown */
} moat_detector_config;

typedef struct {
    moat_detector_config config;
    bool enforcing;
    uint64_t current_slot; /* absolute slot number (now / slot length) */
    uint32_t packets[MOAT_DETECTOR_SLOTS];
    uint32_t failures[MOAT_DETECTOR_SLOTS];
    uint32_t window_packets; /* sums over the ring */
    uint32_t window_failures;
    double baseline_pps;
    uint32_t learned_slots; /* slots that fed the baseline */
    uint64_t last_anomaly_us;
    uint64_t switched_on_us;
    /* Since when no failure came (the later of the last failure and the
     * switch-on), and the packets counted since then. */
    uint64_t clean_since_us;
    uint64_t clean_packets;
    uint64_t switches_on;
    uint64_t switches_off;
    uint64_t rates_adopted; /* switch-offs whose rate became the baseline */
    moat_anomaly last_anomaly;
} moat_detector;

void moat_detector_init(moat_detector *detector, const moat_detector_config *config,
                        uint64_t now_us);
/* Every datagram that reaches the transport (or the worker socket), stamped
 * with the time the kernel received it (the rate is the wire's, not the rate
 * at which a late gateway drains its queue); a packet older than the window
 * is not counted. Returns MOAT_DETECTOR_EVENT_ON when this packet tipped it
 * into enforcing. */
moat_detector_event moat_detector_on_packet(moat_detector *detector, uint64_t arrival_us);
/* An srtp_unprotect failure (or, for a worker, any dropped datagram). */
moat_detector_event moat_detector_on_failure(moat_detector *detector, uint64_t now_us);
/* Timer: rotates the window, learns the baseline, switches off after the
 * hold time without anomaly, or, while only the rate is anomalous, after the
 * hold time without failure (the rate since the last failure or the
 * switch-on becomes the baseline). */
moat_detector_event moat_detector_tick(moat_detector *detector, uint64_t now_us);

static inline bool moat_detector_enforcing(const moat_detector *detector)
{
    return detector->enforcing;
}

/* Packets per second over the current window. */
double moat_detector_rate(const moat_detector *detector);
const char *moat_anomaly_name(moat_anomaly anomaly);

#endif

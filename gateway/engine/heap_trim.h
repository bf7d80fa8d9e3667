/* When a worker gives the C heap's free pages back to the kernel.
 *
 * A DTLS handshake allocates about 100 KB for a moment (certificates, key
 * exchange, handshake messages) among a session's long-lived allocations;
 * glibc keeps the freed pages, so a burst of handshakes leaves RSS well
 * above the live heap (docs/MEMORY.md). malloc_trim(0) returns every whole
 * free page of every arena (MADV_DONTNEED), at a cost that grows with the
 * heap, so a worker calls it from its tick, never per packet: once
 * handshakes (or session ends) have been quiet for MOAT_HEAP_TRIM_QUIET_US,
 * or after MOAT_HEAP_TRIM_MAX_WAIT_US of steady arrivals, and never twice
 * within MOAT_HEAP_TRIM_INTERVAL_US.
 *
 * moat_heap_trim_due is pure logic; the state belongs to one worker thread. */
#ifndef MOAT_HEAP_TRIM_H
#define MOAT_HEAP_TRIM_H

#include <stdbool.h>
#include <stdint.h>

#define MOAT_HEAP_TRIM_QUIET_US    500000ull
#define MOAT_HEAP_TRIM_MAX_WAIT_US 10000000ull
#define MOAT_HEAP_TRIM_INTERVAL_US 5000000ull

typedef struct {
    uint64_t events_seen;    /* the event count at the last call */
    bool pending;            /* events since the last trim */
    uint64_t first_event_us; /* the first of them */
    uint64_t last_event_us;  /* the newest of them */
    uint64_t last_trim_us;   /* 0: never */
} moat_heap_trim;

/* `events`: a count that only grows (handshakes done or failed, sessions
 * ended). True when a trim should run now; the caller then runs it and
 * the state counts it as done. */
bool moat_heap_trim_due(moat_heap_trim *trim, uint64_t events, uint64_t now_us);

/* malloc_trim(0) where the C library has it; the nanoseconds it took. */
uint64_t moat_heap_trim_run(void);

#endif

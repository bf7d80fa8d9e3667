/* The control thread's state (gateway_state.h): which worker takes the next
 * session, and the host candidates a worker's sessions announce. */
#include "session/gateway_state.h"

#include "ice/ice_candidates.h"

#include <stdio.h>
#include <string.h>

/* Local preference: earlier addresses (the announced one first) are
 * preferred, and every loopback address comes below every other one
 * (65535 - index against 15 - index): a client on another host then tries
 * the host's real addresses first, one on this host can still use it. */
uint32_t moat_gateway_candidate_priority(size_t index, const char *address)
{
    if (index >= MOAT_MAX_CANDIDATE_ADDRESSES)
        index = MOAT_MAX_CANDIDATE_ADDRESSES - 1;
    if (moat_ice_text_is_loopback(address))
        return moat_ice_host_priority(MOAT_MAX_CANDIDATE_ADDRESSES - 1 - (uint32_t)index, 1);
    return moat_ice_host_priority(65535 - (uint32_t)index, 1);
}

size_t moat_gateway_candidates(const moat_gateway *gateway, const moat_worker *worker,
                               moat_sdp_candidate *out, size_t capacity)
{
    size_t n = 0;
    for (size_t i = 0; i < gateway->n_candidate_addresses && n < capacity; i++) {
        moat_sdp_candidate *candidate = &out[n++];
        memset(candidate, 0, sizeof *candidate);
        snprintf(candidate->foundation, sizeof candidate->foundation, "%zu", i + 1);
        candidate->component = 1;
        g_strlcpy(candidate->transport, "udp", sizeof candidate->transport);
        candidate->priority = moat_gateway_candidate_priority(i, gateway->candidate_addresses[i]);
        g_strlcpy(candidate->address, gateway->candidate_addresses[i], sizeof candidate->address);
        candidate->port = moat_worker_port(worker);
        g_strlcpy(candidate->type, "host", sizeof candidate->type);
    }
    return n;
}

moat_worker *moat_gateway_pick_worker(moat_gateway *gateway)
{
    /* Fewest sessions first; ties go round-robin so equal load spreads. */
    moat_worker *best = NULL;
    unsigned best_count = 0;
    for (unsigned k = 0; k < gateway->n_workers; k++) {
        moat_worker *worker = gateway->workers[(gateway->next_worker + k) % gateway->n_workers];
        unsigned count = moat_worker_session_count(worker);
        if (!best || count < best_count) {
            best = worker;
            best_count = count;
        }
    }
    gateway->next_worker = (gateway->next_worker + 1) % gateway->n_workers;
    return best;
}

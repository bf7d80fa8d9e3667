/* libFuzzer target for the ICE-lite pair table (ice_pairs.c): any sequence of
 * authenticated checks, restarts and clock steps keeps the table's
 * invariants: at most MOAT_ICE_PAIRS_MAX pairs, a selection that never goes
 * away once made and always names a live pair, and bind/unbind reports that
 * keep a tuple table in step with the pairs' remotes (no stale entry left in
 * the worker's table, none missing). */
#include "ice/ice_pairs.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define REMOTES 12

static struct sockaddr_in6 remote_of(unsigned n)
{
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = (uint16_t)(1000 + n)};
    a.sin6_addr.s6_addr[15] = (uint8_t)n;
    return a;
}

static int remote_index(const struct sockaddr_in6 *a)
{
    for (unsigned i = 0; i < REMOTES; i++) {
        struct sockaddr_in6 r = remote_of(i);
        if (memcmp(&r.sin6_addr, &a->sin6_addr, sizeof r.sin6_addr) == 0 &&
            r.sin6_port == a->sin6_port)
            return (int)i;
    }
    return -1;
}

static void check_invariants(const moat_ice_pairs *p, const bool bound[REMOTES])
{
    if (p->n_pairs > MOAT_ICE_PAIRS_MAX || p->selected >= (int)p->n_pairs)
        __builtin_trap();
    bool used[REMOTES] = {false};
    for (size_t i = 0; i < p->n_pairs; i++) {
        int r = remote_index(&p->pairs[i].remote);
        if (r < 0)
            __builtin_trap();
        used[r] = true;
    }
    for (unsigned i = 0; i < REMOTES; i++) {
        if (used[i] != bound[i])
            __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    bool bound[REMOTES] = {false};
    bool ever_selected = false;
    uint64_t now = 0;
    for (size_t at = 0; at + 6 <= size; at += 6) {
        const uint8_t *r = data + at;
        now += (uint64_t)r[5] * 100000u; /* up to 25.5 s per step */
        if (r[0] == 0xff) {
            moat_ice_pairs_restart(&p);
            continue;
        }
        struct sockaddr_in6 remote = remote_of(r[0] % REMOTES);
        struct in6_addr local = {.s6_addr = {[15] = (uint8_t)(r[1] & 3)}};
        uint8_t transaction[12] = {r[4], r[4] >> 1};
        moat_ice_check_event e = {
            .remote = &remote,
            .local = &local,
            .remote_priority = (uint32_t)r[2] << 24 | 0xffff,
            .local_priority = (uint32_t)(r[1] >> 2) << 8,
            .nominated = r[3] & 1,
            .previous_generation = r[3] & 2,
            .transaction = transaction,
            .now_us = now,
        };
        moat_ice_pairs_outcome out;
        bool replay = moat_ice_pairs_is_replay(&p, &e);
        moat_ice_pairs_verdict v = moat_ice_pairs_on_check(&p, &e, &out);
        if (replay != (v == MOAT_ICE_PAIRS_REPLAY))
            __builtin_trap();
        if (out.unbind) {
            int i = remote_index(&out.evicted);
            if (i < 0 || !bound[i])
                __builtin_trap();
            bound[i] = false;
        }
        if (out.bind) {
            if (bound[remote_index(&remote)])
                __builtin_trap();
            bound[remote_index(&remote)] = true;
        }
        if (ever_selected && p.selected < 0)
            __builtin_trap();
        ever_selected = p.selected >= 0;
        if (out.selection_changed &&
            (p.selected < 0 || remote_index(&p.pairs[p.selected].remote) != remote_index(&remote)))
            __builtin_trap();
        check_invariants(&p, bound);
    }
    return 0;
}

/* The flow table of tunnel_flows.h: open addressing over the flow key,
 * linear probes, tombstones for forgotten flows, a sweep once a second. */
#include "tunnel_flows.h"

#include <string.h>

#define TUNNEL_FLOW_EMPTY 0u
#define TUNNEL_FLOW_GONE  UINT32_MAX

void tunnel_flows_init(tunnel_flows *flows, double now_s)
{
    memset(flows, 0, sizeof *flows);
    flows->swept_s = now_s;
}

/* Forgets flows idle TUNNEL_FLOW_IDLE_S (at most once a second). */
static void sweep(tunnel_flows *flows, double now_s)
{
    if (now_s - flows->swept_s < 1.0)
        return;
    flows->swept_s = now_s;
    for (size_t i = 0; i < TUNNEL_FLOW_SLOTS; i++) {
        tunnel_flow_slot *s = &flows->slots[i];
        if (s->key == TUNNEL_FLOW_EMPTY || s->key == TUNNEL_FLOW_GONE ||
            now_s - s->last_s <= TUNNEL_FLOW_IDLE_S)
            continue;
        s->key = TUNNEL_FLOW_GONE;
        flows->live[s->lane]--;
    }
}

static unsigned least_loaded(const tunnel_flows *flows, unsigned lanes)
{
    unsigned best = 0;
    for (unsigned l = 1; l < lanes; l++) {
        if (flows->live[l] < flows->live[best])
            best = l;
    }
    return best;
}

static void take(tunnel_flows *flows, tunnel_flow_slot *s, uint32_t key, unsigned lanes,
                 double now_s)
{
    s->key = key;
    s->lane = (uint8_t)least_loaded(flows, lanes);
    s->last_s = now_s;
    flows->live[s->lane]++;
}

unsigned tunnel_flows_lane(tunnel_flows *flows, const uint8_t *packet, size_t length,
                           unsigned lanes, double now_s)
{
    uint32_t key;
    if (lanes > TUNNEL_MAX_LANES)
        lanes = TUNNEL_MAX_LANES;
    if (lanes <= 1 || !tunnel_flow_of(packet, length, &key))
        return 0;
    if (key == TUNNEL_FLOW_EMPTY || key == TUNNEL_FLOW_GONE)
        key = 1; /* the two marks are no flow's key */
    sweep(flows, now_s);
    tunnel_flow_slot *free_slot = NULL;
    for (size_t i = 0; i < TUNNEL_FLOW_PROBES; i++) {
        tunnel_flow_slot *s = &flows->slots[(key + i) % TUNNEL_FLOW_SLOTS];
        if (s->key == key) {
            s->last_s = now_s;
            return s->lane < lanes ? s->lane : 0;
        }
        if (s->key == TUNNEL_FLOW_GONE && !free_slot)
            free_slot = s;
        if (s->key == TUNNEL_FLOW_EMPTY) {
            if (!free_slot)
                free_slot = s;
            break; /* the flow is not further on */
        }
    }
    if (!free_slot)
        return key % lanes; /* no room near its slot: the key decides */
    take(flows, free_slot, key, lanes, now_s);
    return free_slot->lane;
}

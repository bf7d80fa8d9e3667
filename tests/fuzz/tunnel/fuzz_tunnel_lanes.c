/* libFuzzer target: the tunnel's lanes. The first byte picks the surface:
 * even, the plugin's lane resource (tunnel_resource_parse: what follows
 * /whip/tunnel/ in a POST, read by place() and attach) never reads past the
 * string and, when it accepts one, gives a valid name, a key of 16 to 64
 * characters or none, and a lane of 0 to 999; odd, moat-tunnel's lane of a
 * packet (tunnel_lane_of, a TUN packet's 5-tuple) never reads past the
 * packet and is below the lane count, and so is its lane from a flow table
 * kept across inputs (tunnel_flows_lane, the clock advancing a second an
 * input so flows are forgotten too), which never counts more flows than
 * it has slots. */
#include "tunnel.h"
#include "tunnel_flows.h"
#include "tunnel_lane.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    if (data[0] % 2 == 0) {
        char *text = malloc(size);
        memcpy(text, data + 1, size - 1);
        text[size - 1] = '\0';
        tunnel_resource r;
        bool bad_lane = false;
        if (!tunnel_resource_parse(text, &r, &bad_lane)) {
            if (!tunnel_name_valid(r.name, strlen(r.name)) || bad_lane)
                abort();
            size_t key = strlen(r.key);
            if ((key != 0 && (key < TUNNEL_KEY_MIN || key >= TUNNEL_KEY_SIZE)) || r.lane < 0 ||
                r.lane > 999)
                abort();
        }
        free(text);
        return 0;
    }
    unsigned lanes = 1 + data[1] % TUNNEL_MAX_LANES;
    uint8_t *packet = malloc(size - 2 + 1);
    memcpy(packet, data + 2, size - 2);
    if (tunnel_lane_of(packet, size - 2, lanes) >= lanes)
        abort();
    static tunnel_flows flows;
    static double now_s;
    if (now_s == 0)
        tunnel_flows_init(&flows, 0);
    now_s += 1;
    if (tunnel_flows_lane(&flows, packet, size - 2, lanes, now_s) >= lanes)
        abort();
    unsigned live = 0;
    for (unsigned l = 0; l < TUNNEL_MAX_LANES; l++)
        live += flows.live[l];
    if (live > TUNNEL_FLOW_SLOTS)
        abort();
    free(packet);
    return 0;
}

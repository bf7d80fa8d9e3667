/* How a peer names its lanes to the gateway: one lane uses the WHIP URL
 * itself (a one-lane peer, as before lanes); several use
 * <WHIP URL>/<key>/<lane> with one random key for the peer (the gateway's
 * plugins/tunnel binds lanes with the same key to one side). */
#ifndef TUNNEL_LANE_URL_H
#define TUNNEL_LANE_URL_H

/* Fills urls[0 .. n - 1] (each g_free). */
void tunnel_lane_urls(char **urls, unsigned n, const char *whip_url);

#endif

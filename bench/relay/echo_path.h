/* The echo plugin's per-packet path as the gateway drives it, without
 * sockets or SRTP: the core's header parse, then (plugin API v2) the core's
 * BUNDLE demux and on_media, or (v1) on_rtp doing its own parse and routing;
 * the gateway's send_rtp parses again and copies into a send buffer. The
 * same file builds against either API, so a tree before the routing core
 * gives the "before" figure (README: bench/relay). */
#ifndef MOAT_BENCH_ECHO_PATH_H
#define MOAT_BENCH_ECHO_PATH_H

/* Nanoseconds per packet over `packets` packets (audio and video m-lines,
 * mid extension, two SSRCs). */
double echo_path_ns(unsigned packets);

#endif

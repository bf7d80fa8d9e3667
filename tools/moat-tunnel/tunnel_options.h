/* moat-tunnel's command line: what to carry IP packets over and where. Pure
 * parsing (no I/O), so the unit tests exercise it. */
#ifndef TUNNEL_OPTIONS_H
#define TUNNEL_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { TUNNEL_TRANSPORT_SCTP, TUNNEL_TRANSPORT_TCP, TUNNEL_TRANSPORT_UDP } tunnel_transport;
typedef enum { TUNNEL_MODE_ORDERED, TUNNEL_MODE_UNORDERED, TUNNEL_MODE_UNRELIABLE } tunnel_mode;
/* The SCTP association's congestion control (usrsctp's modules, its
 * SCTP_CC_* numbers). RFC 9260's own (Reno-like) is the tunnel's default:
 * under 1 % random loss at 71 ms usrsctp's H-TCP (the gateway's default)
 * backs off to two packets and held the tunnel's window at about three
 * (bench/tunnel; README.md, "IP over data channels"). */
typedef enum { TUNNEL_SCTP_CC_RFC2581 = 0, TUNNEL_SCTP_CC_HTCP = 2 } tunnel_sctp_cc;

/* The gateway's SCTP packets are MOAT_SCTP_MTU (1200) bytes: an IP packet
 * of 1200 - 12 (common header) - 16 (DATA chunk header) bytes is one chunk in
 * one SCTP packet in one DTLS record, never split across two. The
 * baselines use the same MTU so every transport carries the same packets. */
#define TUNNEL_DEFAULT_MTU 1172
#define TUNNEL_MIN_MTU     576
#define TUNNEL_MAX_MTU     16000
/* SCTP lanes by default (the gateway's cap): under 1 % random loss each
 * association halves its own window, so flows on other lanes keep theirs.
 * bench/tunnel at 71 ms with 1 % loss, ten flows: 1 lane 1.2 Mbit/s, 4 lanes
 * 2.2, 8 lanes 5.4 (TLS/TCP 1.7); clean at 7 ms, CPU-bound on a loaded
 * 2-core host, 8 lanes carried 0.78 of one lane (README.md, "IP over data
 * channels"). */
#define TUNNEL_DEFAULT_LANES 8

typedef struct {
    tunnel_transport transport;
    tunnel_mode mode;
    const char *tun_name; /* "" lets the kernel pick */
    const char *address;  /* IPv4 CIDR of our end of the tunnel */
    unsigned mtu;
    const char *whip_url;         /* sctp */
    const char *token;            /* sctp: the API token (or MOAT_API_TOKEN) */
    const char *listen;           /* tcp/udp: HOST:PORT to wait on */
    const char *connect;          /* tcp/udp: HOST:PORT to reach */
    const char *cert, *key;       /* PEM identity; generated when absent */
    const char *peer_fingerprint; /* tcp/udp: sha-256 of the other end */
    const char *tcp_congestion;   /* tcp: TCP_CONGESTION of the connection, NULL default */
    double keepalive_s;           /* ICE consent / baseline keepalive interval */
    double dead_s;                /* no answer this long: the path is gone */
    double progress_s;            /* a progress line this often, 0 none */
    double setup_timeout_s;
    unsigned reconnects; /* sctp: ICE restarts tried after a path loss */
    tunnel_sctp_cc sctp_cc;
    unsigned lanes; /* sctp: associations (WHIP sessions), 1 to TUNNEL_MAX_LANES */
    bool lanes_set;
    bool allow_any_source; /* packets from the peer may have any source (tunnel_source.h) */
    bool help;
} tunnel_options;

/* Fills o from argv (defaults for what is absent). 0, or -1 with a message
 * in error. */
int tunnel_options_parse(tunnel_options *o, int argc, char **argv, char *error, size_t error_size);
const char *tunnel_mode_name(tunnel_mode mode);
const char *tunnel_transport_name(tunnel_transport transport);
extern const char tunnel_options_usage[];

#endif

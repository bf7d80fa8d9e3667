/* Parses moat-tunnel's command line (tunnel_options.h). */
#include "tunnel_options.h"

#include "tunnel_lane.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char tunnel_options_usage[] =
    "usage: moat-tunnel --address CIDR [options]\n"
    "Carries IP packets between this host's TUN device and a peer, one packet per message.\n"
    "\n"
    "  --transport sctp|tcp|udp  sctp (default): a WebRTC data channel through a Moat\n"
    "                            gateway's tunnel plugin (WHIP); tcp: length-prefixed packets\n"
    "                            over TLS/TCP; udp: one packet per DTLS record (baselines,\n"
    "                            spoken directly between the two peers)\n"
    "  --mode ordered|unordered|unreliable\n"
    "                            sctp: the channel's mode (unreliable: max-retransmits 0)\n"
    "  --whip URL                sctp: http://gateway:port/whip/tunnel/<name>\n"
    "  --token TOKEN             sctp: the gateway's API token (default: $MOAT_API_TOKEN)\n"
    "  --listen HOST:PORT        tcp/udp: wait for the other peer here (strangers who\n"
    "                            fail the handshake are refused and the next tried)\n"
    "  --connect HOST:PORT       tcp/udp: reach the other peer there\n"
    "  --cert PEM --key PEM      our identity (default: a fresh certificate)\n"
    "  --peer-fingerprint FP     tcp/udp: the other peer's sha-256 fingerprint (required)\n"
    "  --tcp-congestion NAME     tcp: the connection's congestion control (e.g. cubic)\n"
    "  --sctp-congestion rfc2581|htcp\n"
    "                            sctp: the association's congestion control (default rfc2581)\n"
    "  --lanes K                 sctp: K associations (WHIP sessions, 1 to 8; default 8), each\n"
    "                            its own congestion window; each TCP/UDP flow keeps to one lane,\n"
    "                            a new flow taking the lane with the fewest; tcp: K TLS\n"
    "                            connections (default 1), the flows spread the same way\n"
    "  --tun NAME                the TUN device's name (default: the kernel's choice)\n"
    "  --address CIDR            our IPv4 address in the tunnel, e.g. 10.99.0.1/24\n"
    "  --allow-any-source        write packets from the peer to the TUN device whatever\n"
    "                            their source; by default only IPv4 from --address's\n"
    "                            subnet (not ours) and link-local IPv6 pass, the rest is\n"
    "                            dropped (foreign_source in the summary), so the peer\n"
    "                            cannot inject packets from other addresses into this\n"
    "                            host or the networks it routes to\n"
    "  --mtu N                   the TUN device's MTU (default 1172: one packet, one SCTP\n"
    "                            chunk, one DTLS record)\n"
    "  --keepalive S             keepalive (ICE consent) interval (default 2)\n"
    "  --dead S                  no answer for this long: the path is lost (default 15)\n"
    "  --reconnects N            sctp: ICE restarts tried after a path loss (default 3)\n"
    "  --progress S              a progress line on stderr every S seconds (default 10, 0: none)\n"
    "  --setup-timeout S         connecting gives up after S seconds (default 15); a\n"
    "                            lane's WHIP POST and its Retry-After waits end by then\n"
    "  --help\n"
    "Needs CAP_NET_ADMIN for the TUN device. SIGINT/SIGTERM end it with a summary.\n";

const char *tunnel_mode_name(tunnel_mode mode)
{
    return mode == TUNNEL_MODE_ORDERED     ? "ordered"
           : mode == TUNNEL_MODE_UNORDERED ? "unordered"
                                           : "unreliable";
}

const char *tunnel_transport_name(tunnel_transport transport)
{
    return transport == TUNNEL_TRANSPORT_SCTP  ? "sctp"
           : transport == TUNNEL_TRANSPORT_TCP ? "tcp"
                                               : "udp";
}

static bool parse_seconds(const char *text, double max, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!end || *end || end == text || !(v >= 0) || v > max)
        return false;
    *out = v;
    return true;
}

static bool parse_unsigned(const char *text, unsigned long min, unsigned long max, unsigned *out)
{
    char *end = NULL;
    unsigned long v = strtoul(text, &end, 10);
    if (!end || *end || end == text || text[0] == '-' || v < min || v > max)
        return false;
    *out = (unsigned)v;
    return true;
}

static void defaults(tunnel_options *o)
{
    memset(o, 0, sizeof *o);
    o->transport = TUNNEL_TRANSPORT_SCTP;
    o->mode = TUNNEL_MODE_ORDERED;
    o->tun_name = "";
    o->mtu = TUNNEL_DEFAULT_MTU;
    o->keepalive_s = 2;
    o->dead_s = 15;
    o->progress_s = 10;
    o->setup_timeout_s = 15;
    o->reconnects = 3;
    o->sctp_cc = TUNNEL_SCTP_CC_RFC2581;
    o->lanes = TUNNEL_DEFAULT_LANES;
    o->token = getenv("MOAT_API_TOKEN");
}

/* What the options say together; NULL when they fit. */
static const char *check(const tunnel_options *o)
{
    if (o->help)
        return NULL;
    if (!o->address)
        return "--address is required";
    if (o->transport == TUNNEL_TRANSPORT_SCTP) {
        if (!o->whip_url)
            return "--transport sctp needs --whip URL";
        if (o->listen || o->connect)
            return "--listen/--connect are for --transport tcp|udp";
    } else {
        if (!o->listen == !o->connect)
            return "--transport tcp|udp needs exactly one of --listen and --connect";
        if (!o->peer_fingerprint)
            return "--transport tcp|udp needs --peer-fingerprint (the other end's identity)";
        if (o->mode != TUNNEL_MODE_ORDERED)
            return "--mode is for --transport sctp";
        if (o->lanes_set && o->transport == TUNNEL_TRANSPORT_UDP)
            return "--lanes is for --transport sctp|tcp";
    }
    if (!o->cert != !o->key)
        return "--cert and --key go together";
    if (o->keepalive_s <= 0 || o->dead_s <= o->keepalive_s)
        return "--dead must be longer than --keepalive (both above 0)";
    return NULL;
}

enum {
    OPT_TRANSPORT = 256,
    OPT_MODE,
    OPT_WHIP,
    OPT_TOKEN,
    OPT_LISTEN,
    OPT_CONNECT,
    OPT_CERT,
    OPT_KEY,
    OPT_PEER_FP,
    OPT_TUN,
    OPT_ADDRESS,
    OPT_MTU,
    OPT_KEEPALIVE,
    OPT_DEAD,
    OPT_RECONNECTS,
    OPT_PROGRESS,
    OPT_SETUP,
    OPT_TCP_CC,
    OPT_SCTP_CC,
    OPT_LANES,
    OPT_ANY_SOURCE,
    OPT_HELP,
};

static const struct option long_options[] = {
    {"transport", required_argument, NULL, OPT_TRANSPORT},
    {"mode", required_argument, NULL, OPT_MODE},
    {"whip", required_argument, NULL, OPT_WHIP},
    {"token", required_argument, NULL, OPT_TOKEN},
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"connect", required_argument, NULL, OPT_CONNECT},
    {"cert", required_argument, NULL, OPT_CERT},
    {"key", required_argument, NULL, OPT_KEY},
    {"peer-fingerprint", required_argument, NULL, OPT_PEER_FP},
    {"tun", required_argument, NULL, OPT_TUN},
    {"address", required_argument, NULL, OPT_ADDRESS},
    {"mtu", required_argument, NULL, OPT_MTU},
    {"keepalive", required_argument, NULL, OPT_KEEPALIVE},
    {"dead", required_argument, NULL, OPT_DEAD},
    {"reconnects", required_argument, NULL, OPT_RECONNECTS},
    {"progress", required_argument, NULL, OPT_PROGRESS},
    {"setup-timeout", required_argument, NULL, OPT_SETUP},
    {"tcp-congestion", required_argument, NULL, OPT_TCP_CC},
    {"sctp-congestion", required_argument, NULL, OPT_SCTP_CC},
    {"lanes", required_argument, NULL, OPT_LANES},
    {"allow-any-source", no_argument, NULL, OPT_ANY_SOURCE},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* One option's value into o; false when it is not valid. */
static bool take(tunnel_options *o, int opt, const char *v)
{
    switch (opt) {
    case OPT_TRANSPORT:
        if (strcmp(v, "sctp") == 0)
            o->transport = TUNNEL_TRANSPORT_SCTP;
        else if (strcmp(v, "tcp") == 0)
            o->transport = TUNNEL_TRANSPORT_TCP;
        else if (strcmp(v, "udp") == 0)
            o->transport = TUNNEL_TRANSPORT_UDP;
        else
            return false;
        return true;
    case OPT_MODE:
        if (strcmp(v, "ordered") == 0)
            o->mode = TUNNEL_MODE_ORDERED;
        else if (strcmp(v, "unordered") == 0)
            o->mode = TUNNEL_MODE_UNORDERED;
        else if (strcmp(v, "unreliable") == 0)
            o->mode = TUNNEL_MODE_UNRELIABLE;
        else
            return false;
        return true;
    case OPT_WHIP:
        o->whip_url = v;
        return true;
    case OPT_TOKEN:
        o->token = v;
        return true;
    case OPT_LISTEN:
        o->listen = v;
        return true;
    case OPT_CONNECT:
        o->connect = v;
        return true;
    case OPT_CERT:
        o->cert = v;
        return true;
    case OPT_KEY:
        o->key = v;
        return true;
    case OPT_PEER_FP:
        o->peer_fingerprint = v;
        return true;
    case OPT_TUN:
        o->tun_name = v;
        return strlen(v) < 16;
    case OPT_ADDRESS:
        o->address = v;
        return true;
    case OPT_MTU:
        return parse_unsigned(v, TUNNEL_MIN_MTU, TUNNEL_MAX_MTU, &o->mtu);
    case OPT_KEEPALIVE:
        return parse_seconds(v, 3600, &o->keepalive_s);
    case OPT_DEAD:
        return parse_seconds(v, 3600, &o->dead_s);
    case OPT_RECONNECTS:
        return parse_unsigned(v, 0, 1000, &o->reconnects);
    case OPT_PROGRESS:
        return parse_seconds(v, 86400, &o->progress_s);
    case OPT_SETUP:
        return parse_seconds(v, 3600, &o->setup_timeout_s) && o->setup_timeout_s > 0;
    case OPT_TCP_CC:
        o->tcp_congestion = v;
        return strlen(v) > 0 && strlen(v) < 16;
    case OPT_SCTP_CC:
        if (strcmp(v, "rfc2581") == 0)
            o->sctp_cc = TUNNEL_SCTP_CC_RFC2581;
        else if (strcmp(v, "htcp") == 0)
            o->sctp_cc = TUNNEL_SCTP_CC_HTCP;
        else
            return false;
        return true;
    case OPT_LANES:
        o->lanes_set = true;
        return parse_unsigned(v, 1, TUNNEL_MAX_LANES, &o->lanes);
    case OPT_ANY_SOURCE:
        o->allow_any_source = true;
        return true;
    case OPT_HELP:
        o->help = true;
        return true;
    }
    return false;
}

int tunnel_options_parse(tunnel_options *o, int argc, char **argv, char *error, size_t error_size)
{
    defaults(o);
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        if (opt == '?' || opt == ':') {
            snprintf(error, error_size, "unknown option or missing value: %s",
                     argv[optind - 1 > 0 ? optind - 1 : 0]);
            return -1;
        }
        if (!take(o, opt, optarg)) {
            snprintf(error, error_size, "bad value for %s: %s",
                     argv[optind - 2 > 0 ? optind - 2 : 0], optarg ? optarg : "");
            return -1;
        }
    }
    if (optind < argc) {
        snprintf(error, error_size, "unexpected argument: %s", argv[optind]);
        return -1;
    }
    const char *problem = check(o);
    if (problem) {
        snprintf(error, error_size, "%s", problem);
        return -1;
    }
    return 0;
}

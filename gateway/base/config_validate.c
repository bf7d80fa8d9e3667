/* Checks a whole configuration once it is read (moat_config_validate,
 * config.h): values that only make sense together, addresses peers can send
 * to, TURN URIs, port layouts. */
#include "base/config.h"

#include "base/log.h"
#include "base/turn_uri.h"

#include <arpa/inet.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

/* Why an address cannot be one that peers send media to (a candidate, a
 * call SDP's c= line), or NULL when it can. */
static const char *unusable_address(const char *text)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, text, &v4) == 1) {
        uint32_t address = ntohl(v4.s_addr);
        if ((address >> 24) == 0)
            return "an unspecified address (0.0.0.0/8; in a call SDP's c= line 0.0.0.0 means "
                   "hold)";
        if ((address >> 28) == 0xe)
            return "a multicast address";
        if (address == 0xffffffffu)
            return "the broadcast address";
        return NULL;
    }
    if (inet_pton(AF_INET6, text, &v6) != 1)
        return "not an IP address";
    if (IN6_IS_ADDR_UNSPECIFIED(&v6))
        return "an unspecified address (::; in a call SDP's c= line it means hold)";
    if (IN6_IS_ADDR_MULTICAST(&v6))
        return "a multicast address";
    if (IN6_IS_ADDR_V4MAPPED(&v6))
        return "an IPv4-mapped IPv6 address (write the IPv4 address)";
    return NULL;
}

/* [media] announced_address goes into ICE candidates and call SDPs' c= and
 * a=rtcp lines as written: an IP address only (no host name, no space, no
 * CR or LF) that a peer can send to. The value is shown escaped. */
static int check_announced_address(const moat_config *config, char *error, size_t error_size)
{
    const char *address = config->announced_address;
    const char *why = address && *address ? unusable_address(address) : NULL;
    if (!why)
        return 0;
    char *shown = g_strescape(address, NULL);
    snprintf(error, error_size,
             "[media] announced_address = \"%s\": %s; expected the IP address peers reach "
             "this host at",
             shown, why);
    g_free(shown);
    return -1;
}

/* [media] candidate_addresses: comma-separated IP addresses, each one a
 * peer can send to. */
static int check_candidate_addresses(const moat_config *config, char *error, size_t error_size)
{
    if (!config->candidate_addresses || !*config->candidate_addresses)
        return 0;
    char **parts = g_strsplit(config->candidate_addresses, ",", -1);
    int status = 0;
    for (char **part = parts; *part && status == 0; part++) {
        char *text = g_strstrip(*part);
        const char *why = unusable_address(text);
        if (!why)
            continue;
        char *shown = g_strescape(text, NULL);
        snprintf(error, error_size, "[media] candidate_addresses: \"%s\" is %s", shown, why);
        g_free(shown);
        status = -1;
    }
    g_strfreev(parts);
    return status;
}

/* [turn] uris: each entry (trimmed; empty ones are skipped, as
 * http/ice_servers.c reads them) a URI a client's RTCPeerConnection takes;
 * *count: how many there are. */
static int check_turn_uris(const moat_config *config, size_t *count, char *error, size_t error_size)
{
    *count = 0;
    if (!config->turn_uris || !*config->turn_uris)
        return 0;
    char **parts = g_strsplit(config->turn_uris, ",", -1);
    int status = 0;
    for (char **part = parts; *part && status == 0; part++) {
        char *uri = g_strstrip(*part);
        if (!*uri)
            continue;
        const char *problem = moat_turn_uri_problem(uri);
        if (!problem) {
            (*count)++;
            continue;
        }
        char *shown = g_strescape(uri, NULL);
        snprintf(error, error_size, "[turn] uris: \"%s\": %s, e.g. turn:turn.example.net:3478",
                 shown, problem);
        g_free(shown);
        status = -1;
    }
    g_strfreev(parts);
    return status;
}

/* URIs need the secret their credentials are made with; a secret without
 * URIs hands nothing out (it was ignored without a word). */
static int check_turn(const moat_config *config, char *error, size_t error_size)
{
    size_t uris = 0;
    if (check_turn_uris(config, &uris, error, error_size) != 0)
        return -1;
    bool has_secret = config->turn_secret && *config->turn_secret;
    if (uris && !has_secret) {
        snprintf(error, error_size,
                 "[turn] uris needs [turn] secret (coturn's static-auth-secret)");
        return -1;
    }
    if (has_secret && !uris) {
        snprintf(error, error_size,
                 "[turn] secret is set but [turn] uris is empty: no TURN server would be handed "
                 "to clients; set [turn] uris (e.g. turn:turn.example.net:3478?transport=udp)");
        return -1;
    }
    return 0;
}

/* The call legs' range as call_ports.c lays it out: even/odd pairs from
 * the first even port, so 30001-30002 holds none. */
static int check_call_ports(const moat_config *config, char *error, size_t error_size)
{
    int first = config->media_port_min + (config->media_port_min & 1);
    if (first + 1 <= config->media_port_max)
        return 0;
    snprintf(error, error_size,
             "[media] port_min %d .. port_max %d: need at least one even/odd pair (RTP even, "
             "RTCP = RTP + 1)",
             config->media_port_min, config->media_port_max);
    return -1;
}

/* The workers' ports, [media] port + i for each worker (workers = 0: one
 * per processor of this machine, as the start counts them), fit below
 * 65536, and the ng socket is not one of them. */
static int check_worker_ports(const moat_config *config, char *error, size_t error_size)
{
    int n = (int)moat_config_worker_count(config);
    int last = config->media_port + n - 1;
    const char *counted = config->workers > 0 ? "" : " (workers = 0: one per processor)";
    if (last > 65535) {
        snprintf(error, error_size, "[media] port %d + %d workers%s runs past port 65535",
                 config->media_port, n, counted);
        return -1;
    }
    if (config->ng_port && config->ng_port >= config->media_port && config->ng_port <= last) {
        snprintf(error, error_size,
                 "[ng] port %d is one of the media workers' ports %d-%d ([media] port + %d "
                 "workers%s)",
                 config->ng_port, config->media_port, last, n, counted);
        return -1;
    }
    return 0;
}

static int check_media_ports(const moat_config *config, char *error, size_t error_size)
{
    if (check_call_ports(config, error, error_size) != 0)
        return -1;
    return check_worker_ports(config, error, error_size);
}

int moat_config_validate(const moat_config *config, char *error, size_t error_size)
{
    if (check_announced_address(config, error, error_size) != 0 ||
        check_candidate_addresses(config, error, error_size) != 0)
        return -1;
    if (moat_log_level_parse(config->log_level) < 0) {
        snprintf(error, error_size,
                 "[general] log_level = \"%s\": expected error, warn, info or debug",
                 config->log_level);
        return -1;
    }
    const char *mode = config->prefilter_mode;
    if (strcmp(mode, "off") && strcmp(mode, "auto") && strcmp(mode, "always")) {
        snprintf(error, error_size, "[prefilter] mode = \"%s\": expected off, auto or always",
                 mode);
        return -1;
    }
    const char *kernel = config->prefilter_kernel;
    if (strcmp(kernel, "off") && strcmp(kernel, "auto") && strcmp(kernel, "on")) {
        snprintf(error, error_size, "[prefilter] kernel = \"%s\": expected auto, on or off",
                 kernel);
        return -1;
    }
    const char *learning = config->call_learning;
    if (strcmp(learning, "sdp") && strcmp(learning, "heuristic") && strcmp(learning, "off")) {
        snprintf(error, error_size, "[call] learning = \"%s\": expected sdp, heuristic or off",
                 learning);
        return -1;
    }
    bool has_cert = config->certificate && *config->certificate;
    bool has_key = config->private_key && *config->private_key;
    if (has_cert != has_key) {
        snprintf(error, error_size,
                 "[dtls] certificate and private_key must be given together (or neither)");
        return -1;
    }
    bool has_tls_cert = config->http_tls_cert && *config->http_tls_cert;
    bool has_tls_key = config->http_tls_key && *config->http_tls_key;
    if (has_tls_cert != has_tls_key) {
        snprintf(error, error_size,
                 "[http] tls_cert and tls_key must be given together (or neither)");
        return -1;
    }
    if (check_turn(config, error, error_size) != 0)
        return -1;
    if (config->record_all_sessions && !(config->record_dir && *config->record_dir)) {
        snprintf(error, error_size, "[record] all_sessions needs [record] dir");
        return -1;
    }
    if (check_media_ports(config, error, error_size) != 0)
        return -1;
    if (moat_config_cluster_enabled(config)) {
        if (!config->cluster_password || !*config->cluster_password) {
            snprintf(error, error_size,
                     "[cluster] redis needs [cluster] password (MOAT_CLUSTER_PASSWORD): Redis "
                     "must require one");
            return -1;
        }
        const char *signalling = config->cluster_signalling;
        if (strcmp(signalling, "redirect") && strcmp(signalling, "proxy")) {
            snprintf(error, error_size, "[cluster] signalling = \"%s\": expected redirect or proxy",
                     signalling);
            return -1;
        }
        const char *cascade = config->cluster_cascade;
        if (strcmp(cascade, "ask") && strcmp(cascade, "region") && strcmp(cascade, "always")) {
            snprintf(error, error_size,
                     "[cluster] cascade = \"%s\": expected ask, region or always", cascade);
            return -1;
        }
        const char *advertise = config->cluster_advertise_http;
        if (*advertise && !g_str_has_prefix(advertise, "http://") &&
            !g_str_has_prefix(advertise, "https://")) {
            snprintf(error, error_size,
                     "[cluster] advertise_http = \"%s\": expected an http:// or https:// URL",
                     advertise);
            return -1;
        }
    }
    return 0;
}

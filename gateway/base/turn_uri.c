/* The check of a STUN or TURN server URI (turn_uri.h): what a client's
 * RTCPeerConnection would refuse (and throw on) is refused at start. */
#include "base/turn_uri.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const schemes[] = {"turn:", "turns:", "stun:", "stuns:"};

/* The part after a known scheme, or NULL; *turn says whether it was a TURN
 * scheme (the only ones that take ?transport=). */
static const char *after_scheme(const char *uri, bool *turn)
{
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
        size_t length = strlen(schemes[i]);
        /* Lower case, as RFC 7064/7065 write them: aiortc refuses
         * "TURN:", and browsers compare the transport key as written. */
        if (strncmp(uri, schemes[i], length) == 0) {
            *turn = schemes[i][0] == 't';
            return uri + length;
        }
    }
    return NULL;
}

static bool host_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-';
}

/* The host at *p, advanced past it; NULL when it is fine. */
static const char *skip_host(const char **p)
{
    const char *start = *p;
    if (*start == '[') {
        const char *end = strchr(start, ']');
        char literal[64];
        size_t length = end ? (size_t)(end - start - 1) : 0;
        if (!end || length == 0 || length >= sizeof literal)
            return "an IPv6 host must be a bracketed address ([2001:db8::1])";
        memcpy(literal, start + 1, length);
        literal[length] = '\0';
        unsigned char probe[16];
        if (inet_pton(AF_INET6, literal, probe) != 1)
            return "the bracketed host is not an IPv6 address";
        *p = end + 1;
        return NULL;
    }
    bool alphanumeric = false;
    for (; host_name_char(**p); (*p)++)
        alphanumeric |= **p != '.' && **p != '-';
    if (*p == start)
        return **p == '/' ? "no host after the scheme (write turn:host, not turn://host)"
                          : "no host after the scheme";
    if (!alphanumeric)
        return "the host has no letter or digit";
    return NULL;
}

/* ":port" at *p (when there), advanced past it; NULL when it is fine. */
static const char *skip_port(const char **p)
{
    if (**p != ':')
        return NULL;
    const char *digits = *p + 1;
    size_t n = strspn(digits, "0123456789");
    long port = n > 0 && n <= 5 ? strtol(digits, NULL, 10) : 0;
    if (port < 1 || port > 65535)
        return "the port must be a number from 1 to 65535";
    *p = digits + n;
    return NULL;
}

const char *moat_turn_uri_problem(const char *uri)
{
    bool turn = false;
    const char *p = after_scheme(uri, &turn);
    if (!p)
        return "expected a turn:, turns:, stun: or stuns: URI (RFC 7065, RFC 7064)";
    const char *problem = skip_host(&p);
    if (!problem)
        problem = skip_port(&p);
    if (problem)
        return problem;
    if (*p == '\0')
        return NULL;
    if (*p != '?')
        return "unexpected text after the host and port";
    if (!turn)
        return "a stun: or stuns: URI takes no query";
    if (strncmp(p, "?transport=", 11) == 0 &&
        (strcasecmp(p + 11, "udp") == 0 || strcasecmp(p + 11, "tcp") == 0))
        return NULL;
    return "the only query is ?transport=udp or ?transport=tcp";
}

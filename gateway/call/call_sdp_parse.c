/* Owns reading a SIP party's SDP for the call layer (call_sdp.h): per
 * m-line the transport, the party's address and ports, rtcp-mux, the
 * direction. */
#include "call/call_sdp.h"

#include "sdp/sdp_lex.h"

#include <arpa/inet.h>
#include <string.h>

/* "IN IP4 1.2.3.4" or "IN IP6 ::1" (a multicast "/ttl" suffix is cut);
 * 0.0.0.0 and :: (hold) give an address of family 0. */
static int parse_connection(moat_sdp_span value, struct sockaddr_in6 *out, char *error,
                            size_t error_size)
{
    moat_sdp_span net, type, address, ttl;
    char text[64];
    if (!moat_sdp_span_next_token(&value, &net) || !moat_sdp_span_eq(net, "IN") ||
        !moat_sdp_span_next_token(&value, &type) || !moat_sdp_span_next_token(&value, &address)) {
        moat_sdp_errorf(error, error_size, "c= is not \"IN <IP4|IP6> <address>\"");
        return -1;
    }
    moat_sdp_span_split(address, '/', &address, &ttl);
    if (!moat_sdp_span_copy(address, text, sizeof text)) {
        moat_sdp_errorf(error, error_size, "c= address too long");
        return -1;
    }
    memset(out, 0, sizeof *out);
    struct in_addr v4;
    struct in6_addr v6;
    if (moat_sdp_span_eq(type, "IP4") && inet_pton(AF_INET, text, &v4) == 1) {
        if (v4.s_addr == 0)
            return 0;
        out->sin6_family = AF_INET6;
        out->sin6_addr.s6_addr[10] = 0xff;
        out->sin6_addr.s6_addr[11] = 0xff;
        memcpy(&out->sin6_addr.s6_addr[12], &v4, 4);
        return 0;
    }
    if (moat_sdp_span_eq(type, "IP6") && inet_pton(AF_INET6, text, &v6) == 1) {
        if (IN6_IS_ADDR_UNSPECIFIED(&v6))
            return 0;
        out->sin6_family = AF_INET6;
        out->sin6_addr = v6;
        return 0;
    }
    moat_sdp_errorf(error, error_size, "c= address is not an IP%s address",
                    moat_sdp_span_eq(type, "IP6") ? "6" : "4");
    return -1;
}

/* "m=audio 4000 RTP/AVP 0 8 101" ("port/count" is refused). */
static int parse_media_line(moat_sdp_span value, moat_call_sdp_media *media, char *error,
                            size_t error_size)
{
    moat_sdp_span kind, port, proto, format;
    uint32_t number;
    if (!moat_sdp_span_next_token(&value, &kind) || !moat_sdp_span_next_token(&value, &port) ||
        !moat_sdp_span_next_token(&value, &proto) || !moat_sdp_span_u32(port, 65535, &number) ||
        !moat_sdp_span_copy(kind, media->kind, sizeof media->kind) ||
        !moat_sdp_span_copy(proto, media->proto, sizeof media->proto)) {
        moat_sdp_errorf(error, error_size, "m= is not \"<media> <port> <proto> <formats>\"");
        return -1;
    }
    media->port = (uint16_t)number;
    while (moat_sdp_span_next_token(&value, &format))
        media->n_formats++;
    if (media->n_formats == 0) {
        moat_sdp_errorf(error, error_size, "m=%s has no formats", media->kind);
        return -1;
    }
    return 0;
}

static bool is_ice_attribute(moat_sdp_span name)
{
    return moat_sdp_span_eq(name, "ice-ufrag") || moat_sdp_span_eq(name, "ice-pwd") ||
           moat_sdp_span_eq(name, "candidate") || moat_sdp_span_eq(name, "ice-lite");
}

/* a=crypto: kept when well-formed, of a suite Moat runs, and there is room;
 * whether one is usable is decided when a leg is keyed (call_sdes.c). */
static void parse_crypto(moat_sdp_span value, moat_call_sdp_media *media)
{
    if (media->n_crypto == MOAT_CALL_SDP_MAX_CRYPTO)
        return;
    const char *why = NULL;
    if (moat_sdp_crypto_parse(value, &media->crypto[media->n_crypto], &why) == 0)
        media->n_crypto++;
}

/* The WebRTC markers of a=<name>, into media or the session's template. */
static void note_webrtc(moat_sdp_span name, moat_call_sdp_media *target)
{
    if (moat_sdp_span_eq(name, "ice-ufrag"))
        target->ice_ufrag = true;
    else if (moat_sdp_span_eq(name, "ice-pwd"))
        target->ice_pwd = true;
    else if (moat_sdp_span_eq(name, "fingerprint"))
        target->fingerprint = true;
}

/* a=sendrecv, sendonly, recvonly, inactive: true when the attribute is one. */
static bool parse_direction(moat_sdp_span value, moat_call_sdp_direction *out)
{
    static const char *const names[] = {"sendrecv", "sendonly", "recvonly", "inactive"};
    for (int i = 0; i < 4; i++) {
        if (moat_sdp_span_eq(value, names[i])) {
            *out = (moat_call_sdp_direction)i;
            return true;
        }
    }
    return false;
}

static void parse_attribute(moat_sdp_span value, moat_call_sdp_media *media,
                            moat_call_sdp_media *session)
{
    moat_sdp_span name, rest, port;
    moat_sdp_span_split(value, ':', &name, &rest);
    uint32_t number;
    note_webrtc(name, media ? media : session);
    if (is_ice_attribute(name)) {
        (media ? media : session)->ice = true;
        return;
    }
    if (moat_sdp_span_eq(name, "srtpplus") && moat_sdp_span_has_prefix(rest, "prn")) {
        (media ? media : session)->srtpplus_prn = true;
        return;
    }
    if (!media)
        return;
    if (moat_sdp_span_eq(name, "crypto")) {
        parse_crypto(rest, media);
        return;
    }
    if (moat_sdp_span_eq(name, "rtcp-mux"))
        media->rtcp_mux = true;
    else if (moat_sdp_span_eq(name, "rtcp") && moat_sdp_span_next_token(&rest, &port) &&
             moat_sdp_span_u32(port, 65535, &number))
        media->rtcp_port = (uint16_t)number;
}

typedef struct {
    moat_call_sdp *out;
    struct sockaddr_in6 session_address;
    bool session_has_address;
    bool media_has_address[MOAT_CALL_SDP_MAX_MEDIA];
    bool media_has_direction[MOAT_CALL_SDP_MAX_MEDIA];
    moat_call_sdp_media session; /* session-level ICE and DTLS markers, direction */
    bool seen_version;
} parse_state;

static int parse_line(parse_state *state, moat_sdp_span line, char *error, size_t error_size)
{
    if (line.len < 2 || line.p[1] != '=') {
        moat_sdp_errorf(error, error_size, "line is not <type>=<value>");
        return -1;
    }
    moat_sdp_span value = {line.p + 2, line.len - 2};
    moat_call_sdp *out = state->out;
    moat_call_sdp_media *media = out->n_media ? &out->media[out->n_media - 1] : NULL;
    switch (line.p[0]) {
    case 'v':
        state->seen_version = moat_sdp_span_eq(value, "0");
        return state->seen_version ? 0 : (moat_sdp_errorf(error, error_size, "v= is not 0"), -1);
    case 'm':
        if (out->n_media == MOAT_CALL_SDP_MAX_MEDIA) {
            moat_sdp_errorf(error, error_size, "more than %d m-lines", MOAT_CALL_SDP_MAX_MEDIA);
            return -1;
        }
        media = &out->media[out->n_media++];
        return parse_media_line(value, media, error, error_size);
    case 'c':
        if (!media) {
            state->session_has_address = true;
            return parse_connection(value, &state->session_address, error, error_size);
        }
        state->media_has_address[out->n_media - 1] = true;
        return parse_connection(value, &media->rtp, error, error_size);
    case 'a':
        if (parse_direction(value, media ? &media->direction : &state->session.direction)) {
            if (media)
                state->media_has_direction[out->n_media - 1] = true;
            return 0;
        }
        parse_attribute(value, media, &state->session);
        return 0;
    default:
        return 0;
    }
}

/* Media-level c= wins over the session's; an m-line in use needs one. */
static int resolve_addresses(parse_state *state, char *error, size_t error_size)
{
    moat_call_sdp *out = state->out;
    for (size_t i = 0; i < out->n_media; i++) {
        moat_call_sdp_media *media = &out->media[i];
        media->ice = media->ice || state->session.ice;
        media->ice_ufrag = media->ice_ufrag || state->session.ice_ufrag;
        media->ice_pwd = media->ice_pwd || state->session.ice_pwd;
        media->fingerprint = media->fingerprint || state->session.fingerprint;
        media->srtpplus_prn = media->srtpplus_prn || state->session.srtpplus_prn;
        if (!state->media_has_direction[i])
            media->direction = state->session.direction;
        if (!state->media_has_address[i]) {
            if (!state->session_has_address && media->port != 0) {
                moat_sdp_errorf(error, error_size, "m=%s has no c= line", media->kind);
                return -1;
            }
            media->rtp = state->session_address;
        }
        if (media->rtp.sin6_family == AF_INET6)
            media->rtp.sin6_port = htons(media->port);
    }
    return 0;
}

int moat_call_sdp_parse(const char *text, size_t length, moat_call_sdp *out, char *error,
                        size_t error_size)
{
    memset(out, 0, sizeof *out);
    if (moat_sdp_text_check(text, length, MOAT_CALL_SDP_MAX_LENGTH, error, error_size) != 0)
        return -1;
    parse_state state = {.out = out};
    moat_sdp_lines lines;
    moat_sdp_lines_init(&lines, text, length);
    moat_sdp_span line;
    int more;
    while ((more = moat_sdp_lines_next(&lines, &line, error, error_size)) == 1) {
        if (line.len == 0)
            continue;
        if (!state.seen_version && line.p[0] != 'v') {
            moat_sdp_errorf(error, error_size, "SDP does not start with v=0");
            return -1;
        }
        if (parse_line(&state, line, error, error_size) != 0)
            return -1;
    }
    if (more < 0)
        return -1;
    if (out->n_media == 0) {
        moat_sdp_errorf(error, error_size, "SDP has no m= line");
        return -1;
    }
    return resolve_addresses(&state, error, error_size);
}

bool moat_call_sdp_is_webrtc(const moat_call_sdp *sdp)
{
    for (size_t i = 0; i < sdp->n_media; i++) {
        const moat_call_sdp_media *media = &sdp->media[i];
        if (media->port == 0)
            continue;
        if (strstr(media->proto, "TLS") || media->fingerprint)
            return true;
    }
    return false;
}

int moat_call_sdp_check_webrtc(const moat_call_sdp *sdp, char *error, size_t error_size)
{
    for (size_t i = 0; i < sdp->n_media; i++) {
        const moat_call_sdp_media *media = &sdp->media[i];
        const char *missing = !media->ice_ufrag     ? "a=ice-ufrag"
                              : !media->ice_pwd     ? "a=ice-pwd"
                              : !media->fingerprint ? "a=fingerprint"
                                                    : NULL;
        if (media->port == 0 || !missing)
            continue;
        moat_sdp_errorf(error, error_size, "WebRTC m=%s without %s", media->kind, missing);
        return -1;
    }
    return 0;
}

bool moat_call_rtcp_destination(const moat_call_sdp_media *media, struct sockaddr_in6 *to)
{
    if (media->port == 0 || media->rtp.sin6_family != AF_INET6)
        return false;
    uint16_t rtp = ntohs(media->rtp.sin6_port);
    if (!media->rtcp_port && rtp == UINT16_MAX)
        return false;
    *to = media->rtp;
    to->sin6_port = htons(media->rtcp_port ? media->rtcp_port : (uint16_t)(rtp + 1));
    return true;
}

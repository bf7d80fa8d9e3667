/* One ng command (rtpengine's control protocol) as Moat understands it:
 * the bencoded dictionary normalised into a struct. Keys, flags and
 * enumerated values are matched case-insensitively with spaces, hyphens and
 * underscores treated alike ("transport protocol", "transport-protocol",
 * "Transport_Protocol"); unknown keys and flags are ignored. A value may come
 * as its own key ("ICE": "force"), as a list where one is expected, or as a
 * "key=value" / prefixed string in "flags" ("ICE=force", "SDES-off",
 * "codec-strip-PCMA", "replace-origin", "rtcp-mux-demux"), as Kamailio's
 * module sends them. Strings are NUL-terminated and valid until
 * moat_ng_request_clear; they point into the parsed dictionary (which must
 * outlive the request) or into copies the request owns. Control thread. */
#ifndef MOAT_NG_REQUEST_H
#define MOAT_NG_REQUEST_H

#include "ng/bencode.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    MOAT_NG_UNKNOWN = 0,
    MOAT_NG_PING,
    MOAT_NG_OFFER,
    MOAT_NG_ANSWER,
    MOAT_NG_DELETE,
    MOAT_NG_QUERY,
    MOAT_NG_LIST,
} moat_ng_command;

typedef enum { MOAT_NG_ICE_DEFAULT = 0, MOAT_NG_ICE_FORCE, MOAT_NG_ICE_REMOVE } moat_ng_ice;
typedef enum {
    MOAT_NG_DTLS_DEFAULT = 0,
    MOAT_NG_DTLS_PASSIVE,
    MOAT_NG_DTLS_ACTIVE,
    MOAT_NG_DTLS_OFF,
} moat_ng_dtls;

/* rtcp-mux flags (bit set). */
enum {
    MOAT_NG_RTCP_MUX_OFFER = 1u << 0,
    MOAT_NG_RTCP_MUX_ACCEPT = 1u << 1,
    MOAT_NG_RTCP_MUX_DEMUX = 1u << 2,
    MOAT_NG_RTCP_MUX_REQUIRE = 1u << 3,
    MOAT_NG_RTCP_MUX_REJECT = 1u << 4,
};

#define MOAT_NG_MAX_CODECS 16
#define MOAT_NG_MAX_SUITES 8

/* The longest SDP an offer or answer reply may carry: the whole reply must
 * fit one UDP datagram (65507 bytes over IPv4, MOAT_NG_MAX_REPLY) with its
 * cookie (at most MOAT_NG_MAX_COOKIE, 256 bytes, and a space: a longer one
 * is refused before its command runs) and the other keys (result, warning:
 * under 200 bytes) beside it. A rewritten SDP longer than this is refused
 * before the call changes; an answer that may be transcoded, when its SDP
 * and MOAT_TRANSCODE_SDP_RESTRICT_GROWTH an m-line would be (transcoding
 * rewrites the reply after the check). */
#define MOAT_NG_MAX_REPLY_SDP (65507 - 1024)

typedef struct {
    const char *names[MOAT_NG_MAX_CODECS]; /* NUL-terminated; valid until moat_ng_request_clear */
    size_t count;
} moat_ng_codec_list;

typedef struct {
    const moat_bencode *dictionary; /* the whole command, for keys not normalised here */
    moat_ng_command command;
    const char *command_name; /* as received, for error replies */
    /* Identification. call_id is required for offer/answer/delete/query. */
    const char *call_id;
    const char *from_tag;
    const char *to_tag;
    const char *via_branch;
    const char *sdp; /* NULL when absent */
    size_t sdp_length;
    /* flags */
    bool trust_address;
    bool symmetric;
    bool asymmetric;
    bool strict_source;
    bool fatal; /* delete: an unknown call is an error, not a warning */
    bool port_latching;
    bool record_call;
    /* replace */
    bool replace_origin;
    bool replace_session_connection;
    moat_ng_ice ice;
    moat_ng_dtls dtls;
    const char
        *transport_protocol; /* "RTP/AVP", "RTP/SAVP", "UDP/TLS/RTP/SAVPF", ...; NULL: keep */
    unsigned rtcp_mux;       /* MOAT_NG_RTCP_MUX_* */
    /* SDES: off, or the only suites allowed (e.g. "AES_CM_128_HMAC_SHA1_80"). */
    bool sdes_off;
    const char *sdes_only[MOAT_NG_MAX_SUITES]; /* "only-<suite>" or a bare suite name */
    size_t n_sdes_only;
    const char *sdes_no[MOAT_NG_MAX_SUITES]; /* "no-<suite>": never offer or accept these */
    size_t n_sdes_no;
    /* direction: the two interface names ("internal", "external", ...) */
    const char *direction[2];
    const char *media_address;        /* address to put in the rewritten SDP; NULL: configured */
    const char *received_from_family; /* "received from": ["IP4", "1.2.3.4"] */
    const char *received_from_address;
    const char *address_family; /* "IP4" / "IP6"; NULL: keep */
    /* codec: strip, offer, transcode, mask ("all" allowed in strip/mask). */
    moat_ng_codec_list codec_strip;
    moat_ng_codec_list codec_offer;
    moat_ng_codec_list codec_transcode;
    moat_ng_codec_list codec_mask;
    /* delete */
    int delete_delay_s; /* -1: not given (use the configured default) */
    GPtrArray *owned;   /* private: strings copied out of flag strings */
} moat_ng_request;

/* Fills `request` from the command dictionary. Returns 0, or -1 with an
 * error-reason for the reply in error (a value of the wrong type, a string
 * holding a NUL byte, an unknown transport protocol, a bad delete-delay).
 * An unknown command is not an error here (command MOAT_NG_UNKNOWN, its
 * name in command_name); a missing command is. Call moat_ng_request_clear
 * after either outcome. Keys a command requires (call-id, from-tag, sdp) are
 * checked by moat_ng_request_check. */
int moat_ng_request_parse(const moat_bencode *dictionary, moat_ng_request *request, char *error,
                          size_t error_size);
void moat_ng_request_clear(moat_ng_request *request);
/* The keys `request->command` requires: offer and answer need call-id,
 * from-tag and sdp; delete and query need call-id. 0, or -1 with the
 * error-reason. */
int moat_ng_request_check(const moat_ng_request *request, char *error, size_t error_size);
/* "ping", "offer", ... ; "unknown" for MOAT_NG_UNKNOWN. */
const char *moat_ng_command_name(moat_ng_command command);

#endif

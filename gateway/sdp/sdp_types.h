/* The data model of a parsed SDP offer (RFC 8866, JSEP RFC 8829) as the
 * gateway needs it. Every list has a fixed maximum because SDP is attacker
 * input: the parser rejects a description that goes beyond one instead of
 * growing without bound. Values are copied into fixed buffers so that a parsed
 * description never points back into the text it came from. */
#ifndef MOAT_SDP_TYPES_H
#define MOAT_SDP_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugin.h"

#define MOAT_SDP_MAX_MEDIA          16
#define MOAT_SDP_MAX_TEXT           (256 * 1024) /* whole description, bytes */
#define MOAT_SDP_MAX_LINE           4096         /* one line without its end, bytes */
#define MOAT_SDP_MAX_CODECS         128          /* payload types are 0..127 and distinct */
#define MOAT_SDP_MAX_RTCP_FB        16           /* per codec */
#define MOAT_SDP_MAX_EXTMAPS        32           /* per m-line */
#define MOAT_SDP_MAX_SSRCS          32           /* distinct a=ssrc values per m-line */
#define MOAT_SDP_MAX_SSRC_FIDS      16           /* a=ssrc-group:FID pairs per m-line */
#define MOAT_SDP_MAX_CANDIDATES     32           /* per m-line */
#define MOAT_SDP_MAX_SRTPPLUS       4            /* a=srtpplus lines per m-line */
#define MOAT_SDP_MAX_FINGERPRINTS   4            /* a=fingerprint lines per m-line */
#define MOAT_SDP_MID_SIZE           32           /* a=mid values are 1..31 bytes */
#define MOAT_SDP_ICE_CREDENTIAL_MAX 256          /* RFC 8839: ufrag 4..256, pwd 22..256 */
#define MOAT_SDP_FMTP_SIZE          512
#define MOAT_SDP_RTCP_FB_SIZE       48
#define MOAT_SDP_URI_SIZE           256
#define MOAT_SDP_CNAME_SIZE         256
#define MOAT_SDP_MSID_SIZE          132 /* two msid-ids of up to 64 bytes and a space */
#define MOAT_SDP_MAX_RIDS           8   /* a=rid lines kept per m-line */
#define MOAT_SDP_MAX_ANSWER_RIDS    3   /* simulcast layers the gateway receives */

typedef enum {
    MOAT_SDP_SENDRECV,
    MOAT_SDP_SENDONLY,
    MOAT_SDP_RECVONLY,
    MOAT_SDP_INACTIVE
} moat_sdp_direction;

typedef enum {
    MOAT_SDP_SETUP_NONE,
    MOAT_SDP_SETUP_ACTPASS,
    MOAT_SDP_SETUP_ACTIVE,
    MOAT_SDP_SETUP_PASSIVE
} moat_sdp_setup;

/* One a=candidate (RFC 8839 §5.1). transport and type are stored lowercase;
 * extension attributes (raddr, generation, tcptype, ...) are not kept. */
typedef struct {
    char foundation[33];
    uint32_t component;
    char transport[8];
    uint32_t priority;
    char address[64];
    uint16_t port;
    char type[8];
} moat_sdp_candidate;

/* One a=srtpplus scheme (SRTPPLUS.md §6). depth and copies are 0 for "prn";
 * for "chain" they are the offered values or the defaults 32 and 2. */
typedef struct {
    char scheme[8]; /* "prn" or "chain" */
    uint8_t depth;
    uint8_t copies;
} moat_sdp_srtpplus;

/* One payload type of an RTP m-line, with what a=rtpmap, a=fmtp and a=rtcp-fb
 * said about it. Static payload types without a=rtpmap get their RFC 3551
 * name and rate when known. */
typedef struct {
    uint8_t pt;
    bool has_rtpmap;
    char name[32];       /* encoding name as written, e.g. "opus", "H264" */
    uint32_t clock_rate; /* 0 when unknown */
    uint8_t channels;    /* 0 when a=rtpmap gives none */
    char fmtp[MOAT_SDP_FMTP_SIZE];
    char rtcp_fb[MOAT_SDP_MAX_RTCP_FB][MOAT_SDP_RTCP_FB_SIZE]; /* "nack pli", single spaces */
    size_t n_rtcp_fb;
} moat_sdp_codec;

typedef struct {
    uint16_t id; /* 1..255 */
    bool has_direction;
    moat_sdp_direction direction;
    char uri[MOAT_SDP_URI_SIZE];
} moat_sdp_extmap;

typedef struct {
    uint32_t ssrc;
    char cname[MOAT_SDP_CNAME_SIZE]; /* empty when not declared */
    char msid[MOAT_SDP_MSID_SIZE];   /* "<stream> <track>", empty when not declared */
} moat_sdp_ssrc;

typedef struct {
    uint32_t primary;
    uint32_t retransmission;
} moat_sdp_ssrc_fid;

/* One a=rid (RFC 8851): its id and direction; restrictions are not kept. */
typedef struct {
    char id[MOAT_PLUGIN_RID_SIZE];
    bool send; /* "send"; false for "recv" */
} moat_sdp_rid;

/* One m-line. Transport fields (ICE credentials, fingerprint, setup,
 * srtpplus, end-of-candidates) and direction are EFFECTIVE values: the
 * m-line's own, else the session level's, else (for a bundled m-line) those
 * of the BUNDLE group's tagged m-line. */
typedef struct {
    moat_media_kind kind;
    bool kind_known; /* audio, video or application; anything else is answered with port 0 */
    char media[16];  /* the <media> field as written */
    uint16_t port;
    bool bundle_only;
    char proto[32];
    char first_format[32];  /* used to answer a rejected m-line */
    bool is_rtp;            /* proto is an RTP profile: formats are payload types */
    moat_sdp_codec *codecs; /* owned; in m= line (preference) order */
    size_t n_codecs;

    char mid[MOAT_SDP_MID_SIZE]; /* empty when absent */
    moat_sdp_direction direction;
    char msid[MOAT_SDP_MSID_SIZE]; /* a=msid value, empty when absent */

    moat_sdp_extmap extmaps[MOAT_SDP_MAX_EXTMAPS];
    size_t n_extmaps;
    moat_sdp_ssrc ssrcs[MOAT_SDP_MAX_SSRCS]; /* in order of first declaration */
    size_t n_ssrcs;
    moat_sdp_ssrc_fid fids[MOAT_SDP_MAX_SSRC_FIDS];
    size_t n_fids;
    moat_sdp_rid rids[MOAT_SDP_MAX_RIDS]; /* in order of declaration */
    size_t n_rids;
    /* a=simulcast (RFC 8853) send list: the first alternative of each
     * stream, in preference order, paused ('~') ones included. */
    char simulcast_send[MOAT_SDP_MAX_RIDS][MOAT_PLUGIN_RID_SIZE];
    size_t n_simulcast_send;

    char ice_ufrag[MOAT_SDP_ICE_CREDENTIAL_MAX + 1];
    char ice_pwd[MOAT_SDP_ICE_CREDENTIAL_MAX + 1];
    char fingerprint_alg[16]; /* lowercase: "sha-256" or "sha-384" */
    char fingerprint[160];    /* uppercase hex pairs separated by ':' */
    moat_sdp_setup setup;
    bool rtcp_mux;
    bool rtcp_rsize;

    bool has_sctp_port;
    uint16_t sctp_port;
    bool has_max_message_size;
    uint32_t max_message_size; /* 0 means "no limit" (RFC 8841) */

    moat_sdp_candidate candidates[MOAT_SDP_MAX_CANDIDATES];
    size_t n_candidates;
    bool end_of_candidates;

    moat_sdp_srtpplus srtpplus[MOAT_SDP_MAX_SRTPPLUS]; /* offer order = preference */
    size_t n_srtpplus;

    uint32_t bandwidth_as_kbps;  /* b=AS, 0 when absent */
    uint32_t bandwidth_tias_bps; /* b=TIAS, 0 when absent */
} moat_sdp_media;

typedef struct {
    char username[64];
    char session_id[32];
    char session_version[32];
    char address[64];
} moat_sdp_origin;

typedef struct moat_sdp {
    moat_sdp_origin origin;
    bool ice_lite;
    bool extmap_allow_mixed;
    char bundle_mids[MOAT_SDP_MAX_MEDIA][MOAT_SDP_MID_SIZE]; /* first a=group:BUNDLE */
    size_t n_bundle_mids;
    moat_sdp_media *media; /* owned, n_media entries */
    size_t n_media;
} moat_sdp;

/* The negotiated result of one m-line, in offer order. */
typedef struct {
    moat_media_kind kind;
    char mid[32];
    bool accepted; /* false -> answered with port 0 */
    moat_sdp_direction answer_direction;
    bool peer_sends;
    bool peer_receives;
    uint8_t payload_types[16]; /* accepted PTs in answer order */
    size_t n_payload_types;
    char codec_names[16][32];
    uint32_t clock_rates[16];
    uint8_t channels[16];
    uint8_t rtx_payload_types[16]; /* RFC 4588 rtx whose apt= is payload_types[c], 0 none */
    uint8_t rtcp_fb[16]; /* answered feedback: bit 0 nack, 1 pli, 2 fir, 3 remb, 4 transport-cc */
    char fmtp[4][96];    /* answered fmtp of the first 4 codecs, truncated */
    uint8_t mid_extension_id;
    uint8_t video_orientation_extension_id;
    uint8_t audio_level_extension_id;
    uint8_t abs_send_time_extension_id;
    uint8_t rid_extension_id;
    uint8_t repaired_rid_extension_id;
    uint8_t transport_cc_extension_id;  /* answered where media flows either way */
    uint8_t playout_delay_extension_id; /* what Moat sends may ask for a jitter buffer */
    /* Simulcast layers the peer sends (a=rid ... recv in the answer), in
     * its preference order; 0 when the m-line is not simulcast. */
    char rids[MOAT_SDP_MAX_ANSWER_RIDS][MOAT_PLUGIN_RID_SIZE];
    size_t n_rids;
    uint32_t remote_ssrc;     /* first declared a=ssrc (not an RTX one), 0 if none */
    uint32_t remote_rtx_ssrc; /* its FID partner, 0 if none */
    uint32_t local_ssrc;      /* what the answer announced when the gateway sends, else 0 */
    uint32_t local_rtx_ssrc;  /* its RTX partner (a=ssrc-group:FID) when rtx was answered */
} moat_sdp_negotiated_media;

typedef struct {
    moat_sdp_negotiated_media media[MOAT_SDP_MAX_MEDIA];
    size_t n_media;
    char remote_ufrag[257];
    char remote_pwd[257];
    char remote_fingerprint_alg[16];
    char remote_fingerprint[160];
    moat_sdp_setup local_setup; /* ACTIVE -> the gateway is the DTLS client */
    bool has_data_channel;
    uint16_t remote_sctp_port;
    uint32_t remote_max_message_size;
    bool srtpplus;
    moat_sdp_srtpplus srtpplus_scheme;
} moat_sdp_negotiation;

typedef struct {
    const char *ice_ufrag, *ice_pwd;
    const char *fingerprint_sha256; /* "AB:CD:..." uppercase, 32 bytes */
    moat_sdp_setup setup;           /* ACTIVE or PASSIVE; used when the offer says actpass */
    const moat_sdp_candidate *candidates;
    size_t n_candidates;
    uint64_t session_id;
    const char *cname;
    bool offer_srtpplus_prn, offer_srtpplus_chain;
    uint32_t max_message_size; /* 0 -> 262144; otherwise at least 262144 */
    /* Optional: whether the answer may accept codec `name` (canonical, as
     * moat_sdp_codec_choice) on m-line `media_index`; asked for every media
     * codec the gateway would accept (not telephone-event). An m-line left
     * with no media codec is rejected (port 0). */
    bool (*accept_codec)(void *user, size_t media_index, moat_media_kind kind, const char *name,
                         uint32_t clock_rate);
    void *accept_codec_user;
    /* Optional: the SSRC to announce on m-line i (i < n_local_ssrcs, non-zero)
     * instead of a random one: what Moat's own earlier offer announced. */
    const uint32_t *local_ssrcs;
    size_t n_local_ssrcs;
} moat_sdp_answer_params;

/* A trickle-ICE fragment (RFC 8840, application/trickle-ice-sdpfrag). */
#define MOAT_SDP_FRAGMENT_MAX_CANDIDATES 32

typedef struct {
    moat_sdp_candidate candidate;
    char mid[MOAT_SDP_MID_SIZE]; /* the m= section's a=mid; empty at session level */
    size_t media_index;          /* 0-based m= section, SIZE_MAX at session level */
} moat_sdp_fragment_candidate;

typedef struct {
    char ice_ufrag[MOAT_SDP_ICE_CREDENTIAL_MAX + 1]; /* empty when absent */
    char ice_pwd[MOAT_SDP_ICE_CREDENTIAL_MAX + 1];
    char bundle_mids[MOAT_SDP_MAX_MEDIA][MOAT_SDP_MID_SIZE];
    size_t n_bundle_mids;
    char mids[MOAT_SDP_MAX_MEDIA][MOAT_SDP_MID_SIZE]; /* one per m= section */
    size_t n_media;
    moat_sdp_fragment_candidate candidates[MOAT_SDP_FRAGMENT_MAX_CANDIDATES];
    size_t n_candidates;
    bool end_of_candidates; /* anywhere in the fragment */
} moat_sdp_fragment;

#endif

/* Parsers of single a= attribute values into an m-line (or into the session
 * level, which the offer parser keeps in a moat_sdp_media of its own). Each
 * returns 0 when stored, 1 when the value is legal but deliberately ignored,
 * and -1 with *why naming the problem; the caller adds the line number. */
#ifndef MOAT_SDP_ATTR_H
#define MOAT_SDP_ATTR_H

#include "sdp_lex.h"
#include "sdp_types.h"

/* RTP: sdp_attr_rtp.c */
int moat_sdp_attr_rtpmap(moat_sdp_media *m, moat_sdp_span value, const char **why);
int moat_sdp_attr_fmtp(moat_sdp_media *m, moat_sdp_span value, const char **why);
int moat_sdp_attr_rtcp_fb(moat_sdp_media *m, moat_sdp_span value, const char **why);
int moat_sdp_attr_extmap(moat_sdp_media *m, moat_sdp_span value, const char **why);
int moat_sdp_attr_ssrc(moat_sdp_media *m, moat_sdp_span value, const char **why);
int moat_sdp_attr_ssrc_group(moat_sdp_media *m, moat_sdp_span value, const char **why);
int moat_sdp_attr_msid(moat_sdp_media *m, moat_sdp_span value, const char **why);

/* Simulcast: sdp_attr_simulcast.c. A rid the gateway cannot name (too long,
 * too many) is ignored (1). */
int moat_sdp_attr_rid(moat_sdp_media *m, moat_sdp_span value, const char **why);
int moat_sdp_attr_simulcast(moat_sdp_media *m, moat_sdp_span value, const char **why);

/* Transport: sdp_attr_transport.c */
int moat_sdp_attr_ice_ufrag(moat_sdp_media *m, moat_sdp_span value, const char **why);
int moat_sdp_attr_ice_pwd(moat_sdp_media *m, moat_sdp_span value, const char **why);
/* Returns 1 for a well-formed fingerprint with a hash the gateway does not
 * take (sha-1, md5, ...), so the caller can fail only if no usable one comes. */
int moat_sdp_attr_fingerprint(moat_sdp_media *m, moat_sdp_span value, const char **why);
int moat_sdp_attr_setup(moat_sdp_media *m, moat_sdp_span value, const char **why);
int moat_sdp_attr_sctp_port(moat_sdp_media *m, moat_sdp_span value, const char **why);
int moat_sdp_attr_max_message_size(moat_sdp_media *m, moat_sdp_span value, const char **why);
int moat_sdp_attr_candidate(moat_sdp_media *m, moat_sdp_span value, const char **why);
/* Session or media a=mid, and the credentials check shared with fragments. */
int moat_sdp_attr_mid(moat_sdp_media *m, moat_sdp_span value, const char **why);
bool moat_sdp_mid_valid(moat_sdp_span mid);
bool moat_sdp_ice_ufrag_valid(moat_sdp_span ufrag);
bool moat_sdp_ice_pwd_valid(moat_sdp_span pwd);

/* SRTP+: sdp_srtpplus.c. Unknown schemes are ignored (1). */
int moat_sdp_attr_srtpplus(moat_sdp_media *m, moat_sdp_span value, const char **why);

/* Direction keywords; false when the name is not one. */
bool moat_sdp_direction_from_name(moat_sdp_span name, moat_sdp_direction *out);
const char *moat_sdp_direction_name(moat_sdp_direction direction);

#endif

/* a=candidate values (RFC 8839 §5.1), shared by the offer and fragment
 * parsers. */
#ifndef MOAT_SDP_CANDIDATE_H
#define MOAT_SDP_CANDIDATE_H

#include "sdp_lex.h"
#include "sdp_types.h"

/* Parses one candidate value; on failure returns -1 and *why names the field. */
int moat_sdp_candidate_parse_span(moat_sdp_span value, moat_sdp_candidate *out, const char **why);

#endif

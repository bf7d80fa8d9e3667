/* Writes the answer text from a negotiation plan (JSEP RFC 8829 §5.3). */
#ifndef MOAT_SDP_ANSWER_WRITE_H
#define MOAT_SDP_ANSWER_WRITE_H

#include "sdp_negotiate.h"

/* Returns the g_malloc'd answer. params must already be checked. */
char *moat_sdp_answer_write(const moat_sdp *offer, const moat_sdp_answer_params *params,
                            const moat_sdp_plan *plan, const moat_sdp_negotiation *negotiation);

#endif

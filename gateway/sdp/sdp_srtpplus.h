/* SRTP+ negotiation in SDP (SRTPPLUS.md §6): choosing one offered scheme and
 * writing it into the answer. Parsing is moat_sdp_attr_srtpplus (sdp_attr.h). */
#ifndef MOAT_SDP_SRTPPLUS_H
#define MOAT_SDP_SRTPPLUS_H

#include <glib.h>
#include <stdbool.h>

#include "sdp_types.h"

#define MOAT_SDP_SRTPPLUS_DEFAULT_DEPTH  32
#define MOAT_SDP_SRTPPLUS_DEFAULT_COPIES 2

/* The first offered scheme the gateway supports, with the offered
 * parameters (the gateway never asks for more than the offer). */
bool moat_sdp_srtpplus_choose(const moat_sdp_srtpplus *offered, size_t n, bool prn_supported,
                              bool chain_supported, moat_sdp_srtpplus *chosen);

/* Appends "a=srtpplus:<scheme>[ depth=D;copies=R]\r\n". */
void moat_sdp_srtpplus_write(GString *out, const moat_sdp_srtpplus *scheme);

#endif

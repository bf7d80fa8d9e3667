/* The [prefilter] settings turned into the configurations of the parts that
 * use them: the anomaly detector, the structural stream guard and the
 * SRTP+ profile matching an SRTP one. Pure functions; shared by the WebRTC
 * session (core/session_prefilter.c) and the SDES call leg
 * (call/call_leg_guard.c) so both defend with the same parameters. */
#ifndef MOAT_PREFILTER_CONFIG_H
#define MOAT_PREFILTER_CONFIG_H

#include "prefilter/detector.h"
#include "prefilter/prefilter_settings.h"
#include "prefilter/stream_guard.h"
#include "srtp/srtp_keying.h"

#include "srtpplus.h"

#include <stdint.h>

/* The detector's configuration; declared_pps is the rate the SDP implies. */
moat_detector_config moat_prefilter_detector_config(const moat_prefilter_settings *settings,
                                                    uint32_t declared_pps);

/* The stream guard's configuration (windows, legacy budget). */
moat_stream_guard_config moat_prefilter_guard_config(const moat_prefilter_settings *settings);

/* The SRTP+ profile of an SRTP profile (AES128_CM_SHA1_80 for any other). */
enum srtpplus_profile moat_prefilter_srtpplus_profile(moat_srtp_profile profile);

#endif

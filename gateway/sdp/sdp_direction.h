/* How an answer mirrors an offered direction, and what a direction means for
 * the side that wrote it. */
#ifndef MOAT_SDP_DIRECTION_H
#define MOAT_SDP_DIRECTION_H

#include <stdbool.h>

#include "sdp_types.h"

moat_sdp_direction moat_sdp_direction_answer(moat_sdp_direction offered);
bool moat_sdp_direction_sends(moat_sdp_direction direction);
bool moat_sdp_direction_receives(moat_sdp_direction direction);

#endif

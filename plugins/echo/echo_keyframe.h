/* Asking the peer for a keyframe (PLI) on one of its streams, at most once
 * per MOAT_ECHO_PLI_INTERVAL_US per stream. */
#ifndef MOAT_ECHO_KEYFRAME_H
#define MOAT_ECHO_KEYFRAME_H

#include <stdbool.h>
#include <stddef.h>

#include "echo_session.h"

/* Sends a PLI for the peer's stream on m-line `index` (sender SSRC: our
 * local SSRC there). Returns true when one was sent; false when the stream
 * is not known yet, the rate limit holds, or the gateway refused it. */
bool moat_echo_request_keyframe(moat_echo_session *s, size_t index);

#endif

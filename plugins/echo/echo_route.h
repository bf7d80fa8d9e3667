/* Which of the echo's m-lines feedback is about. */
#ifndef MOAT_ECHO_ROUTE_H
#define MOAT_ECHO_ROUTE_H

#include <stdint.h>

#include "echo_session.h"

/* Index of the m-line whose local (gateway) SSRC is `ssrc`, or -1. */
int moat_echo_media_by_local_ssrc(const moat_echo_session *s, uint32_t ssrc);

#endif

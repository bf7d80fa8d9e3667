/* A cascade leg (gateway/cluster/cascade_*.c): a session between two Moat
 * nodes that skips ICE and DTLS. Its SRTP keys come over the control plane,
 * its path is fixed (the other node's media address and worker port), every
 * packet carries an SRTP+ prn tag (SRTPPLUS.md), and its consent is any
 * authenticated SRTP or SRTCP packet within `consent_timeout_ms` (the RTCP
 * reports both ends send are the keepalive): when the other node dies the
 * leg ends within that time, like a WebRTC session whose consent expired.
 * Control thread. */
#ifndef MOAT_SESSION_CASCADE_H
#define MOAT_SESSION_CASCADE_H

#include "engine/worker.h"
#include "session/session.h"
#include "srtp/srtp_keying.h"

#include <stdint.h>

/* Takes a created, not started session (moat_whip_session_create) and
 * starts it on `worker` as a cascade leg towards `path`. `keys` is copied.
 * `remote_ssrcs` (n, up to 4, zeros skipped): the SSRCs the other node's leg
 * sends from. With them the leg receives by (tuple, SSRC), so the legs of
 * several rooms between the same two worker sockets (one 5-tuple) each get
 * their own packets; with none it owns the tuple alone (the first leg
 * between two sockets would take every later leg's packets). */
void moat_session_start_cascade(moat_session *session, moat_worker *worker, const moat_path *path,
                                const moat_srtp_keying *keys, uint32_t consent_timeout_ms,
                                const uint32_t *remote_ssrcs, size_t n_remote_ssrcs);

/* The SSRC a created, not started session sends its RTCP from (the one a
 * receive-only leg sends everything from). */
uint32_t moat_session_rtcp_ssrc(const moat_session *session);

#endif

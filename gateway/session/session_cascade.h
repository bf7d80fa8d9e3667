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

/* Simulcast layers a link carries at most (plugin.h local_layer_ssrcs). */
#define MOAT_CASCADE_LAYERS 3

/* Takes a created, not started session (moat_whip_session_create) and
 * starts it on `worker` as a cascade leg towards `path`. `keys` is copied.
 * `remote_ssrcs` (n, up to 4, zeros skipped): the SSRCs the other node's leg
 * sends from. With them the leg receives by (tuple, SSRC), so the legs of
 * several rooms between the same two worker sockets (one 5-tuple) each get
 * their own packets; with none it owns the tuple alone (the first leg
 * between two sockets would take every later leg's packets). */
/* `layer_ssrcs` (n, up to MOAT_CASCADE_LAYERS): the SSRCs the other node
 * sends each simulcast layer on, declared on the video m-line the leg
 * receives as that m-line's rids in order (the edge's leg), and
 * `layer_rtx_ssrcs` (n or NULL, zeros skipped) their RTX streams, declared
 * as repairing those rids; all must be among `remote_ssrcs` to be routed
 * here. */
void moat_session_start_cascade(moat_session *session, moat_worker *worker, const moat_path *path,
                                const moat_srtp_keying *keys, uint32_t consent_timeout_ms,
                                const uint32_t *remote_ssrcs, size_t n_remote_ssrcs,
                                const uint32_t *layer_ssrcs, const uint32_t *layer_rtx_ssrcs,
                                size_t n_layers);

/* The SSRC a created, not started session sends its RTCP from (the one a
 * receive-only leg sends everything from). */
uint32_t moat_session_rtcp_ssrc(const moat_session *session);

/* The SSRCs a created leg made with moat_whip_local.relay_layers sends
 * each simulcast layer on (the owner's leg), up to `max`, and each one's
 * RTX SSRC in `rtx_out` (0 where the answer took no RTX); how many. */
size_t moat_session_layer_ssrcs(const moat_session *session, uint32_t *out, uint32_t *rtx_out,
                                size_t max);
/* The RTX SSRC of a created session's (plain) video stream, 0 none. */
uint32_t moat_session_video_rtx_ssrc(const moat_session *session);

#endif

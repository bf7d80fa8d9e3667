/* A media tap: a second consumer of a session's authenticated, decrypted
 * RTP, next to its plugin (recording today; a later SFU redesign will
 * generalize it to rooms). One tap per session.
 *
 * Thread contract:
 *  - on_attach runs on the thread that sets the tap: the control thread
 *    before moat_session_start, the session's worker afterwards.
 *  - on_rtp and on_detach run on the session's worker. on_rtp sees the packet
 *    before the plugin (which may rewrite it in place) and must not block:
 *    copy what it needs into its own bounded queue or drop. on_detach is the
 *    last call (tap removed, or the session ended); the tap's owner frees it
 *    from there on. */
#ifndef MOAT_MEDIA_TAP_H
#define MOAT_MEDIA_TAP_H

#include "plugin.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_TAP_MAX_CODECS 16

/* The codec the peer sends on one m-line: its first negotiated payload type. */
typedef struct {
    moat_media_kind kind;
    uint8_t payload_type;
    char codec[32]; /* encoding name as in the SDP: opus, VP8, H264, ... */
    uint32_t clock_rate;
} moat_tap_codec;

typedef struct {
    /* ---- the thread that sets the tap ---- */
    void (*on_attach)(void *user, const moat_tap_codec *codecs, size_t n_codecs);
    /* ---- the session's worker ---- */
    /* Returns true to ask the peer for a keyframe (PLI) on this packet's SSRC.
     * `arrival_us` is the worker's CLOCK_MONOTONIC time of the batch. */
    bool (*on_rtp)(void *user, const uint8_t *packet, size_t length, uint64_t arrival_us);
    void (*on_detach)(void *user);
} moat_media_tap_ops;

typedef struct {
    const moat_media_tap_ops *ops; /* NULL: no tap */
    void *user;
} moat_media_tap;

typedef struct moat_session moat_session;

/* ---- control thread before moat_session_start, the session's worker after ---- */
/* Sets the session's tap (a previous one is detached first). Control thread
 * before moat_session_start, its worker afterwards. */
void moat_session_set_tap(moat_session *session, moat_media_tap tap);
/* Detaches the tap, if any. Worker thread (or control thread before start). */
void moat_session_clear_tap(moat_session *session);
bool moat_session_has_tap(const moat_session *session);

#endif

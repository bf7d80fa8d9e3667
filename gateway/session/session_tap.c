/* The session's media tap (media_tap.h): attaching it with the codecs the
 * peer sends, and the keyframe request a tap asks for. */
#include "session/media_tap.h"
#include "session/session_internal.h"

#include "rtp/rtcp_feedback.h"

#include <string.h>

static size_t sending_codecs(const moat_session *session, moat_tap_codec *out, size_t capacity)
{
    size_t n = 0;
    for (size_t i = 0; i < session->n_media && n < capacity; i++) {
        const moat_media_info *media = &session->media[i];
        if (!media->peer_sends || media->n_codecs == 0 ||
            media->kind == MOAT_MEDIA_KIND_APPLICATION)
            continue;
        moat_tap_codec *codec = &out[n++];
        codec->kind = media->kind;
        codec->payload_type = media->codecs[0].payload_type;
        g_strlcpy(codec->codec, media->codecs[0].name, sizeof codec->codec);
        codec->clock_rate = media->codecs[0].clock_rate;
    }
    return n;
}

void moat_session_set_tap(moat_session *session, moat_media_tap tap)
{
    moat_session_clear_tap(session);
    session->tap = tap;
    if (tap.ops && tap.ops->on_attach) {
        moat_tap_codec codecs[MOAT_TAP_MAX_CODECS];
        size_t n = sending_codecs(session, codecs, MOAT_TAP_MAX_CODECS);
        tap.ops->on_attach(tap.user, codecs, n);
    }
}

void moat_session_clear_tap(moat_session *session)
{
    moat_media_tap tap = session->tap;
    memset(&session->tap, 0, sizeof session->tap);
    if (tap.ops && tap.ops->on_detach)
        tap.ops->on_detach(tap.user);
}

bool moat_session_has_tap(const moat_session *session)
{
    return session->tap.ops != NULL;
}

void moat_session_tap_rtp(moat_session *session, const uint8_t *packet, size_t length,
                          uint32_t ssrc, uint64_t now_us)
{
    if (!session->tap.ops->on_rtp(session->tap.user, packet, length, now_us))
        return;
    uint8_t buffer[16];
    moat_rtcp_writer writer;
    moat_rtcp_writer_init(&writer, buffer, sizeof buffer);
    if (moat_rtcp_build_pli(&writer, session->rtcp_ssrc, ssrc) == MOAT_RTP_OK)
        moat_session_gateway_calls.send_rtcp(session->handle, buffer, writer.length);
}

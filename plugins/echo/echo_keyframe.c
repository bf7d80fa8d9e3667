/* Rate-limited PLI towards the peer. */
#include "echo_keyframe.h"

#include "rtp/rtcp_feedback.h"

bool moat_echo_request_keyframe(moat_echo_session *s, size_t index)
{
    moat_echo_stream *st = &s->streams[index];
    if (!st->primary_known)
        return false;
    uint64_t now = s->gateway->now_us();
    if (st->pli_sent && now - st->last_pli_us < MOAT_ECHO_PLI_INTERVAL_US)
        return false;

    uint8_t buf[16];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    if (moat_rtcp_build_pli(&w, s->streams[index].local_ssrc, st->primary_ssrc) != MOAT_RTP_OK)
        return false;
    if (s->gateway->send_rtcp(s->handle, buf, w.length) != 0)
        return false;
    st->pli_sent = true;
    st->last_pli_us = now;
    return true;
}

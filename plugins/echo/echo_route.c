/* Mapping the SSRC of incoming feedback to the echo's m-line (the core maps
 * incoming RTP: rtp/rtp_demux.h). */
#include "echo_route.h"

int moat_echo_media_by_local_ssrc(const moat_echo_session *s, uint32_t ssrc)
{
    for (size_t i = 0; i < s->n_media; i++) {
        if (s->streams[i].local_ssrc == ssrc)
            return (int)i;
    }
    return -1;
}

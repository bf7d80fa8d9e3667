/* Forged SRTP and SRTCP shaped like a session's own packets (valid header,
 * random ciphertext and tags, legitimate size, sequence ahead of the live
 * stream) that can only fail authentication. */
#include "forged_srtp.h"

#include "rtp/rtcp_packet.h"
#include "rtp/rtp_bytes.h"

#include <stdatomic.h>

#define RTP_HEADER 12
/* Far enough ahead of the live stream that it never catches up within its
 * packets-in-flight, near enough to stay inside any plausibility window
 * (SRTP+ allows 4096 ahead). */
#define AHEAD_MIN    100
#define AHEAD_SPREAD 1000
#define SR_LENGTH    28 /* header, sender SSRC, sender info */

size_t forged_srtp_rtp(const flood_session *s, uint32_t ssrc, uint16_t sequence,
                       flood_random *random, uint8_t *out, size_t capacity)
{
    size_t length = s->typical_length;
    if (length > capacity)
        length = capacity;
    if (length < RTP_HEADER + s->srtp_tag_length + 1)
        length = RTP_HEADER + s->srtp_tag_length + 1;
    flood_random_fill(random, out, length);
    out[0] = 0x80; /* V=2, no padding, extension or CSRC */
    out[1] = s->payload_type & 0x7f;
    moat_wr16(out + 2, sequence);
    moat_wr32(out + 8, ssrc);
    return length;
}

size_t forged_srtp_rtcp(const flood_session *s, uint32_t ssrc, uint32_t srtcp_index,
                        flood_random *random, uint8_t *out, size_t capacity)
{
    size_t length = SR_LENGTH + s->srtcp_trailer_length + (s->srtpplus_negotiated ? 4 : 0);
    if (length > capacity)
        return 0;
    flood_random_fill(random, out, length);
    out[0] = 0x80; /* V=2, no report blocks */
    out[1] = MOAT_RTCP_SR;
    moat_wr16(out + 2, SR_LENGTH / 4 - 1);
    moat_wr32(out + 4, ssrc);
    /* E flag and 31-bit index where libsrtp reads it: after the encrypted
     * part and before the HMAC tag, or last with AEAD (whose tag is inside
     * the encrypted part). An index far ahead is never a replay. */
    size_t index_at = s->profile == MOAT_SRTP_PROFILE_AEAD_AES_128_GCM
                          ? SR_LENGTH + s->srtcp_trailer_length - 4
                          : SR_LENGTH;
    moat_wr32(out + index_at, 0x80000000u | (srtcp_index & 0x7fffffffu));
    return length;
}

uint16_t forged_srtp_sequence_ahead(const flood_session *s, uint64_t k)
{
    uint32_t next = atomic_load_explicit(&s->next_sequence, memory_order_relaxed);
    const flood_options *o = s->env->options;
    uint32_t ahead = o->forge_ahead ? o->forge_ahead : AHEAD_MIN;
    uint32_t spread = o->forge_spread ? o->forge_spread : AHEAD_SPREAD;
    return (uint16_t)(next + ahead + (uint32_t)(k % spread));
}

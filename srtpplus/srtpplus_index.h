/* SRTP packet index estimation, RFC 3711 section 3.3.1 and Appendix A. The sender and
 * the receiver both use it so that their indexes agree with libsrtp's. */
#ifndef SRTPPLUS_INDEX_H
#define SRTPPLUS_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "srtpplus_scheme.h"

/* Index of a packet with sequence number seq given the highest index seen so far.
 * Returns false when the guess falls before index 0 or past 2^48 - 1, which no
 * legitimate packet of this stream can have. */
static inline bool srtpplus_index_estimate(uint64_t highest, uint16_t seq, uint64_t *index)
{
    uint64_t roc = highest >> 16;
    uint32_t s_l = (uint32_t)(highest & 0xffff);
    uint64_t v = roc;
    if (s_l < 32768) {
        if (seq > s_l + 32768) {
            if (roc == 0)
                return false;
            v = roc - 1;
        }
    } else if (s_l - 32768 > seq) {
        v = roc + 1;
    }
    uint64_t i = v << 16 | seq;
    if (i >= SRTPPLUS_RTP_INDEX_LIMIT)
        return false;
    *index = i;
    return true;
}

#endif

/* Owns the choice of the one SSRC per kind a recording takes
 * (record_ssrc.h). */
#include "record/record_ssrc.h"

static void count(moat_record_ssrc *c, uint32_t ssrc, size_t bytes)
{
    for (size_t i = 0; i < c->n_candidates; i++) {
        if (c->candidates[i] == ssrc) {
            c->candidate_bytes[i] += bytes;
            return;
        }
    }
    if (c->n_candidates < MOAT_RECORD_SSRC_CANDIDATES) {
        c->candidates[c->n_candidates] = ssrc;
        c->candidate_bytes[c->n_candidates++] = bytes;
    }
}

static void take_largest(moat_record_ssrc *c, uint64_t now_us)
{
    size_t best = 0;
    for (size_t i = 1; i < c->n_candidates; i++) {
        if (c->candidate_bytes[i] > c->candidate_bytes[best])
            best = i;
    }
    c->taken = true;
    c->fresh = true;
    c->ssrc = c->candidates[best];
    c->last_us = now_us;
    c->n_candidates = 0;
}

moat_record_ssrc_verdict moat_record_ssrc_choose(moat_record_ssrc *c, uint32_t ssrc, size_t bytes,
                                                 uint64_t now_us, uint64_t choose_us)
{
    if (c->taken && ssrc != c->ssrc) {
        if (now_us - c->last_us < MOAT_RECORD_SSRC_SILENT_US)
            return MOAT_RECORD_SSRC_SKIP;
        c->taken = false; /* it fell silent: choose again */
    }
    if (!c->taken) {
        if (c->n_candidates == 0)
            c->choosing_since_us = now_us;
        count(c, ssrc, bytes);
        if (now_us - c->choosing_since_us < choose_us)
            return MOAT_RECORD_SSRC_SKIP;
        take_largest(c, now_us);
        if (ssrc != c->ssrc)
            return MOAT_RECORD_SSRC_SKIP;
    }
    c->last_us = now_us;
    if (c->fresh) {
        c->fresh = false;
        return MOAT_RECORD_SSRC_RECORD_FIRST;
    }
    return MOAT_RECORD_SSRC_RECORD;
}

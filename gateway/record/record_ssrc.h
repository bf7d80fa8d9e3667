/* Which SSRC of one kind a recording takes: a recording has one track per
 * kind, and a publisher may send several SSRCs of one payload type
 * (simulcast layers). The SSRCs that arrive in the first `choose_us` are
 * compared and the one that brought the most bytes (the highest layer) is
 * taken; the others are skipped. When the taken SSRC falls silent for
 * MOAT_RECORD_SSRC_SILENT_US (a sender that restarted with a new SSRC),
 * the choice starts again. No I/O; one thread (the session's worker). */
#ifndef MOAT_RECORD_SSRC_H
#define MOAT_RECORD_SSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_RECORD_SSRC_CANDIDATES 4
#define MOAT_RECORD_SSRC_SILENT_US  1000000u

typedef struct {
    bool taken;
    bool fresh; /* taken, and none of its packets recorded yet */
    uint32_t ssrc;
    uint64_t last_us; /* the taken SSRC's last packet, or when it was taken */
    uint64_t choosing_since_us;
    size_t n_candidates;
    uint32_t candidates[MOAT_RECORD_SSRC_CANDIDATES];
    uint64_t candidate_bytes[MOAT_RECORD_SSRC_CANDIDATES];
} moat_record_ssrc;

typedef enum {
    MOAT_RECORD_SSRC_SKIP,
    MOAT_RECORD_SSRC_RECORD,
    MOAT_RECORD_SSRC_RECORD_FIRST, /* the first packet of a newly taken SSRC */
} moat_record_ssrc_verdict;

/* One packet of `bytes` from `ssrc` at now_us: record it or not. */
moat_record_ssrc_verdict moat_record_ssrc_choose(moat_record_ssrc *c, uint32_t ssrc, size_t bytes,
                                                 uint64_t now_us, uint64_t choose_us);

#endif

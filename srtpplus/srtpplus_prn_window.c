/* The receiver's ring of precomputed prn tags around the highest authenticated index:
 * sizing it and refilling it in batches, outside the per-packet check. */
#include "srtpplus_prn_window.h"
#include "srtpplus_status.h"

#include <stdlib.h>
#include <string.h>

/* Fewer than `chunk` tags beyond highest + ahead are left once highest reaches this. */
static void update_refill_at(struct srtpplus_prn_window *window)
{
    uint64_t margin = (uint64_t)window->ahead + window->chunk;
    if (window->hi >= window->limit)
        window->refill_at = UINT64_MAX;
    else
        window->refill_at = window->hi > margin ? window->hi - margin : 0;
}

int srtpplus_prn_window_init(struct srtpplus_prn_window *window, uint8_t kind, uint32_t ssrc,
                             uint32_t behind, uint32_t ahead, uint32_t min_chunk, uint64_t limit)
{
    if (!window || min_chunk == 0 || limit == 0)
        return SRTPPLUS_ERR_PARAM;
    memset(window, 0, sizeof(*window));
    uint64_t needed = (uint64_t)behind + ahead + 1 + 2 * (uint64_t)min_chunk;
    uint64_t size = 1;
    while (size < needed)
        size <<= 1;
    window->tags = calloc(size, sizeof(*window->tags));
    if (!window->tags)
        return SRTPPLUS_ERR_NOMEM;
    window->mask = size - 1;
    /* The ring is a power of two for a cheap slot computation; whatever that rounding
     * leaves over widens the chunks, so refills are rarer. */
    window->chunk = (uint32_t)((size - behind - ahead - 1) / 2);
    window->ahead = ahead;
    window->limit = limit;
    window->ssrc = ssrc;
    window->kind = kind;
    update_refill_at(window);
    return SRTPPLUS_OK;
}

void srtpplus_prn_window_release(struct srtpplus_prn_window *window)
{
    if (!window)
        return;
    free(window->tags);
    memset(window, 0, sizeof(*window));
    window->refill_at = UINT64_MAX; /* an absent window never asks for work */
}

int srtpplus_prn_window_refill(struct srtpplus_prn_window *window, struct srtpplus_prn *prn,
                               uint64_t highest)
{
    uint64_t size = window->mask + 1;
    uint64_t target = highest + window->ahead + 1 + 2 * (uint64_t)window->chunk;
    if (target > window->limit)
        target = window->limit;
    if (target <= window->hi)
        return SRTPPLUS_OK;

    uint64_t oldest_kept = target > size ? target - size : 0;
    uint64_t start = window->hi;
    bool contiguous = window->hi > window->lo && start >= oldest_kept;
    if (!contiguous && start < oldest_kept)
        start = oldest_kept;

    /* Compute in runs that do not cross the end of the ring. */
    uint64_t next = start;
    while (next < target) {
        uint64_t slot = next & window->mask;
        uint64_t run = size - slot;
        if (run > target - next)
            run = target - next;
        int rc = srtpplus_prn_tags(prn, window->kind, window->ssrc, next, (size_t)run,
                                   window->tags + slot);
        if (rc != SRTPPLUS_OK) {
            /* Slots in [start, next) now hold new tags, so the old range is gone too. */
            window->lo = window->hi = 0;
            update_refill_at(window);
            return rc;
        }
        next += run;
    }
    if (contiguous)
        window->lo = window->lo > oldest_kept ? window->lo : oldest_kept;
    else
        window->lo = start;
    window->hi = target;
    update_refill_at(window);
    return SRTPPLUS_OK;
}

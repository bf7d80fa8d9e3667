/* The relay's sources as relay.c uses them (relay.h has the public calls):
 * what one sender has waiting per consumer worker, counted in by the
 * sending thread and out by the consumer's. Atomics: any thread. */
#ifndef MOAT_RELAY_SOURCE_PRIVATE_H
#define MOAT_RELAY_SOURCE_PRIVATE_H

#include "engine/relay.h"

#include <stdbool.h>

/* A source for `n_consumers` workers, at most `cap` entries waiting for
 * each; one reference, the caller's. */
moat_relay_source *moat_relay_source_make(unsigned n_consumers, size_t cap);
/* One more entry of `source` for `consumer`: false at its cap (nothing
 * counted). NULL: no source, always true. */
bool moat_relay_source_enter(moat_relay_source *source, unsigned consumer);
/* The entry left (delivered, its push failed, or the relay freed it). */
void moat_relay_source_leave(moat_relay_source *source, unsigned consumer);

#endif

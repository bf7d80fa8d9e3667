/* A fan-out list of the routing core (relay.h): the targets one producer
 * sends each of its packets to, grouped by consumer worker into target sets
 * and published as an immutable, versioned snapshot.
 *
 *  - The control path (or any thread) republishes the whole list when
 *    membership changes (moat_relay_fanout_publish); the producer picks the
 *    new snapshot up at its next send by comparing one atomic version, so a
 *    send in the steady state takes no lock and copies no target array.
 *  - A send copies the packet once (relay.h) and takes one ring slot per
 *    consumer worker that has targets; targets on the producer's own worker
 *    are delivered at once.
 *  - The entries count against the producer's relay source when it has one
 *    (relay.h: an eighth of the pool waiting per consumer, then
 *    source_full), shared with the producer's other sends.
 *
 * Thread contract: new/free by the owner while no send runs; publish from
 * any thread (serialized by the list's mutex); send from one thread at a
 * time (the producer, normally its worker). The relay outlives the list. */
#ifndef MOAT_RELAY_FANOUT_H
#define MOAT_RELAY_FANOUT_H

#include "engine/relay.h"

typedef struct moat_relay_fanout moat_relay_fanout;

/* Sends count against `source` (a reference taken; NULL: none). */
moat_relay_fanout *moat_relay_fanout_new(moat_relay *relay, moat_relay_source *source);
/* Releases the snapshots it holds (entries already queued keep theirs) and
 * its source reference (buffers in flight keep theirs). */
void moat_relay_fanout_free(moat_relay_fanout *fanout);

/* Replaces the list: takes over one reference per targets[i], whose worker
 * is consumers[i] (a consumer that is not a worker releases it at once).
 * Any thread. */
void moat_relay_fanout_publish(moat_relay_fanout *fanout, void *const *targets,
                               const unsigned *consumers, size_t n);

/* Sends `packet` to the current list; returns how many targets it was
 * delivered or queued to (drops are counted by the relay). The producer. */
size_t moat_relay_fanout_send(moat_relay_fanout *fanout, const uint8_t *packet, size_t length);

/* Targets in the last published list. Any thread. */
size_t moat_relay_fanout_size(moat_relay_fanout *fanout);
/* How many snapshots were published (the version). Any thread. */
uint64_t moat_relay_fanout_version(moat_relay_fanout *fanout);

#endif

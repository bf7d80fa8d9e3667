/* Two associations wired back to back in memory: each one's send_packet
 * queues the packet for the other, and pumping feeds the queues into
 * moat_sctp_association_receive and advances the SCTP clock in 10 ms ticks
 * whenever nothing is in flight. Every callback is recorded. A lossy wire
 * drops a share of packets, chosen by a seeded GRand so runs repeat. */
#ifndef MOAT_SCTP_TEST_LINK_H
#define MOAT_SCTP_TEST_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "sctp/sctp_association.h"

typedef struct {
    uint16_t stream_id;
    uint32_t ppid;
    GBytes *data;
} sctp_test_message;

typedef struct sctp_test_end sctp_test_end;

struct sctp_test_end {
    moat_sctp_association *assoc;
    sctp_test_end *peer;
    GQueue inbox;           /* GBytes: packets for this end */
    GRand *rand;            /* shared with the peer */
    double drop_rate;       /* share of this end's outgoing packets dropped */
    bool wire_enabled;      /* false: outgoing packets vanish (peer unreachable) */
    size_t max_wire_packet; /* non-zero: larger outgoing packets are dropped */

    size_t packets_sent, packets_dropped, largest_packet;
    int up_events, down_events;
    GArray *opened;            /* moat_data_channel_info */
    GArray *closed;            /* uint16_t */
    GPtrArray *messages;       /* sctp_test_message */
    size_t messages_when_down; /* messages recorded when association_state(false) came */
    unsigned dry_events, writable_events;
    bool free_on_down; /* free the association from inside association_state(false) */
    bool free_on_message;
    /* Non-zero: pause receiving once this many messages were recorded. */
    unsigned pause_after;
    /* When set, every callback asserts it runs on this thread. */
    GThread *owner_thread;
    /* Optional: runs in the writable callback (after writable_events++), as
     * an owner flushing its queue would. */
    void (*writable_hook)(sctp_test_end *end);
    /* Optional: sees every packet this end sends, before the wire. */
    void (*tap)(sctp_test_end *end, const uint8_t *packet, size_t length, void *user);
    void *tap_user;
};

typedef struct {
    sctp_test_end client; /* DTLS client: even stream ids */
    sctp_test_end server;
    GRand *rand;
    uint64_t ticks;
    /* Real time slept per tick, for links pumped on a thread that does not
     * drive the SCTP clock (another thread advances it meanwhile). */
    unsigned tick_sleep_us;
} sctp_test_link;

/* Creates both associations (ports 5000); asserts on failure. */
void sctp_test_link_init(sctp_test_link *link, uint32_t max_message_size);
void sctp_test_link_clear(sctp_test_link *link);

/* Both ends connect; pumps until both report up (asserts). */
void sctp_test_link_connect(sctp_test_link *link);

/* Feeds queued packets until none is left, then advances one 10 ms tick;
 * repeats ticks times. */
void sctp_test_link_pump(sctp_test_link *link, unsigned ticks);

/* Pumps until done returns true (true) or max_ticks ticks passed (false). */
bool sctp_test_link_pump_until(sctp_test_link *link, bool (*done)(sctp_test_link *, void *),
                               void *arg, unsigned max_ticks);

/* Sends, pumping while the send buffer is full; returns the final result. */
int sctp_test_link_send(sctp_test_link *link, sctp_test_end *from, uint16_t stream_id,
                        uint32_t ppid, const uint8_t *data, size_t length);

/* Opens a DCEP channel from one end and pumps until the other reports it;
 * returns the stream id. */
uint16_t sctp_test_link_open(sctp_test_link *link, sctp_test_end *from, const char *label,
                             const char *protocol, bool ordered, int32_t max_retransmits,
                             int32_t max_lifetime_ms);

moat_data_channel_info sctp_test_channel_info(const char *label, const char *protocol, bool ordered,
                                              int32_t max_retransmits, int32_t max_lifetime_ms);

/* The i-th recorded message of an end. */
const sctp_test_message *sctp_test_end_message(const sctp_test_end *end, guint i);

#endif

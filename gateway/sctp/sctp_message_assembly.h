/* Reassembly of messages usrsctp hands over in pieces. A message larger than
 * the receive buffer, or one delivered partially (partial delivery API), comes
 * out of usrsctp_recvv in several reads; with fragment interleave level 2 the
 * pieces of messages on different streams alternate, so each stream (and
 * ordered/unordered) has its own partial buffer. The total size of a message
 * is bounded: a peer cannot make us hold more than max_message_size per
 * partial message. */
#ifndef MOAT_SCTP_MESSAGE_ASSEMBLY_H
#define MOAT_SCTP_MESSAGE_ASSEMBLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_sctp_message_assembly moat_sctp_message_assembly;

/* Keys: a stream id, with MOAT_SCTP_ASSEMBLY_UNORDERED for unordered
 * messages; MOAT_SCTP_ASSEMBLY_NOTIFICATION for notifications. */
#define MOAT_SCTP_ASSEMBLY_UNORDERED    0x10000u
#define MOAT_SCTP_ASSEMBLY_NOTIFICATION 0x20000u

typedef enum {
    MOAT_SCTP_ASSEMBLY_INCOMPLETE, /* more pieces to come */
    MOAT_SCTP_ASSEMBLY_COMPLETE,   /* data and length hold the whole message */
    MOAT_SCTP_ASSEMBLY_DROPPED,    /* last piece of a message over the limit */
} moat_sctp_assembly_result;

/* Aborts on allocation failure, as GLib does. */
moat_sctp_message_assembly *moat_sctp_message_assembly_new(size_t max_message_size);
void moat_sctp_message_assembly_free(moat_sctp_message_assembly *m);

/* Adds one piece read for key; last says MSG_EOR was set. On COMPLETE,
 * data and length point at the message: at piece itself when the message came
 * whole, else at a buffer that stays valid until the next add for that key
 * or moat_sctp_message_assembly_discard. */
moat_sctp_assembly_result moat_sctp_message_assembly_add(moat_sctp_message_assembly *m,
                                                         uint32_t key, const uint8_t *piece,
                                                         size_t piece_length, bool last,
                                                         const uint8_t **data, size_t *length);

/* Forgets a partial message (partial delivery aborted). */
void moat_sctp_message_assembly_discard(moat_sctp_message_assembly *m, uint32_t key);

#endif

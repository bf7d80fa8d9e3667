/* Mailboxes between usrsctp and the associations. usrsctp calls conn_output
 * and socket upcalls from inside its own frames, with its locks held, on
 * whichever thread drove it: the owner's receive/send, or the thread that
 * advanced the shared timer clock. Nothing of the session may run there, so
 * those callbacks only copy packets and raise flags in the association's
 * mailbox, under one process-wide mutex; the owner thread empties the mailbox
 * from its own API calls or timer tick and runs the session's callbacks then.
 *
 * A mailbox is known to usrsctp by an id (the AF_CONN address) rather than a
 * pointer, so a packet usrsctp emits after the association is gone finds no
 * mailbox and is dropped instead of touching freed memory. */
#ifndef MOAT_SCTP_MAILBOX_H
#define MOAT_SCTP_MAILBOX_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

struct socket;

typedef struct {
    /* Set by moat_sctp_mailbox_register; the rest is private to
     * sctp_mailbox.c and guarded by its mutex. */
    uintptr_t id;
    void *context;
    GByteArray *packets; /* records: 4-byte host-order length, then the packet */
    bool events;         /* the socket became readable or writable */
    bool in_dirty_list;
    pthread_t owner;
} moat_sctp_mailbox;

/* Gives the mailbox a fresh id and makes it reachable from usrsctp's
 * callbacks; context is what moat_sctp_mailbox_find_owned returns. The owner
 * is the calling thread until moat_sctp_mailbox_claim says otherwise. */
void moat_sctp_mailbox_register(moat_sctp_mailbox *mb, void *context);

/* Unreachable from then on; queued packets are dropped. */
void moat_sctp_mailbox_unregister(moat_sctp_mailbox *mb);

/* Makes the calling thread the owner: the thread whose timer tick delivers
 * this mailbox's work. */
void moat_sctp_mailbox_claim(moat_sctp_mailbox *mb);

/* Owner only. Swaps the queued packets into *packets (which must be empty and
 * is handed to the mailbox for reuse) and clears the event flag. true when
 * there were packets or events. */
bool moat_sctp_mailbox_take(moat_sctp_mailbox *mb, GByteArray **packets, bool *events);

/* Walks records of a GByteArray filled by the mailbox: returns false at the
 * end, else the next packet and advances *offset. */
bool moat_sctp_mailbox_next_packet(const GByteArray *packets, size_t *offset,
                                   const uint8_t **packet, size_t *length);

/* Ids of mailboxes owned by the calling thread that have work, removed from
 * the dirty list; at most capacity of them (call again while it returns
 * capacity). */
size_t moat_sctp_mailbox_collect_owned(uintptr_t *ids, size_t capacity);

/* The context of the mailbox with this id if it is still registered and owned
 * by the calling thread, else NULL. */
void *moat_sctp_mailbox_find_owned(uintptr_t id);

/* usrsctp's conn_output (usrsctp_init_nothreads) and socket upcall
 * (usrsctp_set_upcall, with the id as argument). */
int moat_sctp_mailbox_conn_output(void *address, void *buffer, size_t length, uint8_t tos,
                                  uint8_t set_df);
void moat_sctp_mailbox_upcall(struct socket *sock, void *arg, int flags);

#endif

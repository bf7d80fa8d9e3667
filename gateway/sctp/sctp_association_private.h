/* The association's state, shared by the files that implement it:
 * sctp_association.c (lifecycle, sending, the delivery loop),
 * sctp_channel_control.c (DCEP and stream resets) and sctp_notification.c
 * (usrsctp notifications). Not for use outside gateway/sctp. */
#ifndef MOAT_SCTP_ASSOCIATION_PRIVATE_H
#define MOAT_SCTP_ASSOCIATION_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "sctp/data_channel.h"
#include "sctp/sctp_association.h"
#include "sctp/sctp_mailbox.h"
#include "sctp/sctp_message_assembly.h"
#include "sctp/sctp_plpmtud.h"
#include "sctp/sctp_probe.h"

struct socket;

/* The association's buffer sizes (sctp_window.c). */
typedef struct {
    size_t limit;                   /* send + receive, bytes: the session's bound */
    size_t send, receive;           /* current SO_SNDBUF and SO_RCVBUF */
    int64_t last_tune_us;           /* monotonic time of the last tuning pass */
    moat_sctp_memory_budget budget; /* take == NULL: none */
    size_t charged;                 /* taken from the budget, not given back */
    /* Receive tuning: bytes_received and the time at the last measurement. */
    uint64_t rx_mark_bytes;
    int64_t rx_mark_us;
    /* Idle detection: byte counters at the last traffic seen, and when. */
    uint64_t idle_mark_bytes, idle_mark_sent;
    int64_t last_traffic_us;
    int64_t last_idle_check_us; /* moat_sctp_window_idle */
} moat_sctp_window;

/* PLPMTUD (sctp_pmtu.c). */
typedef struct {
    bool enabled;
    moat_plpmtud machine;
    moat_sctp_probe_header header; /* learned from our outgoing packets */
    uint32_t applied;              /* the MTU usrsctp was last given */
    uint8_t *buffer;               /* a probe being built, MOAT_SCTP_MAX_MTU */
    GByteArray *stripped;          /* an inbound packet without our HEARTBEAT ACK */
    int64_t next_loss_check_us;
    uint64_t probes_unsent; /* probes that could not be built */
} moat_sctp_pmtu;

struct moat_sctp_association {
    moat_sctp_callbacks cb;
    void *user;
    struct socket *sock;
    moat_sctp_mailbox mailbox;
    GByteArray *packets; /* packets taken from the mailbox, being delivered */
    uint8_t *receive_buffer;
    moat_sctp_message_assembly *assembly;
    moat_data_channel_table *channels;
    moat_sctp_counters counters;

    bool is_dtls_client;
    uint16_t remote_port;
    size_t max_send_size;
    size_t peer_max_message_size; /* a=max-message-size, 0 for none */
    moat_sctp_window window;
    moat_sctp_pmtu pmtu;
    uint16_t out_streams; /* negotiated; 0 until up */

    bool connect_started;
    bool up;             /* association established and not ended */
    bool ended;          /* association_state(false) has been reported */
    bool eof;            /* usrsctp_recvv returned 0: nothing more to read */
    bool maybe_readable; /* the upcall fired since a read found nothing */
    bool shutdown_requested;
    bool shutdown_sent;
    bool send_blocked; /* a send returned -EAGAIN; report writable */
    /* What usrsctp held when the send was refused, and whether a packet came
     * from the peer since: writable waits for either to show the peer's
     * progress (moat_sctp_association_send_refused). */
    size_t blocked_buffered;
    bool inbound_since_block;
    bool receive_paused; /* the owner applies backpressure: nothing is read */
    bool channel_work;   /* some channel has a DCEP message or reset to retry */

    /* Re-entrancy: callbacks run inside deliver and may call back in. */
    unsigned delivering;
    bool deliver_again;
    bool free_requested;
};

/* Whether callbacks may still run (not after free was requested). */
static inline bool moat_sctp_association_live(const moat_sctp_association *a)
{
    return !a->free_requested;
}

/* Runs everything pending for the association on the calling thread: hands
 * queued packets to send_packet, reads messages and notifications, retries
 * DCEP messages and resets. Nested calls (from callbacks) return at once and
 * make the outer call loop again. */
void moat_sctp_association_deliver(moat_sctp_association *a);

/* Queues one message with explicit parameters. 0 or -errno (-EAGAIN when the
 * send buffer is full). pr_policy is an SCTP_PR_SCTP_* value. */
int moat_sctp_association_send_raw(moat_sctp_association *a, uint16_t stream_id, uint32_t ppid,
                                   const uint8_t *data, size_t length, bool unordered,
                                   uint16_t pr_policy, uint32_t pr_value);

/* A send got -EAGAIN: writable is reported once the peer made progress
 * (less buffered than now, or any packet from it) and half the send buffer
 * is free. Not at once: usrsctp also refuses at its chunk limit
 * (sctp_max_chunks_on_queue) with most of the buffer free, and a retry
 * from the writable callback would be refused again, for ever. */
void moat_sctp_association_send_refused(moat_sctp_association *a);

/* Reports association_state(false) once, if it has not been reported. */
void moat_sctp_association_report_down(moat_sctp_association *a);

/* sctp_window.c. Sizes both buffers for a new association within
 * MOAT_SCTP_SESSION_BYTES_DEFAULT; 0 or -errno. */
int moat_sctp_window_init(moat_sctp_association *a);
/* Applies a new memory limit at once, shrinking the buffers if needed. */
void moat_sctp_window_set_limit(moat_sctp_association *a, size_t limit);
/* Grows the buffers towards the bandwidth-delay product (at most every
 * 10 ms); runs no callback (only the budget's take and give). */
void moat_sctp_window_tune(moat_sctp_association *a);
/* Installs the budget (once; later calls are ignored) and resizes. */
void moat_sctp_window_set_budget(moat_sctp_association *a, const moat_sctp_memory_budget *budget);
/* The association came up: a budgeted receive buffer returns what INIT
 * borrowed, and receive tuning starts measuring. */
void moat_sctp_window_up(moat_sctp_association *a);
/* Gives idle growth back (at most every 100 ms, and only when something is
 * charged); runs no callback (only the budget's give). */
void moat_sctp_window_idle(moat_sctp_association *a);
/* Gives back everything taken from the budget (the association ends). */
void moat_sctp_window_release(moat_sctp_association *a);

/* sctp_pmtu.c: PLPMTUD hooks. init/release with the association; outgoing
 * sees every packet usrsctp sends; incoming sees every inbound packet whose
 * checksum is right, returns true when it consumed the packet and may
 * replace it (by one without our HEARTBEAT ACK); run drives the timers and
 * sends probes (through send_packet: only inside the delivery loop or where
 * send_packet may run). */
void moat_sctp_pmtu_init(moat_sctp_association *a);
void moat_sctp_pmtu_release(moat_sctp_association *a);
void moat_sctp_pmtu_outgoing(moat_sctp_association *a, const uint8_t *packet, size_t length);
bool moat_sctp_pmtu_incoming(moat_sctp_association *a, const uint8_t **packet, size_t *length);
void moat_sctp_pmtu_run(moat_sctp_association *a);

/* sctp_notification.c: one whole notification read from the socket. */
void moat_sctp_notification_handle(moat_sctp_association *a, const uint8_t *data, size_t length);

/* sctp_channel_control.c. Only the functions said to run no callback may be
 * called outside moat_sctp_association_deliver: a callback may free the
 * association, which is only safe inside the delivery loop. */
/* A message with PPID 50 on stream_id. */
void moat_sctp_channels_handle_dcep(moat_sctp_association *a, uint16_t stream_id,
                                    const uint8_t *data, size_t length);
/* A user message arrived on a channel we opened: it implies the ACK. */
void moat_sctp_channels_data_seen(moat_sctp_association *a, moat_data_channel *ch);
/* The association came up: send the OPENs of channels created before. */
void moat_sctp_channels_association_up(moat_sctp_association *a);
/* Retries DCEP messages and stream resets that could not be issued before,
 * and ends channels for which that failed (reporting channel_closed). */
void moat_sctp_channels_retry(moat_sctp_association *a);
/* Queues the channel's DCEP OPEN; runs no callback. 0, -EAGAIN (send buffer
 * full), or another -errno, after which retry ends the channel. */
int moat_sctp_channels_send_open(moat_sctp_association *a, moat_data_channel *ch);
/* A stream reset event: flags SCTP_STREAM_RESET_*; count 0 means all. */
void moat_sctp_channels_stream_reset(moat_sctp_association *a, uint16_t flags,
                                     const uint16_t *streams, size_t count);

#endif

/* One SCTP association over DTLS (RFC 8261) carrying WebRTC data channels
 * (RFC 8831) opened with DCEP (RFC 8832) or negotiated out of band. SCTP
 * packets come in and go out as byte buffers; there is no socket.
 *
 * Threading: an association belongs to the thread that last called one of
 * these functions on it (the session's media worker). Every callback runs on
 * that thread, synchronously inside one of these calls or inside
 * moat_sctp_stack_handle_timers on that thread, never inside usrsctp's own
 * frames. So callbacks may call back into the association (send from
 * message, free from association_state, ...). Calls on one association must
 * not overlap from two threads. */
#ifndef MOAT_SCTP_ASSOCIATION_H
#define MOAT_SCTP_ASSOCIATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sctp/data_channel.h"
#include "sctp/sctp_tuning.h"

typedef struct moat_sctp_association moat_sctp_association;

typedef struct {
    /* An SCTP packet to encrypt into one DTLS record (at most MOAT_SCTP_MTU
     * bytes). */
    void (*send_packet)(void *user, const uint8_t *packet, size_t length);
    /* The peer opened a channel with DCEP and we acknowledged it. */
    void (*channel_open)(void *user, const moat_data_channel_info *info);
    /* A whole message. ppid is MOAT_SCTP_PPID_STRING/BINARY, or
     * STRING_EMPTY/BINARY_EMPTY with length 0 (the byte SCTP needs on the wire
     * is not passed on); other PPIDs are passed as received. data may be NULL
     * when length is 0. */
    void (*message)(void *user, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                    size_t length);
    /* The peer reset its outgoing stream: after it closed the channel (we
     * then reset ours too) or in answer to our close. Once per channel. */
    void (*channel_closed)(void *user, uint16_t stream_id);
    /* true once the association is established; false once after that when
     * it ends (shutdown complete, abort, lost), or when it could not be
     * established. */
    void (*association_state)(void *user, bool up);
    /* Everything queued has been acknowledged. */
    void (*sender_dry)(void *user);
    /* Optional (may be NULL): a send returned -EAGAIN and there is room in
     * the send buffer again. */
    void (*writable)(void *user);
    /* Optional (may be NULL): SCTP gave up on one of our messages on a
     * partially reliable channel (it is counted in messages_abandoned). */
    void (*message_abandoned)(void *user, uint16_t stream_id);
} moat_sctp_callbacks;

typedef struct {
    uint64_t messages_received, messages_sent, bytes_received, bytes_sent;
    /* PR-SCTP messages the sender gave up on (SCTP_SEND_FAILED_EVENT). */
    uint64_t messages_abandoned;
    /* Peer messages dropped: malformed or unacceptable DCEP, data on a stream
     * without a channel, messages over MOAT_SCTP_MAX_RECEIVE_MESSAGE_SIZE. */
    uint64_t messages_dropped;
    /* Packets dropped before SCTP: too short, or a wrong CRC32c. */
    uint64_t packets_bad_checksum;
} moat_sctp_counters;

/* is_dtls_client picks our stream id parity for DCEP channels: even for the
 * DTLS client, odd for the server (RFC 8832 §6). Ports come from
 * a=sctp-port (5000 by default). max_message_size is the peer's
 * a=max-message-size: larger sends fail with -EMSGSIZE; 0 means the peer set
 * no limit, which leaves ours (MOAT_SCTP_SOCKET_BUFFER_SIZE, or less under a
 * small memory limit). cb and user are
 * copied/kept. moat_sctp_stack_init must have succeeded. NULL on failure, with
 * a reason in error. */
moat_sctp_association *moat_sctp_association_new(bool is_dtls_client, uint16_t local_port,
                                                 uint16_t remote_port, uint32_t max_message_size,
                                                 const moat_sctp_callbacks *cb, void *user,
                                                 char *error, size_t error_size);

/* Starts the association (both ends connect, RFC 8841 §5); call once DTLS is
 * up. A packet received earlier starts it too, since DTLS must be up then.
 * 0 or -errno. */
int moat_sctp_association_connect(moat_sctp_association *a);

/* One decrypted DTLS record: an SCTP packet from the peer. Anything is
 * accepted; what SCTP rejects is dropped. */
void moat_sctp_association_receive(moat_sctp_association *a, const uint8_t *packet, size_t length);

/* Sends one message on an open channel with the channel's ordering and
 * partial reliability. ppid is MOAT_SCTP_PPID_STRING or _BINARY (length 0
 * goes out as _STRING_EMPTY/_BINARY_EMPTY with one byte, RFC 8831 §6.6), or
 * one of the _EMPTY ones (data ignored). Returns 0, or -EAGAIN when the send
 * buffer cannot take the whole message now (retry after writable or
 * sender_dry), -EMSGSIZE above the peer's max message size, -ENOENT for no
 * such channel, -EPIPE when the channel is closing, -ENOTCONN before the
 * association is up, -ESHUTDOWN after shutdown, -EINVAL for another PPID. */
int moat_sctp_association_send(moat_sctp_association *a, uint16_t stream_id, uint32_t ppid,
                               const uint8_t *data, size_t length);

/* Backpressure on what the peer sends (the owner cannot take more messages
 * now). While paused, nothing more is read from the association: messages
 * and notifications wait, already acknowledged, in its receive buffer, and
 * the window advertised to the peer closes as that fills, so the peer stops
 * sending (SCTP discards, unacknowledged, what a peer sends past a closed
 * window: the peer retransmits it later). Nothing that was acknowledged is
 * lost: resuming reads what waits, and the message callback may run from
 * inside this call (from inside a callback, once that returns). A pause
 * takes effect before the next read, so a callback may pause after each
 * message. Ignored once shutdown was requested (the end is read). */
void moat_sctp_association_pause_receive(moat_sctp_association *a, bool paused);

/* Opens a channel. With info->negotiated the channel uses info->stream_id
 * and no DCEP is sent (the peer must open the same id); otherwise an unused id
 * of our parity is picked, info->stream_id is ignored and DCEP OPEN is sent
 * (as soon as the association is up, if it is not yet). The id is written to
 * *stream_id_out. 0, -EINVAL (see moat_data_channel_info_check), -EEXIST
 * (negotiated id in use), -ENOSPC (no free stream id), -ESHUTDOWN. */
int moat_sctp_association_open_channel(moat_sctp_association *a, const moat_data_channel_info *info,
                                       uint16_t *stream_id_out);

/* Closes a channel by resetting our outgoing stream (RFC 8831 §6.7) once
 * what is queued on it has been sent; sending on it fails from now on.
 * channel_closed follows when the peer resets its side (or at once, from the
 * delivery loop, when no reset can be sent). 0 or -ENOENT. */
int moat_sctp_association_close_channel(moat_sctp_association *a, uint16_t stream_id);

/* The channel's parameters; 0 or -ENOENT. */
int moat_sctp_association_channel_info(const moat_sctp_association *a, uint16_t stream_id,
                                       moat_data_channel_info *info);

/* Graceful close: refuses new messages, waits until everything queued has
 * been acknowledged (sender dry), then sends SCTP SHUTDOWN.
 * association_state(false) follows when the shutdown completes. */
void moat_sctp_association_shutdown(moat_sctp_association *a);

/* Bounds what the association's send and receive buffers may hold together
 * (the session's data-channel memory, [limits] datachannel_session_bytes);
 * MOAT_SCTP_SESSION_BYTES_DEFAULT until called. Each direction gets half
 * (at least MOAT_SCTP_MIN_WINDOW); buffers above that shrink at once, and
 * the largest message we send becomes at most the send half. The receive
 * buffer is the whole half (it is the window advertised in INIT, and the
 * peer's initial ssthresh); the send buffer starts at
 * MOAT_SCTP_SOCKET_BUFFER_SIZE (or the half, if smaller) and grows towards
 * the bandwidth-delay product while data flows. Call before connect for the
 * INIT to advertise the right window. */
void moat_sctp_association_set_memory_limit(moat_sctp_association *a, size_t bytes);

/* Where buffer memory above the first MOAT_SCTP_SOCKET_BUFFER_SIZE of each
 * direction comes from (the gateway's [limits] datachannel_total_mib). take
 * returns false when the bytes do not fit; give returns bytes taken before.
 * Both are called on the association's thread, from any of its functions
 * (free included), and must not call into the association. */
typedef struct {
    bool (*take)(void *user, size_t bytes);
    void (*give)(void *user, size_t bytes);
    void *user;
} moat_sctp_memory_budget;

/* Makes the buffers pay for their growth: the first
 * MOAT_SCTP_SOCKET_BUFFER_SIZE of each direction (the base, or the memory
 * limit's half if smaller) is the caller's, charged by the caller; the
 * association takes every byte above it from the budget before a buffer
 * grows, gives it back when the buffer shrinks (after a second without
 * traffic, or under a lower memory limit), and gives back all it holds when
 * freed. Receive then grows with the peer's rate (doubling when the peer
 * sent half the window in one round trip) instead of starting at the
 * limit's half; INIT still advertises the half if the budget lends it until
 * the association is up. Growth stays within set_memory_limit. Call once,
 * before connect. */
void moat_sctp_association_set_memory_budget(moat_sctp_association *a,
                                             const moat_sctp_memory_budget *budget);

/* Periodic upkeep for an association with a memory budget: buffers that
 * grew give their growth back after a second without traffic even when no
 * packet comes to notice it. Cheap when there is nothing to give back; call
 * it from the owner's periodic tick (every 10-100 ms). Runs no callback other
 * than the budget's give and, with PLPMTUD on, send_packet (probes). */
void moat_sctp_association_tick(moat_sctp_association *a);

/* Current send and receive buffer sizes (SO_SNDBUF, SO_RCVBUF). */
void moat_sctp_association_buffer_sizes(const moat_sctp_association *a, size_t *send,
                                        size_t *receive);

/* Largest SCTP packet (one DTLS record), MOAT_SCTP_MTU (the default, what
 * browsers use) to MOAT_SCTP_MAX_MTU, for a path known to carry more:
 * loopback, a gateway-to-gateway link, a native peer (or let
 * moat_sctp_association_enable_plpmtud find it). A value the path cannot
 * carry loses every full packet. Before connect it also sets usrsctp's
 * fragmentation point: messages are cut into chunks that fill such packets.
 * On an established association (PLPMTUD does that) only packets grow:
 * they bundle chunks of the size set before connect. 0, -EINVAL out of
 * range, -ESHUTDOWN. */
int moat_sctp_association_set_mtu(moat_sctp_association *a, size_t mtu);

/* Turns on packetization-layer path MTU discovery (RFC 8899): once the
 * association is up, probes (HEARTBEAT + PAD packets, RFC 8899 §6.2) of up
 * to max_packet bytes (MOAT_SCTP_MTU..MOAT_SCTP_MAX_MTU) look for the
 * largest packet the path carries, and the association's MTU follows what
 * they confirm, from MOAT_SCTP_MTU up; it falls back to MOAT_SCTP_MTU when
 * the path stops carrying it. Probes go out through send_packet (also from
 * moat_sctp_association_tick), so send_packet gets packets of up to
 * max_packet bytes. Call before connect. 0, -EINVAL, -EALREADY (connect
 * started), -ESHUTDOWN. */
int moat_sctp_association_enable_plpmtud(moat_sctp_association *a, size_t max_packet);

typedef struct {
    bool enabled;
    /* "off" (not enabled), "disabled" (not started yet), "searching",
     * "search_complete", "base" (after a black hole); static storage */
    const char *state;
    uint32_t pmtu; /* current SCTP packet size limit */
    uint32_t max;  /* largest size probed */
    uint64_t probes_sent, probes_acked, probes_lost, probes_unsent;
    uint64_t searches, black_holes;
} moat_sctp_plpmtud_status;

/* PLPMTUD's state; without it, pmtu is MOAT_SCTP_MTU and the rest zero. */
void moat_sctp_association_plpmtud_status(const moat_sctp_association *a,
                                          moat_sctp_plpmtud_status *out);

/* The primary path's smoothed round-trip time (ms) and congestion window
 * (bytes). 0 or -errno (-ENOTCONN without an association). */
int moat_sctp_association_path_status(moat_sctp_association *a, uint32_t *srtt_ms, uint32_t *cwnd);

/* Bytes queued in the send buffer, sent or not, not yet acknowledged. */
size_t moat_sctp_association_buffered_amount(moat_sctp_association *a);

void moat_sctp_association_counters(const moat_sctp_association *a, moat_sctp_counters *out);

/* Frees at once, aborting the association if it is still up (an ABORT is
 * produced but not passed to send_packet: no callback runs from here). For a
 * graceful end call shutdown and free after association_state(false). Safe
 * from inside a callback of this association: the free then happens when the
 * callback returns and no further callback runs. */
void moat_sctp_association_free(moat_sctp_association *a);

/* Frees at once like moat_sctp_association_free, but the peer is told: the
 * ABORT (when the association is up) goes out through send_packet, the only
 * callback run. For an end that cannot wait for a graceful shutdown (a
 * drain cut at gateway shutdown): the peer then knows at once that messages
 * may be lost. From inside a callback of this association it is a plain
 * free (the ABORT is dropped). */
void moat_sctp_association_abort(moat_sctp_association *a);

#endif

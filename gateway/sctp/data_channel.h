/* WebRTC data channels (RFC 8831): what a channel is (label, protocol,
 * ordering, partial reliability) and the per-association table mapping SCTP
 * stream identifiers to channels. Pure bookkeeping: no usrsctp, no I/O. */
#ifndef MOAT_DATA_CHANNEL_H
#define MOAT_DATA_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SCTP payload protocol identifiers of WebRTC (RFC 8831 §8, RFC 8832 §8.1). */
enum {
    MOAT_SCTP_PPID_DCEP = 50,
    MOAT_SCTP_PPID_STRING = 51,
    MOAT_SCTP_PPID_BINARY = 53,
    MOAT_SCTP_PPID_STRING_EMPTY = 56,
    MOAT_SCTP_PPID_BINARY_EMPTY = 57,
};

/* Stream identifier 65535 is reserved (RFC 8831 §6.5 leaves 0..65534). */
#define MOAT_DATA_CHANNEL_MAX_STREAM_ID 65534

/* Size of the label and protocol buffers, terminating NUL included. */
#define MOAT_DATA_CHANNEL_NAME_SIZE 256

typedef struct {
    uint16_t stream_id;
    char label[MOAT_DATA_CHANNEL_NAME_SIZE];
    char protocol[MOAT_DATA_CHANNEL_NAME_SIZE];
    bool ordered;
    int32_t max_retransmits; /* -1: no limit */
    int32_t max_lifetime_ms; /* -1: no limit */
    bool negotiated;         /* pre-agreed stream id, no DCEP */
} moat_data_channel_info;

/* 0 when the info describes a channel we may create: label and protocol
 * NUL-terminated inside their buffers, at most one partial-reliability limit,
 * limits of -1 or more, a stream id of at most MOAT_DATA_CHANNEL_MAX_STREAM_ID
 * when negotiated; -EINVAL otherwise. */
int moat_data_channel_info_check(const moat_data_channel_info *info);

typedef enum {
    MOAT_DATA_CHANNEL_OPEN,    /* messages may be sent */
    MOAT_DATA_CHANNEL_CLOSING, /* we asked for our outgoing stream to be reset */
} moat_data_channel_state;

typedef struct {
    moat_data_channel_info info;
    moat_data_channel_state state;
    /* We opened it with DCEP and have seen neither ACK nor data back: until
     * then our messages go ordered so none overtakes the OPEN (RFC 8832 §6). */
    bool ack_pending;
    /* A DCEP message that could not be queued (send buffer full, or the
     * association not up yet); retried before anything else on the stream. */
    bool open_unsent;
    bool ack_unsent;
    /* Stream reset bookkeeping (RFC 8831 §6.7): a channel is closed once the
     * peer has reset its outgoing stream, and the stream id is free again
     * once our outgoing reset has completed too. */
    bool outgoing_reset_requested;
    bool outgoing_reset_done;
    bool incoming_reset_done;
} moat_data_channel;

typedef struct moat_data_channel_table moat_data_channel_table;

/* Aborts on allocation failure, as GLib does. */
moat_data_channel_table *moat_data_channel_table_new(void);
void moat_data_channel_table_free(moat_data_channel_table *t);

moat_data_channel *moat_data_channel_table_find(const moat_data_channel_table *t,
                                                uint16_t stream_id);

/* Adds a channel in state OPEN with the given info (the table owns it); NULL
 * when the stream id is already in use. */
moat_data_channel *moat_data_channel_table_add(moat_data_channel_table *t,
                                               const moat_data_channel_info *info);

void moat_data_channel_table_remove(moat_data_channel_table *t, uint16_t stream_id);

size_t moat_data_channel_table_count(const moat_data_channel_table *t);

/* Picks an unused stream id below limit with the given parity (even for the
 * DTLS client, odd for the server: RFC 8832 §6), preferring ids after the last
 * one picked so closed ids are not reused at once. 0 or -ENOSPC. */
int moat_data_channel_table_pick_id(moat_data_channel_table *t, bool even, uint32_t limit,
                                    uint16_t *stream_id);

/* Calls fn for every channel, in no particular order. fn must not add or
 * remove channels; collect ids and act afterwards instead. */
void moat_data_channel_table_foreach(moat_data_channel_table *t,
                                     void (*fn)(moat_data_channel *ch, void *user), void *user);

#endif

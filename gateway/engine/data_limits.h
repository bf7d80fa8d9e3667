/* Memory limits of data channels, from [limits] datachannel_session_bytes and
 * datachannel_total_mib. One moat_data_limits per gateway, shared by every
 * worker: its `used` counter is the only field written after start-up, with
 * atomic operations, and only on the data-channel path (never per RTP
 * packet).
 *
 * What a session holds for its data channels is its SCTP association's fixed
 * share (MOAT_SCTP_ASSOCIATION_MEMORY: socket buffers and reassembly,
 * reserved when the association is created) plus the messages queued for
 * it. Both count against the session's limit and the gateway's total;
 * messages other sessions relayed to it (made from what they received and
 * SCTP acknowledged) are bounded by those sources instead, each stopping
 * its reading past half its own queue room, so the queue of a session
 * several sessions relay to may hold more than its own limit.
 * The association's share is its buffers' first MOAT_SCTP_SOCKET_BUFFER_SIZE
 * each way; buffers that grow beyond it (towards the path's bandwidth-delay
 * product, sctp_window.c) charge their growth as it happens, within
 * session_bytes, through moat_data_limits_charge_spare: growth only makes a
 * transfer faster, while a refused queue charge loses a message, so growth
 * leaves a quarter of the total to queues and new associations. */
#ifndef MOAT_DATA_LIMITS_H
#define MOAT_DATA_LIMITS_H

#include "sctp/sctp_tuning.h"

#include <stdbool.h>
#include <stddef.h>

/* Send and receive socket buffers, and the reassembly of partial messages
 * (at most four maximum-size messages, sctp_message_assembly.c). */
#define MOAT_SCTP_ASSOCIATION_MEMORY                                                               \
    (2u * MOAT_SCTP_SOCKET_BUFFER_SIZE + 4u * MOAT_SCTP_MAX_RECEIVE_MESSAGE_SIZE)
/* Smallest per-session limit: the association and 1 MiB of queue. */
#define MOAT_DATA_SESSION_MIN_BYTES     (MOAT_SCTP_ASSOCIATION_MEMORY + 1024u * 1024u)
#define MOAT_DATA_SESSION_DEFAULT_BYTES (16u * 1024u * 1024u)

typedef struct moat_data_limits_s {
    size_t session_bytes; /* per session, association included */
    size_t total_bytes;   /* all sessions of the gateway */
    size_t used;          /* atomic */
    /* Not a limit, but the other data-channel setting sessions read:
     * [datachannel] max_packet when plpmtud is on, 0 when it is off. */
    size_t plpmtud_max_packet;
} moat_data_limits;

static inline void moat_data_limits_init(moat_data_limits *limits, size_t session_bytes,
                                         size_t total_bytes)
{
    limits->session_bytes = session_bytes;
    limits->total_bytes = total_bytes;
    limits->used = 0;
    limits->plpmtud_max_packet = MOAT_SCTP_PLPMTUD_DEFAULT_MAX;
}

/* Takes `bytes` from the total if they fit; any thread. */
static inline bool moat_data_limits_charge(moat_data_limits *limits, size_t bytes)
{
    size_t used = __atomic_load_n(&limits->used, __ATOMIC_RELAXED);
    do {
        if (bytes > limits->total_bytes || used > limits->total_bytes - bytes)
            return false;
    } while (!__atomic_compare_exchange_n(&limits->used, &used, used + bytes, true,
                                          __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return true;
}

/* Takes `bytes` only if a quarter of the total stays free afterwards (for
 * what cannot do without: new associations and queued messages); any
 * thread. */
static inline bool moat_data_limits_charge_spare(moat_data_limits *limits, size_t bytes)
{
    size_t ceiling = limits->total_bytes - limits->total_bytes / 4;
    size_t used = __atomic_load_n(&limits->used, __ATOMIC_RELAXED);
    do {
        if (bytes > ceiling || used > ceiling - bytes)
            return false;
    } while (!__atomic_compare_exchange_n(&limits->used, &used, used + bytes, true,
                                          __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return true;
}

/* Takes `bytes` even past the total: for messages made from data SCTP has
 * acknowledged, which must not be lost (every reader stops before the total
 * is spent, which bounds what goes past it); any thread. */
static inline void moat_data_limits_charge_force(moat_data_limits *limits, size_t bytes)
{
    __atomic_add_fetch(&limits->used, bytes, __ATOMIC_RELAXED);
}

static inline void moat_data_limits_release(moat_data_limits *limits, size_t bytes)
{
    __atomic_sub_fetch(&limits->used, bytes, __ATOMIC_RELAXED);
}

static inline size_t moat_data_limits_used(const moat_data_limits *limits)
{
    return __atomic_load_n(&limits->used, __ATOMIC_RELAXED);
}

#endif

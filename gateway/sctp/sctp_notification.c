/* usrsctp notifications (RFC 6458 §6.1) turned into association state and
 * session callbacks. Notifications come from our own stack, but their sizes
 * are still checked before any field is read, and they are copied out of the
 * receive buffer rather than cast in place (no alignment is promised). */
#include <stddef.h>
#include <string.h>

#include <usrsctp.h>

#include "sctp/sctp_association_private.h"

static void assoc_change(moat_sctp_association *a, const uint8_t *data, size_t length)
{
    struct sctp_assoc_change change;
    if (length < sizeof change)
        return;
    memcpy(&change, data, sizeof change);
    switch (change.sac_state) {
    case SCTP_COMM_UP:
        if (a->up || a->ended)
            return;
        a->up = true;
        a->out_streams = change.sac_outbound_streams;
        moat_sctp_window_up(a);
        if (a->cb.association_state != NULL)
            a->cb.association_state(a->user, true);
        if (moat_sctp_association_live(a))
            moat_sctp_channels_association_up(a);
        break;
    case SCTP_COMM_LOST:
    case SCTP_SHUTDOWN_COMP:
    case SCTP_CANT_STR_ASSOC:
        moat_sctp_association_report_down(a);
        break;
    default:
        /* SCTP_RESTART: the peer restarted under the same ports; usrsctp
         * keeps the association, and so do we. */
        break;
    }
}

static void stream_reset(moat_sctp_association *a, const uint8_t *data, size_t length)
{
    struct sctp_stream_reset_event event;
    if (length < sizeof event)
        return;
    memcpy(&event, data, sizeof event);
    size_t list_bytes = length - sizeof event;
    if (event.strreset_length >= sizeof event && event.strreset_length - sizeof event < list_bytes)
        list_bytes = event.strreset_length - sizeof event;
    size_t count = list_bytes / sizeof(uint16_t);
    uint16_t *streams = g_new(uint16_t, count > 0 ? count : 1);
    if (count > 0)
        memcpy(streams, data + sizeof event, count * sizeof(uint16_t));
    moat_sctp_channels_stream_reset(a, event.strreset_flags, streams, count);
    g_free(streams);
}

static void send_failed(moat_sctp_association *a, const uint8_t *data, size_t length)
{
    struct sctp_send_failed_event event;
    if (length < sizeof event)
        return;
    memcpy(&event, data, sizeof event);
    /* One event per chunk given up; the one holding the end of a message
     * (LAST_FRAG, which NOT_FRAG includes) counts the message once. */
    if ((event.ssfe_info.snd_flags & SCTP_DATA_LAST_FRAG) == 0)
        return;
    const moat_data_channel *ch =
        moat_data_channel_table_find(a->channels, event.ssfe_info.snd_sid);
    if (ch == NULL || (ch->info.max_retransmits < 0 && ch->info.max_lifetime_ms < 0))
        return; /* reliable data is only lost with the association */
    a->counters.messages_abandoned++;
    if (a->cb.message_abandoned != NULL)
        a->cb.message_abandoned(a->user, event.ssfe_info.snd_sid);
}

static void stream_change(moat_sctp_association *a, const uint8_t *data, size_t length)
{
    struct sctp_stream_change_event event;
    if (length < sizeof event)
        return;
    memcpy(&event, data, sizeof event);
    if (event.strchange_flags & (SCTP_STREAM_CHANGE_DENIED | SCTP_STREAM_CHANGE_FAILED))
        return;
    a->out_streams = event.strchange_outstrms;
}

static void partial_delivery(moat_sctp_association *a, const uint8_t *data, size_t length)
{
    struct sctp_pdapi_event event;
    if (length < sizeof event)
        return;
    memcpy(&event, data, sizeof event);
    if (event.pdapi_indication != SCTP_PARTIAL_DELIVERY_ABORTED)
        return;
    /* The rest of the message will not come; drop what we hold of it. */
    uint32_t stream = event.pdapi_stream & 0xffffu;
    moat_sctp_message_assembly_discard(a->assembly, stream);
    moat_sctp_message_assembly_discard(a->assembly, stream | MOAT_SCTP_ASSEMBLY_UNORDERED);
}

void moat_sctp_notification_handle(moat_sctp_association *a, const uint8_t *data, size_t length)
{
    uint16_t type;
    if (length < sizeof type)
        return;
    memcpy(&type, data, sizeof type);
    switch (type) {
    case SCTP_ASSOC_CHANGE:
        assoc_change(a, data, length);
        break;
    case SCTP_STREAM_RESET_EVENT:
        stream_reset(a, data, length);
        break;
    case SCTP_SENDER_DRY_EVENT:
        /* The delivery loop also sees the empty queue and, if a shutdown
         * waits for it, sends SHUTDOWN. */
        if (a->cb.sender_dry != NULL)
            a->cb.sender_dry(a->user);
        break;
    case SCTP_SEND_FAILED_EVENT:
        send_failed(a, data, length);
        break;
    case SCTP_STREAM_CHANGE_EVENT:
        stream_change(a, data, length);
        break;
    case SCTP_PARTIAL_DELIVERY_EVENT:
        partial_delivery(a, data, length);
        break;
    case SCTP_SHUTDOWN_EVENT:
        /* The peer is closing: no new messages, SCTP completes the rest. */
        a->shutdown_requested = true;
        a->shutdown_sent = true;
        break;
    default:
        break;
    }
}

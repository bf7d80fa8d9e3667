/* Opening and closing data channels on an association: the DCEP exchange
 * (RFC 8832), negotiated channels, and closing by SCTP stream reset
 * (RFC 8831 §6.7, RFC 6525). */
#include <errno.h>
#include <string.h>

#include <usrsctp.h>

#include "sctp/dcep.h"
#include "sctp/sctp_association_private.h"

/* Largest OPEN we build: header plus label and protocol of at most 255 bytes. */
#define OPEN_MESSAGE_CAPACITY (MOAT_DCEP_OPEN_HEADER_SIZE + 2 * MOAT_DATA_CHANNEL_NAME_SIZE)

int moat_sctp_channels_send_open(moat_sctp_association *a, moat_data_channel *ch)
{
    uint8_t message[OPEN_MESSAGE_CAPACITY];
    size_t length = moat_dcep_build_open(&ch->info, message, sizeof message);
    /* DCEP goes ordered and reliable, so it precedes the channel's data
     * (RFC 8832 §6). */
    int rc = moat_sctp_association_send_raw(a, ch->info.stream_id, MOAT_SCTP_PPID_DCEP, message,
                                            length, false, SCTP_PR_SCTP_NONE, 0);
    if (rc == 0)
        ch->open_unsent = false;
    else
        a->channel_work = true;
    return rc;
}

static int send_ack(moat_sctp_association *a, moat_data_channel *ch)
{
    uint8_t message[1];
    size_t length = moat_dcep_build_ack(message, sizeof message);
    int rc = moat_sctp_association_send_raw(a, ch->info.stream_id, MOAT_SCTP_PPID_DCEP, message,
                                            length, false, SCTP_PR_SCTP_NONE, 0);
    if (rc == 0)
        ch->ack_unsent = false;
    else
        a->channel_work = true;
    return rc;
}

/* Asks usrsctp to reset our outgoing stream; it sends the request once what
 * is queued on the stream has gone out. */
static int request_reset(moat_sctp_association *a, uint16_t stream_id)
{
    uint8_t storage[sizeof(struct sctp_reset_streams) + sizeof(uint16_t)];
    struct sctp_reset_streams *reset = (struct sctp_reset_streams *)storage;
    memset(storage, 0, sizeof storage);
    reset->srs_flags = SCTP_STREAM_RESET_OUTGOING;
    reset->srs_number_streams = 1;
    reset->srs_stream_list[0] = stream_id;
    if (usrsctp_setsockopt(a->sock, IPPROTO_SCTP, SCTP_RESET_STREAMS, reset,
                           (socklen_t)sizeof storage) == 0)
        return 0;
    return -errno;
}

/* Ends a channel locally: removes it and reports channel_closed unless the
 * peer's reset already did. */
static void finish_channel(moat_sctp_association *a, uint16_t stream_id)
{
    moat_data_channel *ch = moat_data_channel_table_find(a->channels, stream_id);
    if (ch == NULL)
        return;
    bool report = !ch->incoming_reset_done;
    moat_data_channel_table_remove(a->channels, stream_id);
    if (report && moat_sctp_association_live(a) && a->cb.channel_closed != NULL)
        a->cb.channel_closed(a->user, stream_id);
}

/* Both directions of the stream are reset: the id may be used again. */
static void maybe_forget(moat_sctp_association *a, moat_data_channel *ch)
{
    if (ch->incoming_reset_done && ch->outgoing_reset_done)
        moat_data_channel_table_remove(a->channels, ch->info.stream_id);
}

static void collect_id(moat_data_channel *ch, void *user)
{
    uint16_t id = ch->info.stream_id;
    g_array_append_val((GArray *)user, id);
}

static GArray *all_ids(moat_sctp_association *a)
{
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint16_t));
    moat_data_channel_table_foreach(a->channels, collect_id, ids);
    return ids;
}

int moat_sctp_association_open_channel(moat_sctp_association *a, const moat_data_channel_info *info,
                                       uint16_t *stream_id_out)
{
    if (a == NULL || info == NULL || stream_id_out == NULL)
        return -EINVAL;
    if (a->free_requested || a->shutdown_requested)
        return -ESHUTDOWN;
    if (moat_data_channel_info_check(info) != 0)
        return -EINVAL;
    moat_sctp_mailbox_claim(&a->mailbox);
    moat_data_channel_info chosen = *info;
    /* Before the association is up the stream count is not known yet; what
     * we asked for is the most we can get, and channels beyond what the peer
     * grants are ended when it comes up. */
    uint32_t limit = a->up ? a->out_streams : MOAT_SCTP_STREAMS;
    if (!chosen.negotiated) {
        int rc = moat_data_channel_table_pick_id(a->channels, a->is_dtls_client, limit,
                                                 &chosen.stream_id);
        if (rc != 0)
            return rc;
    } else if (chosen.stream_id >= limit) {
        return -ENOSPC;
    }
    moat_data_channel *ch = moat_data_channel_table_add(a->channels, &chosen);
    if (ch == NULL)
        return -EEXIST;
    if (!chosen.negotiated) {
        ch->ack_pending = true;
        ch->open_unsent = true;
        if (a->up)
            moat_sctp_channels_send_open(a, ch);
        else
            a->channel_work = true;
    }
    *stream_id_out = chosen.stream_id;
    moat_sctp_association_deliver(a);
    return 0;
}

int moat_sctp_association_close_channel(moat_sctp_association *a, uint16_t stream_id)
{
    if (a == NULL)
        return -EINVAL;
    if (a->free_requested)
        return -ESHUTDOWN;
    moat_sctp_mailbox_claim(&a->mailbox);
    moat_data_channel *ch = moat_data_channel_table_find(a->channels, stream_id);
    if (ch == NULL)
        return -ENOENT;
    if (ch->state == MOAT_DATA_CHANNEL_CLOSING)
        return 0;
    ch->state = MOAT_DATA_CHANNEL_CLOSING;
    if (a->up && request_reset(a, stream_id) == 0)
        ch->outgoing_reset_requested = true;
    /* Not up, or usrsctp refused the reset (association ending, peer without
     * RE-CONFIG): the channel cannot close on the wire, so the delivery loop
     * ends it locally, reporting channel_closed. */
    if (!ch->outgoing_reset_requested)
        a->channel_work = true;
    moat_sctp_association_deliver(a);
    return 0;
}

void moat_sctp_channels_handle_dcep(moat_sctp_association *a, uint16_t stream_id,
                                    const uint8_t *data, size_t length)
{
    moat_dcep_message message;
    if (moat_dcep_parse(data, length, &message) != 0) {
        a->counters.messages_dropped++;
        return;
    }
    moat_data_channel *ch = moat_data_channel_table_find(a->channels, stream_id);
    if (message.type == MOAT_DCEP_ACK) {
        if (ch != NULL)
            ch->ack_pending = false;
        else
            a->counters.messages_dropped++;
        return;
    }
    /* OPEN. RFC 8832 §6 gives the peer its own parity (even ids if it is
     * the DTLS client), but some stacks pick it by their ICE role instead
     * (aiortc); an OPEN on a free id of our parity is accepted all the same,
     * since ours are only ever picked among free ids. An id in use is a
     * duplicate and is not answered: resetting the stream would close a
     * channel of ours. */
    if (ch != NULL || a->shutdown_requested) {
        a->counters.messages_dropped++;
        return;
    }
    moat_data_channel_info info;
    if (moat_dcep_open_to_info(&message, stream_id, &info) != 0) {
        /* Well-formed but unacceptable (name too long, not UTF-8): refuse
         * the channel the way RFC 8832 §6 says, by resetting the stream. */
        a->counters.messages_dropped++;
        request_reset(a, stream_id);
        return;
    }
    ch = moat_data_channel_table_add(a->channels, &info);
    ch->ack_unsent = true;
    send_ack(a, ch);
    if (a->cb.channel_open != NULL)
        a->cb.channel_open(a->user, &ch->info);
}

void moat_sctp_channels_data_seen(moat_sctp_association *a, moat_data_channel *ch)
{
    /* Data from the peer on a channel we opened means it got our OPEN
     * (RFC 8832 §6: it acts as the ACK). */
    ch->ack_pending = false;
}

void moat_sctp_channels_association_up(moat_sctp_association *a)
{
    GArray *ids = all_ids(a);
    for (guint i = 0; i < ids->len && moat_sctp_association_live(a); i++) {
        uint16_t id = g_array_index(ids, uint16_t, i);
        if (id >= a->out_streams)
            finish_channel(a, id);
    }
    g_array_unref(ids);
    a->channel_work = true;
}

static bool needs_work(const moat_data_channel *ch)
{
    return ch->open_unsent || ch->ack_unsent ||
           (ch->state == MOAT_DATA_CHANNEL_CLOSING && !ch->outgoing_reset_requested);
}

static void collect_work(moat_data_channel *ch, void *user)
{
    if (needs_work(ch))
        collect_id(ch, user);
}

/* One channel's pending work; false when the send buffer is full. */
static bool retry_channel(moat_sctp_association *a, moat_data_channel *ch)
{
    uint16_t id = ch->info.stream_id;
    if (ch->state == MOAT_DATA_CHANNEL_CLOSING) {
        /* Without an association there is no stream to reset. */
        if (a->up && request_reset(a, id) == 0)
            ch->outgoing_reset_requested = true;
        else
            finish_channel(a, id);
        return true;
    }
    if (!a->up) {
        a->channel_work = true;
        return true;
    }
    int rc = 0;
    if (ch->open_unsent)
        rc = moat_sctp_channels_send_open(a, ch);
    else if (ch->ack_unsent)
        rc = send_ack(a, ch);
    if (rc == -EAGAIN)
        return false;
    if (rc != 0)
        finish_channel(a, id);
    return true;
}

void moat_sctp_channels_retry(moat_sctp_association *a)
{
    a->channel_work = false;
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint16_t));
    moat_data_channel_table_foreach(a->channels, collect_work, ids);
    for (guint i = 0; i < ids->len && moat_sctp_association_live(a); i++) {
        moat_data_channel *ch =
            moat_data_channel_table_find(a->channels, g_array_index(ids, uint16_t, i));
        if (ch != NULL && needs_work(ch) && !retry_channel(a, ch)) {
            a->channel_work = true;
            break;
        }
    }
    g_array_unref(ids);
}

static void peer_reset(moat_sctp_association *a, uint16_t stream_id)
{
    moat_data_channel *ch = moat_data_channel_table_find(a->channels, stream_id);
    if (ch == NULL || ch->incoming_reset_done)
        return;
    ch->incoming_reset_done = true;
    /* The peer closed the channel: close our direction too. */
    if (ch->state == MOAT_DATA_CHANNEL_OPEN) {
        ch->state = MOAT_DATA_CHANNEL_CLOSING;
        if (request_reset(a, stream_id) == 0)
            ch->outgoing_reset_requested = true;
        else
            a->channel_work = true;
    }
    maybe_forget(a, ch);
    if (a->cb.channel_closed != NULL)
        a->cb.channel_closed(a->user, stream_id);
}

static void our_reset_done(moat_sctp_association *a, uint16_t stream_id, bool refused)
{
    moat_data_channel *ch = moat_data_channel_table_find(a->channels, stream_id);
    if (ch == NULL || !ch->outgoing_reset_requested)
        return;
    if (refused) {
        /* The peer will not reset: the channel cannot close cleanly, so it
         * ends here. */
        finish_channel(a, stream_id);
        return;
    }
    ch->outgoing_reset_done = true;
    maybe_forget(a, ch);
}

void moat_sctp_channels_stream_reset(moat_sctp_association *a, uint16_t flags,
                                     const uint16_t *streams, size_t count)
{
    bool refused = (flags & (SCTP_STREAM_RESET_DENIED | SCTP_STREAM_RESET_FAILED)) != 0;
    bool incoming = (flags & SCTP_STREAM_RESET_INCOMING_SSN) != 0;
    bool outgoing = (flags & SCTP_STREAM_RESET_OUTGOING_SSN) != 0;
    /* A refused incoming reset would answer a request of ours to reset the
     * peer's streams, which we never make. */
    if (incoming && refused)
        return;
    GArray *ids;
    if (count > 0) {
        ids = g_array_sized_new(FALSE, FALSE, sizeof(uint16_t), (guint)count);
        g_array_append_vals(ids, streams, (guint)count);
    } else {
        ids = all_ids(a); /* an empty list means every stream */
    }
    for (guint i = 0; i < ids->len && moat_sctp_association_live(a); i++) {
        uint16_t id = g_array_index(ids, uint16_t, i);
        if (incoming)
            peer_reset(a, id);
        else if (outgoing)
            our_reset_done(a, id, refused);
    }
    g_array_unref(ids);
}

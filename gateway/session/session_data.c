/* The session's data channels: SCTP packets ride in DTLS application data;
 * messages go to the plugin's on_data and come back through send_data.
 * Messages the association cannot take yet wait in a bounded queue, so a
 * plugin never loses one to a momentarily full send buffer. What SCTP
 * acknowledged is never dropped for lack of room: the messages a session's
 * received messages made (echoes, relayed copies) count against it, and
 * past its high-water mark it stops reading from SCTP, so its receive
 * window closes and the peer slows down (moat_session_data_flow_check). */
#include "session/session_internal.h"

#include "engine/data_limits.h"

#include "sctp/sctp_association.h"
#include "sctp/sctp_stack.h"

#include <errno.h>
#include <glib.h>
#include <jansson.h>
#include <string.h>

#define SCTP_PORT 5000

/* A peer whose association took nothing from the queue for this long no
 * longer holds back the sessions relaying to it: their copies are dropped
 * (datachannel_stalled) until it takes again. Half a send buffer (512 KiB)
 * in 10 s is about 400 kbit/s. */
#define MOAT_DATA_STALL_US 10000000u

typedef struct {
    moat_data_credit credit; /* on the session whose message this was made from */
    uint16_t stream_id;
    uint32_t ppid;
    size_t length;
    uint8_t data[];
} queued_message;

/* The gateway's limits; NULL (default per-session limit, no total) when the
 * worker was given none. */
static moat_data_limits *limits_of(const moat_session *session)
{
    return moat_worker_data_limits(session->worker);
}

static size_t session_bytes(const moat_session *session)
{
    const moat_data_limits *limits = limits_of(session);
    return limits ? limits->session_bytes : MOAT_DATA_SESSION_DEFAULT_BYTES;
}

/* Beyond this much queued data a sender is too far ahead of its peer, or
 * the session would hold more than its limit (the association's share
 * includes what its buffers grew by). */
static size_t queue_limit(const moat_session *session)
{
    size_t total = session_bytes(session);
    size_t held = session->data_reserved > MOAT_SCTP_ASSOCIATION_MEMORY
                      ? session->data_reserved
                      : MOAT_SCTP_ASSOCIATION_MEMORY;
    return total > held ? total - held : 0;
}

/* The association's buffers may grow within the session's limit less the
 * reassembly and 1 MiB of queue (MOAT_DATA_SESSION_MIN_BYTES). */
static size_t window_limit(const moat_session *session)
{
    size_t fixed = MOAT_DATA_SESSION_MIN_BYTES - 2u * MOAT_SCTP_SOCKET_BUFFER_SIZE;
    size_t total = session_bytes(session);
    return total > fixed ? total - fixed : 2u * MOAT_SCTP_SOCKET_BUFFER_SIZE;
}

/* Path MTU discovery up to [datachannel] max_packet, and at most what the
 * worker's datagram buffers carry: a DTLS record of the packet, its 13-byte
 * header included, must fit the receive buffer (MOAT_DATAGRAM_CAPACITY less
 * 64). The record's cipher overhead is for the probes to find out. */
static void enable_plpmtud(moat_session *session)
{
    const moat_data_limits *limits = limits_of(session);
    size_t max = limits ? limits->plpmtud_max_packet : MOAT_SCTP_PLPMTUD_DEFAULT_MAX;
    size_t carried = MOAT_DATAGRAM_CAPACITY - 64 - 13;
    if (max > carried)
        max = carried;
    if (max <= MOAT_SCTP_MTU)
        return;
    int rc = moat_sctp_association_enable_plpmtud(session->sctp, max);
    if (rc != 0)
        moat_session_log(session, MOAT_LOG_WARN, "datachannel",
                         "session %s: path MTU discovery not enabled: %s", session->label,
                         g_strerror(-rc));
}

static bool charge(moat_session *session, size_t bytes)
{
    moat_data_limits *limits = limits_of(session);
    if (limits && !moat_data_limits_charge(limits, bytes)) {
        moat_session_drop(session, MOAT_DROP_DATA_LIMIT);
        return false;
    }
    return true;
}

static void release(moat_session *session, size_t bytes)
{
    moat_data_limits *limits = limits_of(session);
    if (limits && bytes)
        moat_data_limits_release(limits, bytes);
}

static size_t message_cost(size_t length)
{
    return sizeof(queued_message) + length;
}

/* What a session's received messages may make the gateway queue before it
 * stops reading: half its queue's room, so that what is read before the
 * pause takes effect (one message, of at most
 * MOAT_SCTP_MAX_RECEIVE_MESSAGE_SIZE, echoed) still fits. */
static size_t receive_high_water(const moat_session *session)
{
    size_t high = queue_limit(session) / 2;
    size_t floor = message_cost(MOAT_SCTP_MAX_RECEIVE_MESSAGE_SIZE);
    return high > floor ? high : floor;
}

/* The gateway's data-channel total is nearly spent (less than two of the
 * largest messages left): every session stops reading until it is not. */
static bool total_tight(const moat_session *session)
{
    const moat_data_limits *limits = limits_of(session);
    if (!limits)
        return false;
    size_t headroom = 2 * message_cost(MOAT_SCTP_MAX_RECEIVE_MESSAGE_SIZE);
    size_t used = moat_data_limits_used(limits);
    return used >= limits->total_bytes || limits->total_bytes - used < headroom;
}

/* The association's buffer growth, charged to the gateway's total while a
 * quarter of it stays free for queues (never counted as a drop: a refused
 * growth only keeps the window smaller). */
static bool window_take(void *user, size_t bytes)
{
    moat_session *session = user;
    moat_data_limits *limits = limits_of(session);
    if (limits && !moat_data_limits_charge_spare(limits, bytes))
        return false;
    session->data_reserved += bytes;
    return true;
}

static void window_give(void *user, size_t bytes)
{
    moat_session *session = user;
    release(session, bytes);
    session->data_reserved -= bytes;
}

static void sctp_send_packet(void *user, const uint8_t *packet, size_t length)
{
    moat_session *session = user;
    if (session->dtls && session->dtls_connected)
        moat_dtls_transport_send(session->dtls, packet, length);
}

static void sctp_channel_open(void *user, const moat_data_channel_info *info)
{
    moat_session *session = user;
    moat_log_debug("datachannel", "session %s: channel %u \"%s\" open", session->label,
                   info->stream_id, info->label);
    if (session->plugin && session->plugin->on_channel)
        session->plugin->on_channel(session->plugin_state, info->stream_id, info->label, true);
}

static void sctp_message(void *user, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                         size_t length)
{
    moat_session *session = user;
    moat_counters *counters = moat_worker_counters_mut(session->worker);
    moat_counter_add(&counters->data_messages_received, 1);
    moat_counter_add(&counters->data_bytes_received, length);
    if (session->plugin && session->plugin->on_data) {
        /* What the plugin sends now is made from this acknowledged message. */
        moat_plugin_session *outer = moat_data_flow_enter(session->handle);
        session->plugin->on_data(session->plugin_state, stream_id, ppid, data, length);
        moat_data_flow_leave(outer);
    }
    moat_session_data_flow_check(session);
}

static void sctp_channel_closed(void *user, uint16_t stream_id)
{
    moat_session *session = user;
    moat_log_debug("datachannel", "session %s: channel %u closed", session->label, stream_id);
    if (session->plugin && session->plugin->on_channel)
        session->plugin->on_channel(session->plugin_state, stream_id, "", false);
}

static void sctp_association_state(void *user, bool up)
{
    moat_session *session = user;
    session->sctp_up = up;
    moat_session_log(session, MOAT_LOG_INFO, "datachannel", "session %s: SCTP association %s",
                     session->label, up ? "up" : "down");
}

static void sctp_sender_dry(void *user) {}

/* Hands queued messages to the association until it is full. true once the
 * queue is empty. */
static bool flush_queue(moat_session *session)
{
    queued_message *message;
    while (session->sctp && (message = g_queue_peek_head(&session->data_queue))) {
        int status = moat_sctp_association_send(session->sctp, message->stream_id, message->ppid,
                                                message->data, message->length);
        if (status == -EAGAIN)
            return false;
        g_queue_pop_head(&session->data_queue);
        session->data_progress_us = moat_worker_now_us(session->worker);
        session->data_stalled = false;
        session->data_queued_bytes -= message_cost(message->length);
        release(session, message_cost(message->length));
        moat_data_credit_give(&message->credit);
        if (status == 0) {
            moat_counters *counters = moat_worker_counters_mut(session->worker);
            moat_counter_add(&counters->data_messages_sent, 1);
            moat_counter_add(&counters->data_bytes_sent, message->length);
        } else {
            /* Its channel closed while it waited, or the peer cannot take
             * it: not sent, and said so. */
            moat_session_drop(session, MOAT_DROP_DATA_REFUSED);
        }
        g_free(message);
    }
    return true;
}

/* SHUTDOWN refuses every later send, so it waits until the queue is empty;
 * the association itself then waits for the peer's acknowledgements. */
static void shutdown_when_flushed(moat_session *session)
{
    if (session->sctp && flush_queue(session))
        moat_sctp_association_shutdown(session->sctp);
}

static void sctp_writable(void *user)
{
    moat_session *session = user;
    /* The peer acknowledged half the send buffer: it reads again, so what
     * is relayed to it queues (with backpressure) instead of being shed. */
    session->data_stalled = false;
    session->data_progress_us = moat_worker_now_us(session->worker);
    if (session->draining)
        shutdown_when_flushed(session);
    else
        flush_queue(session);
}

static void sctp_message_abandoned(void *user, uint16_t stream_id)
{
    moat_session *session = user;
    moat_counter_add(&moat_worker_counters_mut(session->worker)->data_messages_abandoned, 1);
}

static const moat_sctp_callbacks sctp_callbacks = {
    .send_packet = sctp_send_packet,
    .channel_open = sctp_channel_open,
    .message = sctp_message,
    .channel_closed = sctp_channel_closed,
    .association_state = sctp_association_state,
    .sender_dry = sctp_sender_dry,
    .writable = sctp_writable,
    .message_abandoned = sctp_message_abandoned,
};

void moat_session_data_start(moat_session *session)
{
    if (session->sctp)
        return;
    char error[256];
    uint16_t remote_port =
        session->negotiation.remote_sctp_port ? session->negotiation.remote_sctp_port : SCTP_PORT;
    g_queue_init(&session->data_queue);
    /* The association's buffers count against the gateway's total: when it
     * is spent, data channels are refused (media goes on). */
    if (!charge(session, MOAT_SCTP_ASSOCIATION_MEMORY)) {
        moat_session_log(session, MOAT_LOG_WARN, "datachannel",
                         "session %s: data channels refused, [limits] datachannel_total_mib "
                         "reached",
                         session->label);
        return;
    }
    session->data_reserved = MOAT_SCTP_ASSOCIATION_MEMORY;
    session->sctp =
        moat_sctp_association_new(session->dtls_role == MOAT_DTLS_ROLE_CLIENT, SCTP_PORT,
                                  remote_port, session->negotiation.remote_max_message_size,
                                  &sctp_callbacks, session, error, sizeof error);
    if (!session->sctp) {
        moat_session_log(session, MOAT_LOG_WARN, "datachannel", "session %s: %s", session->label,
                         error);
        return;
    }
    /* The first MOAT_SCTP_SOCKET_BUFFER_SIZE of each buffer is in what was
     * charged above; growth towards the bandwidth-delay product is charged
     * as it happens, within the session's limit and while the gateway's
     * total allows. Before connect, so INIT advertises the window. */
    moat_sctp_association_set_memory_limit(session->sctp, window_limit(session));
    enable_plpmtud(session);
    moat_sctp_memory_budget budget = {window_take, window_give, session};
    moat_sctp_association_set_memory_budget(session->sctp, &budget);
    moat_sctp_association_connect(session->sctp);
}

void moat_session_data_receive(moat_session *session, const uint8_t *data, size_t length)
{
    if (session->sctp)
        moat_sctp_association_receive(session->sctp, data, length);
}

/* Room in the queue for a message costing `cost`, charged to the
 * gateway's total. A plugin's own message gets what the session's limit
 * leaves and the total allows. One made from an acknowledged message is
 * taken whatever the queue holds, from the session itself (its echo) or
 * from another (a relay): it holds credit on its source, which stops
 * reading past its own high-water mark, so each source adds at most that
 * and one delivery's worth to the queue (several sources on one target:
 * their number times it). It is charged to the total even past it: every
 * session stops reading before the total is spent (total_tight), so what
 * goes past is at most what one delivery makes per worker. */
static bool admit(moat_session *session, moat_plugin_session *source, size_t cost)
{
    moat_data_limits *limits = limits_of(session);
    if (!source) {
        if (session->data_queued_bytes + cost > queue_limit(session))
            return false;
        return !limits || moat_data_limits_charge(limits, cost);
    }
    if (limits)
        moat_data_limits_charge_force(limits, cost);
    return true;
}

int moat_session_data_send(moat_session *session, uint16_t stream_id, uint32_t ppid,
                           const uint8_t *data, size_t length)
{
    return moat_session_data_send_from(session, moat_data_flow_source(), stream_id, ppid, data,
                                       length);
}

int moat_session_data_send_from(moat_session *session, moat_plugin_session *source,
                                uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                                size_t length)
{
    if (!session->sctp || session->draining)
        return -1;
    if (g_queue_is_empty(&session->data_queue)) {
        int status = moat_sctp_association_send(session->sctp, stream_id, ppid, data, length);
        if (status == 0) {
            session->data_stalled = false; /* it takes data again */
            moat_counters *counters = moat_worker_counters_mut(session->worker);
            moat_counter_add(&counters->data_messages_sent, 1);
            moat_counter_add(&counters->data_bytes_sent, length);
            return 0;
        }
        if (status != -EAGAIN)
            return -1;
    }
    size_t cost = message_cost(length);
    if (session->data_stalled && source && source != session->handle) {
        moat_session_drop(session, MOAT_DROP_DATA_STALLED);
        return -1;
    }
    if (!admit(session, source, cost)) {
        moat_session_drop(session, MOAT_DROP_DATA_LIMIT);
        return -1;
    }
    if (g_queue_is_empty(&session->data_queue))
        session->data_progress_us = moat_worker_now_us(session->worker);
    queued_message *message = g_malloc(sizeof *message + length);
    moat_data_credit_take(&message->credit, source, cost, false);
    message->stream_id = stream_id;
    message->ppid = ppid;
    message->length = length;
    if (length)
        memcpy(message->data, data, length);
    g_queue_push_tail(&session->data_queue, message);
    session->data_queued_bytes += cost;
    return 0;
}

bool moat_session_data_begin_drain(moat_session *session)
{
    if (!session->sctp || !session->sctp_up)
        return false;
    /* Queued messages first (the rest follow as the association takes them,
     * see sctp_writable), then SCTP SHUTDOWN, which completes only once the
     * peer acknowledged everything: nothing sent is lost. */
    shutdown_when_flushed(session);
    return true;
}

bool moat_session_data_drained(const moat_session *session)
{
    return !session->sctp || !session->sctp_up;
}

size_t moat_session_data_pending_bytes(const moat_session *session)
{
    if (!session->sctp || !session->sctp_up)
        return 0;
    return session->data_queued_bytes + moat_sctp_association_buffered_amount(session->sctp);
}

/* The peer took nothing for MOAT_DATA_STALL_US: what other sessions relayed
 * to it is dropped and counted, so that one stalled subscriber cannot stop
 * its publisher (and every other subscriber) for good. Its own echoes stay
 * (it applies backpressure to itself). */
static void shed_when_stalled(moat_session *session)
{
    if (session->data_stalled || g_queue_is_empty(&session->data_queue) ||
        moat_worker_now_us(session->worker) - session->data_progress_us < MOAT_DATA_STALL_US)
        return;
    session->data_stalled = true;
    unsigned dropped = 0;
    GList *link = session->data_queue.head;
    while (link) {
        GList *next = link->next;
        queued_message *message = link->data;
        if (message->credit.source && message->credit.source != session->handle) {
            g_queue_delete_link(&session->data_queue, link);
            session->data_queued_bytes -= message_cost(message->length);
            release(session, message_cost(message->length));
            moat_data_credit_give(&message->credit);
            moat_session_drop(session, MOAT_DROP_DATA_STALLED);
            g_free(message);
            dropped++;
        }
        link = next;
    }
    if (dropped)
        moat_session_log(session, MOAT_LOG_WARN, "datachannel",
                         "session %s: peer took no data for %u s, %u relayed messages dropped",
                         session->label, MOAT_DATA_STALL_US / 1000000u, dropped);
}

void moat_session_data_tick(moat_session *session)
{
    if (!session->sctp)
        return;
    moat_sctp_association_tick(session->sctp);
    shed_when_stalled(session);
    /* Credit given back wakes a paused session (a task on its worker); the
     * gateway's total no longer being nearly spent is noticed here. */
    if (session->data_receive_paused)
        moat_session_data_flow_check(session);
}

/* Pauses reading past the high-water mark (checked after every message
 * delivered, before the next is read) and resumes once the credit is under
 * half of it: arming first, then looking, so a wake-up is never lost. */
void moat_session_data_flow_check(moat_session *session)
{
    if (!session->sctp)
        return;
    size_t high = receive_high_water(session);
    bool tight = total_tight(session);
    if (!session->data_receive_paused) {
        if (!tight && !moat_data_flow_over(session->handle, high))
            return;
        session->data_receive_paused = true;
        moat_counter_add(&moat_worker_counters_mut(session->worker)->data_receive_pauses, 1);
        moat_sctp_association_pause_receive(session->sctp, true);
    }
    if (!moat_data_flow_arm(session->handle, high / 2) || tight)
        return;
    moat_data_flow_disarm(session->handle);
    session->data_receive_paused = false;
    /* Reads what waits: this may nest (a message delivered from here checks
     * again, and may pause again). */
    moat_sctp_association_pause_receive(session->sctp, false);
}

/* PLPMTUD: the SCTP packet size in use and how it was found. */
static json_t *describe_pmtu(const moat_session *session)
{
    moat_sctp_plpmtud_status st;
    moat_sctp_association_plpmtud_status(session->sctp, &st);
    return json_pack("{s:b, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "discovery", st.enabled,
                     "state", st.state, "packet_size", (json_int_t)st.pmtu, "max_packet",
                     (json_int_t)st.max, "probes_sent", (json_int_t)st.probes_sent, "probes_acked",
                     (json_int_t)st.probes_acked, "probes_lost", (json_int_t)st.probes_lost,
                     "searches", (json_int_t)st.searches, "black_holes",
                     (json_int_t)st.black_holes);
}

json_t *moat_session_data_describe(const moat_session *session)
{
    if (!session->sctp)
        return json_null();
    size_t send, receive;
    moat_sctp_association_buffer_sizes(session->sctp, &send, &receive);
    json_t *out = json_pack("{s:b, s:I, s:I, s:I, s:I, s:b, s:I}", "up", session->sctp_up,
                            "send_buffer", (json_int_t)send, "receive_buffer", (json_int_t)receive,
                            "reserved_bytes", (json_int_t)session->data_reserved, "queued_bytes",
                            (json_int_t)session->data_queued_bytes, "receive_paused",
                            session->data_receive_paused, "flow_bytes",
                            (json_int_t)atomic_load(&session->handle->flow_bytes));
    uint32_t srtt_ms = 0, cwnd = 0;
    if (moat_sctp_association_path_status(session->sctp, &srtt_ms, &cwnd) == 0) {
        json_object_set_new(out, "srtt_ms", json_integer(srtt_ms));
        json_object_set_new(out, "cwnd", json_integer(cwnd));
    }
    json_object_set_new(
        out, "buffered",
        json_integer((json_int_t)moat_sctp_association_buffered_amount(session->sctp)));
    json_object_set_new(out, "pmtu", describe_pmtu(session));
    return out;
}

/* What path MTU discovery did on the session's association, into the
 * worker's counters (/metrics). */
static void count_pmtu(moat_session *session)
{
    moat_sctp_plpmtud_status st;
    moat_sctp_association_plpmtud_status(session->sctp, &st);
    if (!st.enabled)
        return;
    moat_counters *c = moat_worker_counters_mut(session->worker);
    moat_counter_add(&c->data_pmtu_probes_sent, st.probes_sent);
    moat_counter_add(&c->data_pmtu_probes_acked, st.probes_acked);
    moat_counter_add(&c->data_pmtu_raised, st.pmtu > MOAT_SCTP_MTU ? 1 : 0);
    moat_counter_add(&c->data_pmtu_black_holes, st.black_holes);
}

/* Messages still queued when the session ends are freed; those relayed
 * from another session (acknowledged to their publisher) are counted as
 * dropped. The session's own echoes and its plugin's messages are not:
 * only this session's peer, now gone, would have had them. */
void moat_session_data_abort(moat_session *session)
{
    if (session->sctp) {
        count_pmtu(session);
        moat_sctp_association_abort(session->sctp);
        session->sctp = NULL;
    }
    moat_session_data_clear(session);
}

void moat_session_data_clear(moat_session *session)
{
    if (session->sctp)
        count_pmtu(session);
    /* Freeing gives back what the buffers grew by (window_give). */
    moat_sctp_association_free(session->sctp);
    session->sctp = NULL;
    session->sctp_up = false;
    session->data_receive_paused = false;
    session->data_stalled = false;
    queued_message *message;
    while ((message = g_queue_pop_head(&session->data_queue))) {
        if (message->credit.source && message->credit.source != session->handle)
            moat_session_drop(session, MOAT_DROP_DATA_ENDED);
        moat_data_credit_give(&message->credit);
        g_free(message);
    }
    release(session, session->data_queued_bytes + session->data_reserved);
    session->data_queued_bytes = 0;
    session->data_reserved = 0;
}

/* relay_data: a data channel message for a session on any worker. On the
 * target's own worker it is sent at once; otherwise a copy rides a worker
 * task to the owner (data channel rates make a malloc and a wake-up per
 * message affordable, unlike RTP, which takes the relay's rings). Each
 * target lets at most MOAT_PLUGIN_RELAY_DATA_QUEUE of a plugin's own
 * messages wait. A copy of a message some session received holds credit on
 * that session until it is sent (session_data_flow.c): the source stops
 * reading from SCTP past its own high-water marks (bytes, and messages in
 * transit), and the copy is posted and queued at the target whatever they
 * hold (several sources on one target: each adds at most its marks), so
 * acknowledged data is not dropped for a slow target or a busy worker; what
 * is dropped anyway (a target gone or refusing, stalled past 10 s) is
 * counted by reason. */
#include "session/session_handle.h"
#include "session/session_internal.h"

#include <glib.h>
#include <string.h>

typedef struct {
    moat_data_credit credit;     /* on the source, while in transit */
    moat_plugin_session *target; /* one reference */
    moat_relay *relay;           /* counters */
    uint16_t stream_id;
    uint32_t ppid;
    size_t length;
    uint8_t data[];
} relayed_message;

static void message_done(relayed_message *m)
{
    atomic_fetch_sub_explicit(&m->target->data_queued, 1, memory_order_relaxed);
    moat_data_credit_give(&m->credit);
    moat_session_handle_unref(m->target);
    g_free(m);
}

/* The target's worker. */
static void deliver(moat_worker *worker, void *data)
{
    relayed_message *m = data;
    moat_session *session = moat_session_handle_get(m->target);
    if (!session || session->ending)
        moat_relay_count_data_drop(m->relay, MOAT_RELAY_DATA_TARGET_GONE);
    else if (moat_session_data_send_from(session, m->credit.source, m->stream_id, m->ppid, m->data,
                                         m->length) != 0)
        moat_relay_count_data_drop(m->relay, MOAT_RELAY_DATA_NOT_SENT);
    else
        moat_relay_count_data_delivered(m->relay);
    message_done(m);
}

/* The target's worker stopped first. */
static void undelivered(void *data)
{
    relayed_message *m = data;
    moat_relay_count_data_drop(m->relay, MOAT_RELAY_DATA_TARGET_GONE);
    message_done(m);
}

int moat_session_relay_data(moat_plugin_session *handle, uint16_t stream_id, uint32_t ppid,
                            const uint8_t *data, size_t length)
{
    moat_session *session = moat_session_handle_get(handle);
    if (!session)
        return -1;
    moat_worker *worker = handle->worker;
    if (moat_worker_is_current(worker))
        return moat_session_data_send(session, stream_id, ppid, data, length);
    moat_relay *relay = moat_worker_relay(worker);
    if (length && !data)
        return -1;
    if (length > MOAT_PLUGIN_RELAY_DATA_MAX) {
        moat_relay_count_data_drop(relay, MOAT_RELAY_DATA_TOO_BIG);
        return -1;
    }
    /* A copy of an acknowledged message is bounded by its source's
     * in-transit mark, not refused here (several sources may feed one
     * target); only a plugin's own messages meet the target's bound. */
    moat_plugin_session *source = moat_data_flow_source();
    if (atomic_fetch_add_explicit(&handle->data_queued, 1, memory_order_relaxed) >=
            MOAT_PLUGIN_RELAY_DATA_QUEUE &&
        !source) {
        atomic_fetch_sub_explicit(&handle->data_queued, 1, memory_order_relaxed);
        moat_relay_count_data_drop(relay, MOAT_RELAY_DATA_QUEUE_FULL);
        return -1;
    }
    relayed_message *m = g_malloc(sizeof *m + length);
    moat_data_credit_take(&m->credit, source, sizeof *m + length, true);
    moat_session_handle_ref(handle);
    m->target = handle;
    m->relay = relay;
    m->stream_id = stream_id;
    m->ppid = ppid;
    m->length = length;
    if (length)
        memcpy(m->data, data, length);
    moat_worker_post(worker, deliver, m, undelivered);
    return 0;
}

/* Session handles and the routing core's relay glue: plugin calls that may
 * come from any thread (relay_rtp, handle references), the callbacks the
 * relay makes on the destination worker, and the thread's sending session
 * (whose relay source the copies count against). */
#include "session/session_handle.h"
#include "session/session_internal.h"

#include "rtp/rtp_packet.h"

#include <glib.h>
#include <string.h>

moat_plugin_session *moat_session_handle_new(moat_session *session, moat_worker *worker)
{
    moat_plugin_session *handle = g_new0(moat_plugin_session, 1);
    atomic_init(&handle->refs, 1);
    atomic_init(&handle->data_queued, 0);
    atomic_init(&handle->flow_bytes, 0);
    atomic_init(&handle->flow_in_transit, 0);
    atomic_init(&handle->flow_low_bytes, 0);
    atomic_init(&handle->flow_paused, false);
    atomic_init(&handle->ending, false);
    atomic_init(&handle->session, session);
    handle->worker = worker;
    handle->relay_source = worker ? moat_relay_source_new(moat_worker_relay(worker)) : NULL;
    return handle;
}

void moat_session_handle_ref(moat_plugin_session *handle)
{
    if (handle)
        atomic_fetch_add_explicit(&handle->refs, 1, memory_order_relaxed);
}

void moat_session_handle_unref(moat_plugin_session *handle)
{
    if (handle && atomic_fetch_sub_explicit(&handle->refs, 1, memory_order_acq_rel) == 1) {
        moat_relay_source_unref(handle->relay_source); /* buffers in flight keep theirs */
        g_free(handle);
    }
}

/* The session whose RTP this thread hands to its plugin. Per thread (each
 * worker delivers its own sessions' packets), set only for the length of
 * one on_media/on_rtp call. */
static _Thread_local moat_plugin_session *current_rtp_source;

moat_plugin_session *moat_session_rtp_source_enter(moat_plugin_session *source)
{
    moat_plugin_session *previous = current_rtp_source;
    current_rtp_source = source;
    return previous;
}

void moat_session_rtp_source_leave(moat_plugin_session *previous)
{
    current_rtp_source = previous;
}

/* What a relayed copy made now counts against: the sending session's
 * source, NULL outside a delivery (the control path, a call's plain leg). */
static moat_relay_source *sending_source(void)
{
    return current_rtp_source ? current_rtp_source->relay_source : NULL;
}

/* On the destination worker: the plugin rewrites its own copy (on_relay) or
 * the packet is sent as it is; either way SRTP protects it per session. */
static bool relay_deliver(void *user, void *target, const uint8_t *data, size_t length)
{
    moat_session *session = moat_session_handle_get(target);
    if (!session || !session->started || session->ending || !session->plugin)
        return false; /* not started: its plugin's attach may still run */
    /* What is larger than the relay MTU never reaches a copy of that size
     * (moat_session_relay_rtp* drop and count it before this point). */
    if (length > MOAT_RELAY_MTU)
        return false;
    if (!session->plugin->on_relay)
        return moat_session_gateway_calls.send_rtp(target, data, length) == 0;
    uint8_t copy[MOAT_RELAY_MTU + 64];
    memcpy(copy, data, length);
    moat_rtp_header header;
    if (moat_rtp_parse(copy, length, &header) != MOAT_RTP_OK)
        return false;
    moat_rtp_packet packet = {
        .data = copy,
        .length = length,
        .capacity = sizeof copy,
        .media_index = -1,
        .ssrc = header.ssrc,
        .sequence = header.sequence,
        .extended_sequence = header.sequence,
        .timestamp = header.timestamp,
        .marker = header.marker,
        .payload_type = header.payload_type,
        .payload_offset = header.payload_offset,
        .payload_length = header.payload_length,
        .arrival_us = moat_worker_now_us(session->worker),
    };
    session->plugin->on_relay(session->plugin_state, &packet);
    return true;
}

static void relay_release(void *user, void *target)
{
    moat_session_handle_unref(target);
}

static void relay_wake(void *user, unsigned consumer)
{
    moat_worker **workers = user;
    moat_worker_wake(workers[consumer]);
}

const moat_relay_ops moat_session_relay_ops = {
    .deliver = relay_deliver,
    .release_target = relay_release,
    .wake = relay_wake,
};

int moat_session_relay_rtp(moat_plugin_session *handle, const uint8_t *packet, size_t length)
{
    if (!handle || !moat_session_handle_get(handle))
        return -1;
    moat_worker *worker = handle->worker;
    if (length > MOAT_RELAY_MTU) {
        moat_relay_count_drop(moat_worker_relay(worker), MOAT_RELAY_DROP_TOO_BIG);
        return -1;
    }
    if (moat_worker_is_current(worker))
        return relay_deliver(NULL, handle, packet, length) ? 0 : -1;
    moat_relay *relay = moat_worker_relay(worker);
    if (!relay)
        return -1;
    unsigned consumer = moat_worker_index(worker);
    moat_session_handle_ref(handle);
    void *target = handle;
    return moat_relay_send(relay, sending_source(), &target, &consumer, 1, packet, length) == 1
               ? 0
               : -1;
}

/* Fan-out: targets on the calling worker get the packet at once; the others
 * are grouped by worker into one target set each, so the packet takes one
 * shared copy and one ring slot per other worker (relay.h). */
#define RELAY_STACK 128

static size_t send_grouped(moat_relay *relay, void **targets, unsigned *consumers, size_t n,
                           const uint8_t *packet, size_t length)
{
    moat_relay_set *stack_sets[16];
    unsigned workers = moat_relay_workers(relay);
    moat_relay_set **sets = workers <= 16 ? stack_sets : g_new(moat_relay_set *, workers);
    size_t n_sets = 0;
    void *stack_group[RELAY_STACK];
    void **group = n <= RELAY_STACK ? stack_group : g_new(void *, n);
    for (unsigned w = 0; w < workers; w++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (consumers[i] == w)
                group[k++] = targets[i];
        }
        if (k)
            sets[n_sets++] = moat_relay_set_new(relay, w, group, k);
    }
    size_t queued = moat_relay_send_sets(relay, sending_source(), sets, n_sets, packet, length);
    for (size_t i = 0; i < n_sets; i++)
        moat_relay_set_unref(sets[i]);
    if (group != stack_group)
        g_free(group);
    if (sets != stack_sets)
        g_free(sets);
    return queued;
}

size_t moat_session_relay_rtp_many(moat_plugin_session *const *handles, size_t n,
                                   const uint8_t *packet, size_t length)
{
    void *stack_targets[RELAY_STACK];
    unsigned stack_consumers[RELAY_STACK];
    size_t queued = 0, pending = 0;
    moat_relay *relay = NULL;
    if (length > MOAT_RELAY_MTU) {
        for (size_t i = 0; i < n; i++)
            if (handles[i] && moat_session_handle_get(handles[i]))
                moat_relay_count_drop(moat_worker_relay(handles[i]->worker),
                                      MOAT_RELAY_DROP_TOO_BIG);
        return 0;
    }
    void **targets = n <= RELAY_STACK ? stack_targets : g_new(void *, n);
    unsigned *consumers = n <= RELAY_STACK ? stack_consumers : g_new(unsigned, n);
    for (size_t i = 0; i < n; i++) {
        moat_plugin_session *handle = handles[i];
        if (!handle || !moat_session_handle_get(handle))
            continue;
        if (moat_worker_is_current(handle->worker)) {
            queued += relay_deliver(NULL, handle, packet, length) ? 1 : 0;
            continue;
        }
        if (!moat_worker_relay(handle->worker))
            continue;
        relay = moat_worker_relay(handle->worker);
        moat_session_handle_ref(handle);
        targets[pending] = handle;
        consumers[pending++] = moat_worker_index(handle->worker);
    }
    if (pending)
        queued += send_grouped(relay, targets, consumers, pending, packet, length);
    if (targets != stack_targets)
        g_free(targets);
    if (consumers != stack_consumers)
        g_free(consumers);
    return queued;
}

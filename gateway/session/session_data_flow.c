/* Backpressure on data channels, the mechanism: credit that the messages a
 * session's received messages made (its echoes, copies relayed to other
 * sessions on any worker) hold on that session while they wait to be sent,
 * the thread's current source, and the wake-up that tells a paused source
 * its credit drained. The policy (high and low water, the gateway's total)
 * is session_data.c's moat_session_data_flow_check.
 *
 * Ordering: a paused source arms (flow_paused = true) and only then reads
 * its credit; a giver lowers the credit and only then takes flow_paused.
 * Both sequentially consistent, so a give either finds the flag set and wakes
 * the source, or happened before the source's read and is seen by it: no
 * wake-up is lost. A wake-up that finds the source already reading does
 * nothing. */
#include "session/session_internal.h"

#include <glib.h>

/* The session whose message this thread is delivering to its plugin. Per
 * thread (each worker delivers its own sessions' messages), set only for
 * the length of one on_data call. */
static _Thread_local moat_plugin_session *current_source;

moat_plugin_session *moat_data_flow_source(void)
{
    return current_source;
}

moat_plugin_session *moat_data_flow_enter(moat_plugin_session *source)
{
    moat_plugin_session *previous = current_source;
    current_source = source;
    return previous;
}

void moat_data_flow_leave(moat_plugin_session *previous)
{
    current_source = previous;
}

void moat_data_credit_take(moat_data_credit *credit, moat_plugin_session *source, size_t bytes,
                           bool in_transit)
{
    credit->source = source;
    credit->bytes = bytes;
    credit->in_transit = in_transit;
    if (!source)
        return;
    moat_session_handle_ref(source);
    atomic_fetch_add(&source->flow_bytes, bytes);
    if (in_transit)
        atomic_fetch_add(&source->flow_in_transit, 1);
}

static bool under_low_water(moat_plugin_session *source, size_t bytes, unsigned in_transit)
{
    return bytes <= atomic_load(&source->flow_low_bytes) &&
           in_transit <= MOAT_DATA_FLOW_IN_TRANSIT_LOW;
}

/* The source's worker: it may read again (the check decides). */
static void wake_task(moat_worker *worker, void *data)
{
    (void)worker;
    moat_plugin_session *source = data;
    moat_session *session = moat_session_handle_get(source);
    if (session)
        moat_session_data_flow_check(session);
    moat_session_handle_unref(source);
}

static void wake_release(void *data)
{
    moat_session_handle_unref(data);
}

void moat_data_credit_give(moat_data_credit *credit)
{
    moat_plugin_session *source = credit->source;
    if (!source)
        return;
    credit->source = NULL;
    size_t bytes = atomic_fetch_sub(&source->flow_bytes, credit->bytes) - credit->bytes;
    unsigned in_transit = atomic_load(&source->flow_in_transit);
    if (credit->in_transit)
        in_transit = atomic_fetch_sub(&source->flow_in_transit, 1) - 1;
    if (under_low_water(source, bytes, in_transit) &&
        atomic_exchange(&source->flow_paused, false)) {
        /* The task takes this credit's reference. */
        moat_worker_post(source->worker, wake_task, source, wake_release);
        return;
    }
    moat_session_handle_unref(source);
}

bool moat_data_flow_over(moat_plugin_session *source, size_t high_bytes)
{
    return atomic_load(&source->flow_bytes) >= high_bytes ||
           atomic_load(&source->flow_in_transit) >= MOAT_DATA_FLOW_IN_TRANSIT_HIGH;
}

bool moat_data_flow_arm(moat_plugin_session *source, size_t low_bytes)
{
    atomic_store(&source->flow_low_bytes, low_bytes);
    atomic_store(&source->flow_paused, true);
    return under_low_water(source, atomic_load(&source->flow_bytes),
                           atomic_load(&source->flow_in_transit));
}

void moat_data_flow_disarm(moat_plugin_session *source)
{
    atomic_store(&source->flow_paused, false);
}

/* Fan-out lists of the plugin API (plugin.h fanout_*): session handles as
 * the routing core's fan-out targets (engine/relay_fanout.h), delivered on
 * each target's worker by the relay callbacks of session_relay.c. */
#include "session/session_handle.h"
#include "session/session_internal.h"

#include "engine/relay_fanout.h"

#include <glib.h>

struct moat_plugin_fanout {
    moat_relay_fanout *core;
    moat_relay *relay;
};

moat_plugin_fanout *moat_session_fanout_new(moat_plugin_session *producer)
{
    if (!producer || !moat_session_handle_get(producer))
        return NULL;
    moat_relay *relay = moat_worker_relay(producer->worker);
    /* The producer's source: its fan-out and its other relayed sends share
     * one cap (relay.h). */
    moat_relay_fanout *core = moat_relay_fanout_new(relay, producer->relay_source);
    if (!core)
        return NULL;
    moat_plugin_fanout *fanout = g_new0(moat_plugin_fanout, 1);
    fanout->core = core;
    fanout->relay = relay;
    return fanout;
}

void moat_session_fanout_set(moat_plugin_fanout *fanout, moat_plugin_session *const *sessions,
                             size_t n)
{
    if (!fanout)
        return;
    /* Membership changes only: an allocation is fine here. */
    void **targets = g_new(void *, n + 1);
    unsigned *consumers = g_new(unsigned, n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        moat_plugin_session *handle = sessions[i];
        if (!handle || !moat_session_handle_get(handle))
            continue;
        moat_session_handle_ref(handle);
        targets[k] = handle;
        consumers[k++] = moat_worker_index(handle->worker);
    }
    moat_relay_fanout_publish(fanout->core, targets, consumers, k);
    g_free(targets);
    g_free(consumers);
}

size_t moat_session_fanout_send(moat_plugin_fanout *fanout, const uint8_t *packet, size_t length)
{
    if (!fanout)
        return 0;
    if (length > MOAT_RELAY_MTU) {
        size_t n = moat_relay_fanout_size(fanout->core);
        for (size_t i = 0; i < n; i++)
            moat_relay_count_drop(fanout->relay, MOAT_RELAY_DROP_TOO_BIG);
        return 0;
    }
    return moat_relay_fanout_send(fanout->core, packet, length);
}

void moat_session_fanout_free(moat_plugin_fanout *fanout)
{
    if (!fanout)
        return;
    moat_relay_fanout_free(fanout->core);
    g_free(fanout);
}

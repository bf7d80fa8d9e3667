/* The handle a plugin holds for a session (plugin API v2): reference
 * counted, so it can outlive the session. The session holds one reference
 * from moat_session_new to moat_session_free, which clears `session` on the
 * owning worker; every call on a handle whose session is gone fails cleanly.
 * `session` is only dereferenced on the owning worker (or the control thread
 * before the session starts); other threads only test it for NULL. */
#ifndef MOAT_SESSION_HANDLE_H
#define MOAT_SESSION_HANDLE_H

#include "engine/relay.h"
#include "engine/worker.h"
#include "plugin.h"

#include <stdatomic.h>

struct moat_plugin_session {
    atomic_int refs;
    _Atomic(moat_session *) session;
    moat_worker *worker;     /* the owner, fixed for the handle's life */
    atomic_uint data_queued; /* relay_data messages posted, not yet delivered */
    /* The gateway was asked to end the session (its DELETE, on the control
     * thread, before the answer; moat_session_end on its worker): set
     * once, never cleared (moat_gateway_calls.session_ending). */
    atomic_bool ending;
    /* Backpressure (session_data_flow.c), this session as a source: bytes
     * of the messages its received messages made the gateway queue (echoes,
     * relayed copies, on any worker) and of those posted to another worker
     * how many are not delivered yet; low water, set by the owner, under
     * which whoever gives credit back wakes the owner when flow_paused. */
    atomic_size_t flow_bytes;
    atomic_uint flow_in_transit;
    atomic_size_t flow_low_bytes;
    atomic_bool flow_paused;
    /* This session as a sender of relayed RTP (relay.h sources): the relay
     * buffers its packets hold in flight, capped. NULL when its worker has
     * no relay. Fixed for the handle's life. */
    moat_relay_source *relay_source;
};

moat_plugin_session *moat_session_handle_new(moat_session *session, moat_worker *worker);
void moat_session_handle_ref(moat_plugin_session *handle);
void moat_session_handle_unref(moat_plugin_session *handle);
/* The session on its owner's thread, NULL once it ended. */
static inline moat_session *moat_session_handle_get(moat_plugin_session *handle)
{
    return handle ? atomic_load_explicit(&handle->session, memory_order_acquire) : NULL;
}

/* The relay callbacks the gateway creates its relay with (user: the
 * gateway's moat_worker * array). */
extern const moat_relay_ops moat_session_relay_ops;

#endif

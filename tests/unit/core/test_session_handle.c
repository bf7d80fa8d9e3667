/* Session handles of the routing core (session_handle.h) on a live keyed
 * session: relay_rtp from a thread that is not the owner goes through the
 * relay and reaches the peer once the owner drains; a handle kept past the
 * session's end fails every call cleanly; a relay queued for a session that
 * ends before delivery is dropped and counted, and its reference returned;
 * a fan-out (relay_rtp_many, fanout_send) takes one ring slot per worker,
 * not one per target. */
#include "session_harness.h"

#include "engine/relay.h"
#include "session/session_handle.h"
#include "session/session_internal.h"

#include <glib.h>
#include <string.h>

static size_t rtp(uint8_t *packet, uint16_t sequence)
{
    memset(packet, 0xab, 212);
    packet[0] = 0x80;
    packet[1] = 96;
    packet[2] = (uint8_t)(sequence >> 8);
    packet[3] = (uint8_t)sequence;
    memset(packet + 4, 0, 4);
    packet[8] = (uint8_t)(HARNESS_LOCAL_SSRC >> 24);
    packet[9] = (uint8_t)(HARNESS_LOCAL_SSRC >> 16);
    packet[10] = (uint8_t)(HARNESS_LOCAL_SSRC >> 8);
    packet[11] = (uint8_t)HARNESS_LOCAL_SSRC;
    return 212;
}

static moat_relay *start(session_harness *h)
{
    session_harness_init(h);
    session_harness_create(h, NULL);
    moat_worker_set_now_us(h->worker, 1000000);
    session_harness_key(h);
    moat_relay_ops ops = moat_session_relay_ops;
    ops.user = &h->worker;
    moat_relay *relay = moat_relay_new(1, 8, 8, &ops);
    moat_worker_set_relay(h->worker, relay);
    return relay;
}

static void test_relay_reaches_peer(void)
{
    session_harness h;
    moat_relay *relay = start(&h);
    moat_plugin_session *handle = moat_session_plugin_handle(h.session);
    const moat_gateway_calls *calls = &moat_session_gateway_calls;
    uint8_t packet[256];
    /* The test thread is not the worker's: the packet waits in the ring. */
    g_assert_cmpint(calls->relay_rtp(handle, packet, rtp(packet, 1)), ==, 0);
    moat_plugin_session *many[] = {handle, handle, handle};
    g_assert_cmpuint(calls->relay_rtp_many(many, 3, packet, rtp(packet, 2)), ==, 3);
    session_harness_flush(&h);
    size_t datagrams = 0;
    session_harness_drain_peer(&h, &datagrams);
    g_assert_cmpuint(datagrams, ==, 0);
    g_assert_cmpuint(moat_relay_drain(relay, 0), ==, 4);
    session_harness_flush(&h);
    session_harness_drain_peer(&h, &datagrams);
    g_assert_cmpuint(datagrams, ==, 4);
    g_assert_cmpuint(moat_relay_delivered(relay), ==, 4);
    g_assert_cmpint(atomic_load(&handle->refs), ==, 1); /* the session's own */
    session_harness_clear(&h);
    moat_relay_free(relay);
}

/* 20 targets on a worker whose ring has 8 slots: one slot carries them
 * all (one per target dropped 12 of them as ring_full before). */
static void test_fan_out_one_slot(void)
{
    session_harness h;
    moat_relay *relay = start(&h);
    moat_plugin_session *handle = moat_session_plugin_handle(h.session);
    const moat_gateway_calls *calls = &moat_session_gateway_calls;
    moat_plugin_session *many[20];
    for (size_t i = 0; i < 20; i++)
        many[i] = handle;
    uint8_t packet[256];
    g_assert_cmpuint(calls->relay_rtp_many(many, 20, packet, rtp(packet, 1)), ==, 20);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL), ==, 0);
    /* A fan-out list: 20 targets again, one more slot per packet. */
    moat_plugin_fanout *fanout = calls->fanout_new(handle);
    g_assert_nonnull(fanout);
    calls->fanout_set(fanout, many, 20);
    for (uint16_t i = 0; i < 7; i++)
        g_assert_cmpuint(calls->fanout_send(fanout, packet, rtp(packet, (uint16_t)(2 + i))), ==,
                         20);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL), ==, 0);
    /* Ring and pool (8 each) full: dropped and counted per target. */
    g_assert_cmpuint(calls->fanout_send(fanout, packet, rtp(packet, 9)), ==, 0);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL) +
                         moat_relay_dropped(relay, MOAT_RELAY_DROP_POOL_EMPTY),
                     ==, 20);
    g_assert_cmpuint(moat_relay_drain(relay, 0), ==, 8 * 20);
    g_assert_cmpuint(moat_relay_delivered(relay), ==, 8 * 20);
    calls->fanout_free(fanout);
    g_assert_cmpint(atomic_load(&handle->refs), ==, 1); /* the session's own */
    session_harness_clear(&h);
    moat_relay_free(relay);
}

static void test_ended_session_fails_cleanly(void)
{
    session_harness h;
    moat_relay *relay = start(&h);
    moat_plugin_session *handle = moat_session_plugin_handle(h.session);
    const moat_gateway_calls *calls = &moat_session_gateway_calls;
    calls->handle_ref(handle);
    uint8_t packet[256];
    size_t n = rtp(packet, 1);
    /* Queued, then the session ends before its worker drains. */
    g_assert_cmpint(calls->relay_rtp(handle, packet, n), ==, 0);
    g_assert_cmpint(atomic_load(&handle->refs), ==, 3);
    session_harness_clear(&h); /* frees the worker and the session */
    g_assert_null(moat_session_handle_get(handle));
    g_assert_cmpint(calls->send_rtp(handle, packet, n), ==, -1);
    g_assert_cmpint(calls->send_rtcp(handle, packet, n), ==, -1);
    g_assert_cmpint(calls->send_data(handle, 1, 51, packet, 1), ==, -1);
    g_assert_cmpint(calls->relay_rtp(handle, packet, n), ==, -1);
    g_assert_cmpuint(calls->relay_rtp_many(&handle, 1, packet, n), ==, 0);
    g_assert_cmpint(calls->request_keyframe(handle, 0), ==, -1);
    calls->set_timer(handle, 1000);
    calls->push_event(handle, "{}");
    calls->close_session(handle);
    /* The owner's drain finds the session gone: counted, reference back. */
    g_assert_cmpuint(moat_relay_drain(relay, 0), ==, 1);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_TARGET_GONE), ==, 1);
    g_assert_cmpint(atomic_load(&handle->refs), ==, 1);
    calls->handle_unref(handle); /* the last: freed (ASan checks) */
    moat_relay_free(relay);
}

/* relay_data from a thread that is not the owner: too big is refused and
 * counted; at most MOAT_PLUGIN_RELAY_DATA_QUEUE messages wait for the
 * owner, more drop as queue_full; the waiting ones come back as target_gone
 * with their references when the worker goes; an ended session's handle
 * fails. */
static void test_relay_data_bounds(void)
{
    session_harness h;
    moat_relay *relay = start(&h);
    moat_plugin_session *handle = moat_session_plugin_handle(h.session);
    const moat_gateway_calls *calls = &moat_session_gateway_calls;
    static uint8_t big[MOAT_PLUGIN_RELAY_DATA_MAX + 1];
    g_assert_cmpint(calls->relay_data(handle, 1, 51, big, sizeof big), ==, -1);
    g_assert_cmpuint(moat_relay_data_dropped(relay, MOAT_RELAY_DATA_TOO_BIG), ==, 1);
    g_assert_cmpint(calls->relay_data(handle, 1, 51, NULL, 3), ==, -1);
    /* The harness's worker never runs its tasks: messages wait, up to the
     * bound, then drop. */
    for (int i = 0; i < MOAT_PLUGIN_RELAY_DATA_QUEUE; i++)
        g_assert_cmpint(calls->relay_data(handle, 1, 51, big, 10), ==, 0);
    g_assert_cmpint(calls->relay_data(handle, 1, 51, big, 10), ==, -1);
    g_assert_cmpuint(moat_relay_data_dropped(relay, MOAT_RELAY_DATA_QUEUE_FULL), ==, 1);
    g_assert_cmpint(atomic_load(&handle->data_queued), ==, MOAT_PLUGIN_RELAY_DATA_QUEUE);
    calls->handle_ref(handle);
    session_harness_clear(&h);
    g_assert_cmpint(calls->relay_data(handle, 1, 51, big, 10), ==, -1);
    g_assert_cmpint(atomic_load(&handle->data_queued), ==, 0);
    g_assert_cmpuint(moat_relay_data_dropped(relay, MOAT_RELAY_DATA_TARGET_GONE), ==,
                     MOAT_PLUGIN_RELAY_DATA_QUEUE);
    g_assert_cmpint(atomic_load(&handle->refs), ==, 1);
    calls->handle_unref(handle);
    g_assert_cmpstr(moat_relay_data_drop_reason_name(MOAT_RELAY_DATA_QUEUE_FULL), ==, "queue_full");
    moat_relay_free(relay);
}

/* relay_data made from a message some session received (on_data: the
 * message is acknowledged) is never refused for the target's bound: three
 * sources with their 128 each in transit to one target exceed its 256, and
 * dropping the rest would lose what SCTP acknowledged. The source's own
 * in-transit mark is what bounds it (it stops reading), and every copy holds
 * credit on it until it is delivered or dropped. */
static void test_relay_data_from_a_source_is_queued(void)
{
    session_harness h;
    moat_relay *relay = start(&h);
    moat_plugin_session *handle = moat_session_plugin_handle(h.session);
    const moat_gateway_calls *calls = &moat_session_gateway_calls;
    static uint8_t message[10];
    const int n = 3 * MOAT_DATA_FLOW_IN_TRANSIT_HIGH;
    g_assert_cmpint(n, >, MOAT_PLUGIN_RELAY_DATA_QUEUE);
    moat_plugin_session *outer = moat_data_flow_enter(handle);
    for (int i = 0; i < n; i++)
        g_assert_cmpint(calls->relay_data(handle, 1, 51, message, sizeof message), ==, 0);
    moat_data_flow_leave(outer);
    g_assert_cmpuint(moat_relay_data_dropped(relay, MOAT_RELAY_DATA_QUEUE_FULL), ==, 0);
    g_assert_cmpint(atomic_load(&handle->data_queued), ==, n);
    g_assert_cmpint(atomic_load(&handle->flow_in_transit), ==, n);
    g_assert_true(moat_data_flow_over(handle, SIZE_MAX));
    /* Without a source (a plugin's own message) the bound still holds. */
    g_assert_cmpint(calls->relay_data(handle, 1, 51, message, sizeof message), ==, -1);
    g_assert_cmpuint(moat_relay_data_dropped(relay, MOAT_RELAY_DATA_QUEUE_FULL), ==, 1);
    calls->handle_ref(handle);
    session_harness_clear(&h);
    g_assert_cmpint(atomic_load(&handle->data_queued), ==, 0);
    g_assert_cmpint(atomic_load(&handle->flow_in_transit), ==, 0);
    g_assert_cmpuint(moat_relay_data_dropped(relay, MOAT_RELAY_DATA_TARGET_GONE), ==, (guint64)n);
    g_assert_cmpint(atomic_load(&handle->refs), ==, 1);
    calls->handle_unref(handle);
    moat_relay_free(relay);
}

static void test_keyframe_request_coalesced(void)
{
    session_harness h;
    moat_relay *relay = start(&h);
    moat_plugin_session *handle = moat_session_plugin_handle(h.session);
    const moat_gateway_calls *calls = &moat_session_gateway_calls;
    /* No media seen yet on the m-line: nobody to ask. */
    h.session->demux.primary[0] = 0;
    g_assert_cmpint(calls->request_keyframe(handle, 0), ==, -1);
    h.session->demux.primary[0] = HARNESS_REMOTE_SSRC;
    g_assert_cmpint(calls->request_keyframe(handle, 0), ==, 0);
    g_assert_cmpint(calls->request_keyframe(handle, 0), ==, 1);
    g_assert_cmpint(calls->request_keyframe(handle, 7), ==, -1);
    moat_worker_set_now_us(h.worker, 1000000 + 400000);
    g_assert_cmpint(calls->request_keyframe(handle, 0), ==, 0);
    session_harness_flush(&h);
    size_t datagrams = 0;
    session_harness_drain_peer(&h, &datagrams);
    g_assert_cmpuint(datagrams, ==, 2);
    /* The first tick sends the session's reports: out of the way. */
    moat_session_media_tick(h.session, 1000000 + 400000);
    session_harness_flush(&h);
    session_harness_drain_peer(&h, &datagrams);
    /* A coalesced request is not lost: it leaves when the interval is over. */
    g_assert_cmpint(calls->request_keyframe(handle, 0), ==, 1);
    g_assert_cmpint(calls->request_keyframe(handle, 0), ==, 1);
    moat_session_media_tick(h.session, 1000000 + 500000);
    session_harness_flush(&h);
    session_harness_drain_peer(&h, &datagrams);
    g_assert_cmpuint(datagrams, ==, 0);
    moat_session_media_tick(h.session, 1000000 + 750000);
    session_harness_flush(&h);
    session_harness_drain_peer(&h, &datagrams);
    g_assert_cmpuint(datagrams, ==, 1);
    moat_session_media_tick(h.session, 1000000 + 1200000);
    session_harness_flush(&h);
    session_harness_drain_peer(&h, &datagrams);
    g_assert_cmpuint(datagrams, ==, 0);
    session_harness_clear(&h);
    moat_relay_free(relay);
}

/* Per-layer requests: only a media stream of that m-line; each SSRC has
 * its own interval (a request for l does not hold back one for m), and a
 * coalesced one leaves when its interval is over. */
static void test_layer_keyframe_request(void)
{
    session_harness h;
    moat_relay *relay = start(&h);
    moat_plugin_session *handle = moat_session_plugin_handle(h.session);
    const moat_gateway_calls *calls = &moat_session_gateway_calls;
    const uint32_t layer = HARNESS_REMOTE_SSRC + 1, rtx = HARNESS_REMOTE_SSRC + 2;
    moat_rtp_demux *demux = &h.session->demux;
    demux->primary[0] = HARNESS_REMOTE_SSRC;
    demux->streams[demux->n_streams++] = (moat_demux_stream){.ssrc = layer, .media_index = 0};
    demux->streams[demux->n_streams++] =
        (moat_demux_stream){.ssrc = rtx, .media_index = 0, .rtx = true};
    g_assert_cmpint(calls->request_layer_keyframe(handle, 0, 0x5eed), ==, -1);
    g_assert_cmpint(calls->request_layer_keyframe(handle, 0, rtx), ==, -1);
    g_assert_cmpint(calls->request_layer_keyframe(handle, 7, layer), ==, -1);
    g_assert_cmpint(calls->request_layer_keyframe(handle, 0, layer), ==, 0);
    g_assert_cmpint(calls->request_layer_keyframe(handle, 0, HARNESS_REMOTE_SSRC), ==, 0);
    g_assert_cmpint(calls->request_layer_keyframe(handle, 0, layer), ==, 1);
    session_harness_flush(&h);
    size_t datagrams = 0;
    session_harness_drain_peer(&h, &datagrams);
    g_assert_cmpuint(datagrams, ==, 2);
    moat_session_media_tick(h.session, 1000000 + 100000); /* reports */
    session_harness_flush(&h);
    session_harness_drain_peer(&h, &datagrams);
    moat_session_media_tick(h.session, 1000000 + 200000);
    session_harness_flush(&h);
    session_harness_drain_peer(&h, &datagrams);
    g_assert_cmpuint(datagrams, ==, 0);
    moat_session_media_tick(h.session, 1000000 + 350000);
    session_harness_flush(&h);
    session_harness_drain_peer(&h, &datagrams);
    g_assert_cmpuint(datagrams, ==, 1); /* the coalesced one for `layer` */
    moat_session_media_tick(h.session, 1000000 + 800000);
    session_harness_flush(&h);
    session_harness_drain_peer(&h, &datagrams);
    g_assert_cmpuint(datagrams, ==, 0);
    session_harness_clear(&h);
    moat_relay_free(relay);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session-handle/relay-reaches-peer", test_relay_reaches_peer);
    g_test_add_func("/session-handle/fan-out-one-slot", test_fan_out_one_slot);
    g_test_add_func("/session-handle/ended-session-fails-cleanly",
                    test_ended_session_fails_cleanly);
    g_test_add_func("/session-handle/keyframe-request-coalesced", test_keyframe_request_coalesced);
    g_test_add_func("/session-handle/relay-data-bounds", test_relay_data_bounds);
    g_test_add_func("/session-handle/relay-data-from-a-source-is-queued",
                    test_relay_data_from_a_source_is_queued);
    g_test_add_func("/session-handle/layer-keyframe-request", test_layer_keyframe_request);
    return g_test_run();
}

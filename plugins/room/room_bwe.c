/* The subscriber's sender-side estimate and probes (room_bwe.h). */
#include "room_bwe.h"
#include "room.h"

#include <jansson.h>

uint64_t room_bwe_probe_target(const room_layer_state *s, const uint32_t *bitrates, size_t n,
                               uint64_t estimate_bps)
{
    if (s->pinned || s->current < 0 || s->target != s->current || (size_t)s->current >= n)
        return 0;
    uint32_t now = bitrates[s->current];
    uint32_t next = 0; /* the lowest sending layer above the current one */
    for (size_t l = 0; l < n; l++) {
        if (bitrates[l] > now && (next == 0 || bitrates[l] < next))
            next = bitrates[l];
    }
    if (next == 0 || (double)estimate_bps >= next * ROOM_LAYER_UP_FACTOR)
        return 0;
    return (uint64_t)(next * ROOM_BWE_PROBE_FACTOR) + ROOM_BWE_PROBE_EXTRA;
}

static void note_probe_results(room_bwe *b, const moat_plugin_estimate *e, uint64_t now_us)
{
    if (e->probes_failed > b->failed) {
        b->backoff_us = b->backoff_us ? b->backoff_us * 2 : ROOM_BWE_BACKOFF_US;
        if (b->backoff_us > ROOM_BWE_MAX_BACKOFF_US)
            b->backoff_us = ROOM_BWE_MAX_BACKOFF_US;
        b->next_probe_us = now_us + b->backoff_us;
    }
    if (e->probes_confirmed > b->confirmed) {
        b->backoff_us = ROOM_BWE_BACKOFF_US;
        b->next_probe_us = now_us + b->backoff_us;
    }
    b->failed = e->probes_failed;
    b->confirmed = e->probes_confirmed;
}

static void publish(room_bwe *b, const moat_plugin_estimate *e)
{
    atomic_store_explicit(&b->estimate_bps, e->bitrate_bps, memory_order_relaxed);
    atomic_store_explicit(&b->acked_bps, e->acked_bps, memory_order_relaxed);
    atomic_store_explicit(&b->probes_confirmed, e->probes_confirmed, memory_order_relaxed);
    atomic_store_explicit(&b->probes_failed, e->probes_failed, memory_order_relaxed);
    atomic_store_explicit(&b->padding_packets, e->padding_packets, memory_order_relaxed);
    atomic_store_explicit(&b->feedbacks, e->feedbacks, memory_order_relaxed);
    atomic_store_explicit(&b->loss_permille, (uint64_t)(e->loss * 1000), memory_order_relaxed);
    atomic_store_explicit(&b->usage, (uint64_t)e->usage, memory_order_relaxed);
    atomic_store_explicit(&b->on, true, memory_order_relaxed);
}

void room_bwe_update(room_peer *s, const uint32_t *bitrates, size_t n, uint64_t now_us)
{
    room_bwe *b = &s->bwe;
    moat_plugin_estimate e;
    if (!room_config.send_side_bwe || !s->gateway->send_estimate ||
        s->gateway->send_estimate(s->handle, &e) != 0) {
        b->active = false;
        return;
    }
    b->active = true;
    publish(b, &e);
    /* The estimate decides; REMB (which a transport-cc peer does not send)
     * and receiver reports are not consulted (room_simulcast_feedback). */
    s->layer.estimate_bps = e.bitrate_bps;
    s->layer.remb_us = 0;
    note_probe_results(b, &e, now_us);
    if (e.probing || now_us < b->next_probe_us || !s->gateway->probe)
        return;
    uint64_t target = room_bwe_probe_target(&s->layer, bitrates, n, e.bitrate_bps);
    if (target == 0)
        return;
    if (b->backoff_us == 0)
        b->backoff_us = ROOM_BWE_BACKOFF_US;
    if (s->gateway->probe(s->handle, target, ROOM_BWE_PROBE_US) == 0) {
        atomic_fetch_add_explicit(&b->probes, 1, memory_order_relaxed);
        b->next_probe_us = now_us + ROOM_BWE_PROBE_US;
    }
}

void room_bwe_note(room_peer *s, uint64_t now_us)
{
    moat_plugin_estimate e;
    if (!room_config.send_side_bwe || !s->gateway->send_estimate ||
        s->gateway->send_estimate(s->handle, &e) != 0)
        return;
    atomic_store_explicit(&s->estimate_bps, e.bitrate_bps, memory_order_relaxed);
    atomic_store_explicit(&s->estimate_us, now_us, memory_order_relaxed);
}

json_t *room_bwe_describe(const room_peer *s)
{
    const room_bwe *b = &s->bwe;
    if (!atomic_load_explicit(&b->on, memory_order_relaxed))
        return NULL;
    static const char *const usage[] = {"normal", "overusing", "underusing"};
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "estimate_bps",
                          (json_int_t)atomic_load(&b->estimate_bps), "acked_bps",
                          (json_int_t)atomic_load(&b->acked_bps), "feedbacks",
                          (json_int_t)atomic_load(&b->feedbacks), "probes",
                          (json_int_t)atomic_load(&b->probes), "probes_confirmed",
                          (json_int_t)atomic_load(&b->probes_confirmed), "probes_failed",
                          (json_int_t)atomic_load(&b->probes_failed), "padding_packets",
                          (json_int_t)atomic_load(&b->padding_packets));
    json_object_set_new(o, "loss", json_real((double)atomic_load(&b->loss_permille) / 1000.0));
    json_object_set_new(o, "usage", json_string(usage[atomic_load(&b->usage) % 3]));
    return o;
}

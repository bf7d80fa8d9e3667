/* A simulcast publisher's layers and their SSRCs without a network
 * (room_simulcast.c): how often a layer may move to a new SSRC, and that a
 * retransmission never moves one. */
#include <glib.h>
#include <string.h>

#include "room_simulcast.h"

enum { SSRC_H = 0x100, SSRC_M = 0x200, SSRC_L = 0x300 };

typedef struct {
    room r;
    room_peer pub;
} world;

static uint64_t fake_now_us(void)
{
    return 0;
}

static const moat_gateway_calls fake_gateway = {.now_us = fake_now_us};

/* One room with one publisher of three layers h, m, l. */
static void world_init(world *w)
{
    memset(w, 0, sizeof *w);
    g_strlcpy(w->r.name, "sim", sizeof w->r.name);
    pthread_mutex_init(&w->r.lock, NULL);
    w->r.publishers[0] = &w->pub;
    w->r.n_publishers = 1;
    room_peer *p = &w->pub;
    p->publisher = true;
    p->room = &w->r;
    p->gateway = &fake_gateway;
    g_strlcpy(p->id, "p1", sizeof p->id);
    const char *rids[3] = {"h", "m", "l"};
    const uint32_t ssrcs[3] = {SSRC_H, SSRC_M, SSRC_L};
    for (int l = 0; l < 3; l++) {
        g_strlcpy(p->layers[l].rid, rids[l], sizeof p->layers[l].rid);
        atomic_store(&p->layers[l].ssrc, ssrcs[l]);
    }
    p->n_layers = 3;
}

/* A packet of layer `rid` on `ssrc` at `now`: the layer it counts for. */
static int layer_of(room_peer *p, const char *rid, uint32_t ssrc, uint64_t now)
{
    uint8_t d[100] = {0x80, 96};
    moat_rtp_packet pk = {.data = d,
                          .length = sizeof d,
                          .capacity = sizeof d,
                          .ssrc = ssrc,
                          .payload_type = 96,
                          .payload_offset = 12,
                          .payload_length = 88,
                          .arrival_us = now};
    g_strlcpy(pk.rid, rid, sizeof pk.rid);
    return room_simulcast_layer_of(p, &pk);
}

/* A retransmission never moves a layer: one unwrapped to an SSRC the layer
 * left (or to any other) is dropped, neither claimed nor counted; one of
 * the layer's current SSRC counts for it. */
static void test_repair_never_moves_a_layer(void)
{
    world w;
    world_init(&w);
    room_peer *p = &w.pub;
    uint64_t t = 5000000;
    g_assert_cmpint(layer_of(p, "l", SSRC_L, t), ==, 2);
    g_assert_cmpint(layer_of(p, "l", SSRC_L + 1, t + 10), ==, 2); /* a restart */
    uint8_t d[100] = {0x80, 96};
    moat_rtp_packet pk = {.data = d,
                          .length = sizeof d,
                          .capacity = sizeof d,
                          .ssrc = SSRC_L,
                          .payload_type = 96,
                          .payload_offset = 12,
                          .payload_length = 88,
                          .repaired = true,
                          .arrival_us = t + 2000000};
    g_strlcpy(pk.rid, "l", sizeof pk.rid);
    g_assert_cmpint(room_simulcast_layer_of(p, &pk), ==, -1);
    g_assert_cmpuint(atomic_load(&p->layers[2].ssrc), ==, SSRC_L + 1);
    g_assert_cmpuint(atomic_load(&p->ssrc_changes_refused), ==, 0);
    pk.ssrc = SSRC_L + 1;
    g_assert_cmpint(room_simulcast_layer_of(p, &pk), ==, 2);
    /* The layer's media goes on. */
    g_assert_cmpint(layer_of(p, "l", SSRC_L + 1, t + 2000001), ==, 2);
    pthread_mutex_destroy(&w.r.lock);
}

/* A layer moves to a new SSRC at most once a second: a publisher that sent
 * a new SSRC on every packet of a layer re-claimed the layer each time, and
 * every subscriber worker kept a retransmission copy (~52 KB) per SSRC.
 * The change is taken (an encoder restart), further ones within the second
 * are dropped and counted (ssrc_changes_refused, not ssrc_refused: no other
 * publisher sends them), the layer's SSRC stays; each layer has its own
 * second, and past it the next change is taken. */
static void test_ssrc_change_once_a_second(void)
{
    world w;
    world_init(&w);
    room_peer *p = &w.pub;
    uint64_t t = 5000000;
    g_assert_cmpint(layer_of(p, "l", SSRC_L, t), ==, 2);
    g_assert_cmpint(layer_of(p, "l", SSRC_L + 1, t), ==, 2); /* a restart */
    g_assert_cmpuint(atomic_load(&p->layers[2].ssrc), ==, SSRC_L + 1);
    for (uint32_t i = 2; i < 500; i++)
        g_assert_cmpint(layer_of(p, "l", SSRC_L + i, t + i * 1000), ==, -1);
    g_assert_cmpuint(atomic_load(&p->layers[2].ssrc), ==, SSRC_L + 1);
    g_assert_cmpuint(atomic_load(&p->ssrc_changes_refused), ==, 498);
    g_assert_cmpuint(atomic_load(&p->ssrc_refused), ==, 0);
    /* Its current SSRC still flows; the old one is a change back. */
    g_assert_cmpint(layer_of(p, "l", SSRC_L + 1, t + 600000), ==, 2);
    g_assert_cmpint(layer_of(p, "l", SSRC_L, t + 600000), ==, -1);
    /* Another layer's change is its own. */
    g_assert_cmpint(layer_of(p, "m", SSRC_M + 1, t + 600000), ==, 1);
    /* A second after the change, the next one is taken. */
    g_assert_cmpint(layer_of(p, "l", SSRC_L + 1000, t + 999999), ==, -1);
    g_assert_cmpint(layer_of(p, "l", SSRC_L + 1000, t + 1000000), ==, 2);
    g_assert_cmpuint(atomic_load(&p->layers[2].ssrc), ==, SSRC_L + 1000);
    g_assert_cmpuint(atomic_load(&p->ssrc_changes_refused), ==, 500);
    pthread_mutex_destroy(&w.r.lock);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/room/layer-ssrc/change-once-a-second", test_ssrc_change_once_a_second);
    g_test_add_func("/room/layer-ssrc/repair-never-moves-a-layer", test_repair_never_moves_a_layer);
    return g_test_run();
}

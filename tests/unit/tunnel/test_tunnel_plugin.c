/* The tunnel plugin over a fake gateway (no network): two peers per tunnel
 * and a 409 (conflict) for a third, a message relayed only to the other
 * peer on that peer's channel, drops counted by reason (no peer, no
 * channel, not binary, oversized, relay refused), the partner told to
 * leave when one peer goes, and the tunnel's figures on /metrics. Lanes:
 * several sessions per peer (a key and a lane number), lane i relayed to
 * the other peer's lane i (or its first open lane), a third key, a lane of
 * an unknown key, a taken lane and one past the cap refused, and any lane
 * leaving ends every other lane. A peer's 17th channel takes over when its
 * first 16 close. A peer that never opens a channel (a negotiated one) and
 * sends nothing still ends when its partner leaves. A peer (or a lane 0)
 * rejoining at once gets a new tunnel, not a side of the one ending, also
 * while the leaving peer's session is still ending (session_ending). */
#include "tunnel.h"

#include "sctp/data_channel.h"

#include <glib.h>
#include <string.h>

typedef struct {
    int id;
    int refs;
    bool closed;
    bool ending; /* what session_ending says */
    uint64_t timer_us;
    int relayed;
    uint16_t last_stream;
    size_t last_length;
} fake_session;

static bool refuse_relay;

static void fake_ref(moat_plugin_session *h)
{
    ((fake_session *)h)->refs++;
}

static void fake_unref(moat_plugin_session *h)
{
    ((fake_session *)h)->refs--;
}

static int fake_relay_data(moat_plugin_session *h, uint16_t stream, uint32_t ppid,
                           const uint8_t *data, size_t length)
{
    fake_session *s = (fake_session *)h;
    if (refuse_relay)
        return -1;
    s->relayed++;
    s->last_stream = stream;
    s->last_length = length;
    return 0;
}

static void fake_set_timer(moat_plugin_session *h, uint64_t delay_us)
{
    ((fake_session *)h)->timer_us = delay_us;
}

static void fake_close(moat_plugin_session *h)
{
    ((fake_session *)h)->closed = true;
}

static uint64_t fake_now(void)
{
    return 1;
}

static bool fake_ending(moat_plugin_session *h)
{
    return ((fake_session *)h)->ending;
}

static const moat_gateway_calls gateway = {
    .close_session = fake_close,
    .now_us = fake_now,
    .handle_ref = fake_ref,
    .handle_unref = fake_unref,
    .set_timer = fake_set_timer,
    .relay_data = fake_relay_data,
    .session_ending = fake_ending,
};

/* A gateway before session_ending. */
static const moat_gateway_calls older_gateway = {
    .close_session = fake_close,
    .now_us = fake_now,
    .handle_ref = fake_ref,
    .handle_unref = fake_unref,
    .set_timer = fake_set_timer,
    .relay_data = fake_relay_data,
};

static const moat_plugin *plugin(void)
{
    extern const moat_plugin *moat_plugin_entry(void);
    return moat_plugin_entry();
}

static void *join(fake_session *s, const char *name, const char **error)
{
    moat_session_info info = {
        .session_id = "x", .has_data_channel = true, .endpoint = "whip", .resource = name};
    return plugin()->attach((moat_plugin_session *)s, &info, error);
}

static double metric(const char *name)
{
    char *text = plugin()->metrics();
    const char *at = strstr(text, name);
    double v = -1;
    while (at && at > text && at[-1] != '\n')
        at = strstr(at + 1, name);
    if (at)
        v = g_ascii_strtod(at + strlen(name) + 1, NULL);
    g_free(text);
    return v;
}

static const uint8_t packet[1172] = {0x45};

static void test_two_peers_and_a_conflict(void)
{
    g_assert_cmpint(plugin()->init(&gateway), ==, 0);
    fake_session a = {1}, b = {2}, c = {3};
    const char *error = NULL;
    void *pa = join(&a, "lab", &error);
    g_assert_nonnull(pa);
    /* Alone: nobody to deliver to. */
    plugin()->on_channel(pa, 0, "tunnel", true);
    plugin()->on_data(pa, 0, MOAT_SCTP_PPID_BINARY, packet, sizeof packet);
    g_assert_cmpfloat(metric("moat_tunnel_dropped_messages_total{reason=\"no_peer\"}"), ==, 1);
    void *pb = join(&b, "lab", &error);
    g_assert_nonnull(pb);
    void *pc = join(&c, "lab", &error);
    g_assert_null(pc);
    g_assert_true(g_str_has_prefix(error, MOAT_PLUGIN_ERROR_CONFLICT));
    g_assert_cmpfloat(metric("moat_tunnel_refused_total{reason=\"full\"}"), ==, 1);
    /* b has no channel yet. */
    plugin()->on_data(pa, 0, MOAT_SCTP_PPID_BINARY, packet, sizeof packet);
    g_assert_cmpfloat(metric("moat_tunnel_dropped_messages_total{reason=\"no_channel\"}"), ==, 1);
    /* b opens stream 3: a's packets go there, and only to b. */
    plugin()->on_channel(pb, 3, "tunnel", true);
    plugin()->on_data(pa, 0, MOAT_SCTP_PPID_BINARY, packet, sizeof packet);
    g_assert_cmpint(b.relayed, ==, 1);
    g_assert_cmpint(b.last_stream, ==, 3);
    g_assert_cmpuint(b.last_length, ==, sizeof packet);
    g_assert_cmpint(a.relayed, ==, 0);
    plugin()->on_data(pb, 3, MOAT_SCTP_PPID_BINARY, packet, 20);
    g_assert_cmpint(a.relayed, ==, 1);
    g_assert_cmpint(a.last_stream, ==, 0);
    /* Not IP packets. */
    plugin()->on_data(pa, 0, MOAT_SCTP_PPID_STRING, packet, 10);
    plugin()->on_data(pa, 0, MOAT_SCTP_PPID_BINARY_EMPTY, NULL, 0);
    g_assert_cmpfloat(metric("moat_tunnel_dropped_messages_total{reason=\"not_binary\"}"), ==, 2);
    static uint8_t big[70000];
    plugin()->on_data(pa, 0, MOAT_SCTP_PPID_BINARY, big, sizeof big);
    g_assert_cmpfloat(metric("moat_tunnel_dropped_messages_total{reason=\"oversized\"}"), ==, 1);
    refuse_relay = true;
    plugin()->on_data(pa, 0, MOAT_SCTP_PPID_BINARY, packet, 40);
    refuse_relay = false;
    g_assert_cmpfloat(metric("moat_tunnel_dropped_messages_total{reason=\"relay_refused\"}"), ==,
                      1);
    g_assert_cmpint(b.relayed, ==, 1);
    g_assert_cmpfloat(metric("moat_tunnel_messages_relayed_total"), ==, 2);
    g_assert_cmpfloat(metric("moat_tunnel_peers"), ==, 2);
    /* Every reference taken for a relay was given back. */
    g_assert_cmpint(a.refs, ==, 1);
    g_assert_cmpint(b.refs, ==, 1);
    /* a leaves: b's timer ends b's session; the counters stay. */
    plugin()->detach(pa);
    g_assert_false(b.closed);
    plugin()->on_timer(pb, 1);
    g_assert_true(b.closed);
    plugin()->detach(pb);
    g_assert_cmpfloat(metric("moat_tunnel_tunnels"), ==, 0);
    g_assert_cmpfloat(metric("moat_tunnel_messages_relayed_total"), ==, 2);
    g_assert_cmpint(a.refs, ==, 0);
    /* The name is free again. */
    fake_session d = {4};
    void *pd = join(&d, "lab", &error);
    g_assert_nonnull(pd);
    plugin()->detach(pd);
    plugin()->destroy();
}

static void test_refusals(void)
{
    g_assert_cmpint(plugin()->init(&gateway), ==, 0);
    fake_session a = {1};
    const char *error = NULL;
    g_assert_null(join(&a, "bad/name", &error));
    g_assert_true(g_str_has_prefix(error, MOAT_PLUGIN_ERROR_NOT_FOUND));
    moat_session_info info = {
        .session_id = "x", .has_data_channel = false, .endpoint = "whip", .resource = "ok"};
    g_assert_null(plugin()->attach((moat_plugin_session *)&a, &info, &error));
    g_assert_true(g_str_has_prefix(error, MOAT_PLUGIN_ERROR_BAD_REQUEST));
    info.has_data_channel = true;
    info.endpoint = "whep";
    g_assert_null(plugin()->attach((moat_plugin_session *)&a, &info, &error));
    g_assert_true(plugin()->offers_need_token);
    g_assert_false(tunnel_name_valid("", 0));
    g_assert_true(tunnel_name_valid("a-b_C9", 6));
    plugin()->destroy();
}

#define KEY_A "aaaaaaaaaaaaaaaa1"
#define KEY_B "bbbbbbbbbbbbbbbb2"

static void test_lanes(void)
{
    g_assert_cmpint(plugin()->init(&gateway), ==, 0);
    fake_session a0 = {1}, a1 = {2}, b0 = {3}, b1 = {4}, x = {5};
    const char *error = NULL;
    /* A lane of a key no side holds: 404, and nothing is created. */
    g_assert_null(join(&x, "lab/" KEY_A "/1", &error));
    g_assert_true(g_str_has_prefix(error, MOAT_PLUGIN_ERROR_NOT_FOUND));
    g_assert_cmpfloat(metric("moat_tunnel_refused_total{reason=\"no_such_peer\"}"), ==, 1);
    g_assert_cmpfloat(metric("moat_tunnel_tunnels"), ==, 0);
    void *pa0 = join(&a0, "lab/" KEY_A "/0", &error);
    void *pa1 = join(&a1, "lab/" KEY_A "/1", &error);
    void *pb0 = join(&b0, "lab/" KEY_B "/0", &error);
    g_assert_nonnull(pa0);
    g_assert_nonnull(pa1);
    g_assert_nonnull(pb0);
    g_assert_cmpfloat(metric("moat_tunnel_peers"), ==, 2);
    g_assert_cmpfloat(metric("moat_tunnel_lanes"), ==, 3);
    /* A third key, a one-lane third peer, a taken lane, the cap, a lane of
     * a key that is not the tunnel's, malformed lanes. */
    g_assert_null(join(&x, "lab/cccccccccccccccc3/0", &error));
    g_assert_true(g_str_has_prefix(error, MOAT_PLUGIN_ERROR_CONFLICT));
    g_assert_null(join(&x, "lab", &error));
    g_assert_true(g_str_has_prefix(error, MOAT_PLUGIN_ERROR_CONFLICT));
    g_assert_cmpfloat(metric("moat_tunnel_refused_total{reason=\"full\"}"), ==, 2);
    g_assert_null(join(&x, "lab/" KEY_A "/1", &error));
    g_assert_true(g_str_has_prefix(error, MOAT_PLUGIN_ERROR_CONFLICT));
    g_assert_cmpfloat(metric("moat_tunnel_refused_total{reason=\"lane_taken\"}"), ==, 1);
    g_assert_null(join(&x, "lab/" KEY_A "/8", &error));
    g_assert_true(g_str_has_prefix(error, MOAT_PLUGIN_ERROR_CONFLICT));
    g_assert_cmpfloat(metric("moat_tunnel_refused_total{reason=\"lane_cap\"}"), ==, 1);
    g_assert_null(join(&x, "lab/cccccccccccccccc3/2", &error));
    g_assert_true(g_str_has_prefix(error, MOAT_PLUGIN_ERROR_NOT_FOUND));
    const char *malformed[] = {"lab/" KEY_A,       "lab/short/1",          "lab/" KEY_A "/",
                               "lab/" KEY_A "/01", "lab/" KEY_A "/x",      "lab/" KEY_A "/1/2",
                               "lab/" KEY_A "/-1", "lab/a.b.c.d.e.f.g.h/1"};
    for (size_t i = 0; i < G_N_ELEMENTS(malformed); i++) {
        g_assert_null(join(&x, malformed[i], &error));
        g_assert_true(g_str_has_prefix(error, MOAT_PLUGIN_ERROR_NOT_FOUND));
    }
    g_assert_cmpfloat(metric("moat_tunnel_refused_total{reason=\"bad_lane\"}"), ==,
                      G_N_ELEMENTS(malformed));
    g_assert_cmpfloat(metric("moat_tunnel_lanes"), ==, 3);
    /* b has one lane: a's lane 1 falls back to b's lane 0. */
    plugin()->on_channel(pa0, 1, "tunnel", true);
    plugin()->on_channel(pa1, 3, "tunnel", true);
    plugin()->on_channel(pb0, 5, "tunnel", true);
    plugin()->on_data(pa1, 3, MOAT_SCTP_PPID_BINARY, packet, 100);
    g_assert_cmpint(b0.relayed, ==, 1);
    g_assert_cmpint(b0.last_stream, ==, 5);
    /* b's lane 1 arrives: lane 1 goes to lane 1, lane 0 to lane 0, both ways. */
    void *pb1 = join(&b1, "lab/" KEY_B "/1", &error);
    g_assert_nonnull(pb1);
    plugin()->on_channel(pb1, 7, "tunnel", true);
    plugin()->on_data(pa1, 3, MOAT_SCTP_PPID_BINARY, packet, 100);
    plugin()->on_data(pa0, 1, MOAT_SCTP_PPID_BINARY, packet, 100);
    g_assert_cmpint(b1.relayed, ==, 1);
    g_assert_cmpint(b1.last_stream, ==, 7);
    g_assert_cmpint(b0.relayed, ==, 2);
    plugin()->on_data(pb1, 7, MOAT_SCTP_PPID_BINARY, packet, 100);
    g_assert_cmpint(a1.relayed, ==, 1);
    g_assert_cmpint(a1.last_stream, ==, 3);
    g_assert_cmpint(a0.relayed, ==, 0);
    /* Lane 1 of a leaves: every other lane, a's own too, ends. */
    plugin()->detach(pa1);
    plugin()->on_timer(pa0, 1);
    plugin()->on_timer(pb0, 1);
    plugin()->on_timer(pb1, 1);
    g_assert_true(a0.closed);
    g_assert_true(b0.closed);
    g_assert_true(b1.closed);
    plugin()->detach(pa0);
    plugin()->detach(pb0);
    plugin()->detach(pb1);
    g_assert_cmpfloat(metric("moat_tunnel_tunnels"), ==, 0);
    g_assert_cmpfloat(metric("moat_tunnel_lanes"), ==, 0);
    g_assert_cmpint(a0.refs + a1.refs + b0.refs + b1.refs, ==, 0);
    /* Placement: lane i on the name's worker + i. */
    int base = plugin()->place("whip", "lab", 4);
    g_assert_cmpint(plugin()->place("whip", "lab/" KEY_A "/0", 4), ==, base);
    g_assert_cmpint(plugin()->place("whip", "lab/" KEY_B "/3", 4), ==, (base + 3) % 4);
    plugin()->destroy();
}

/* Before, a peer's open channels past 16 were forgotten: with the first 16
 * closed, its 17th got nothing (no_channel). */
static void test_seventeenth_channel_takes_over(void)
{
    g_assert_cmpint(plugin()->init(&gateway), ==, 0);
    fake_session a = {1}, b = {2};
    const char *error = NULL;
    void *pa = join(&a, "many", &error);
    void *pb = join(&b, "many", &error);
    g_assert_nonnull(pa);
    g_assert_nonnull(pb);
    plugin()->on_channel(pa, 0, "tunnel", true);
    for (uint16_t id = 1; id <= 33; id += 2)
        plugin()->on_channel(pb, id, "c", true);
    for (uint16_t id = 1; id <= 31; id += 2)
        plugin()->on_channel(pb, id, "", false);
    plugin()->on_data(pa, 0, MOAT_SCTP_PPID_BINARY, packet, 100);
    g_assert_cmpint(b.relayed, ==, 1);
    g_assert_cmpint(b.last_stream, ==, 33);
    g_assert_cmpfloat(metric("moat_tunnel_dropped_messages_total{reason=\"no_channel\"}"), ==, 0);
    plugin()->on_channel(pb, 33, "", false);
    plugin()->on_data(pa, 0, MOAT_SCTP_PPID_BINARY, packet, 100);
    g_assert_cmpint(b.relayed, ==, 1);
    g_assert_cmpfloat(metric("moat_tunnel_dropped_messages_total{reason=\"no_channel\"}"), ==, 1);
    plugin()->detach(pa);
    plugin()->detach(pb);
    plugin()->destroy();
}

/* Before, the check was armed by a first DCEP OPEN only: a peer whose
 * channel was negotiated stayed after its partner left, holding its side
 * for a newcomer. */
static void test_peer_without_channel_ends_with_its_partner(void)
{
    g_assert_cmpint(plugin()->init(&gateway), ==, 0);
    fake_session a = {1}, b = {2};
    const char *error = NULL;
    void *pa = join(&a, "quiet", &error);
    void *pb = join(&b, "quiet", &error);
    g_assert_nonnull(pa);
    g_assert_nonnull(pb);
    g_assert_cmpuint(b.timer_us, ==, TUNNEL_CHECK_US); /* armed at attach */
    plugin()->on_channel(pa, 0, "tunnel", true);
    plugin()->on_timer(pb, 1);
    g_assert_false(b.closed);
    g_assert_cmpuint(b.timer_us, ==, TUNNEL_CHECK_US);
    plugin()->detach(pa);
    plugin()->on_timer(pb, 1);
    g_assert_true(b.closed);
    plugin()->detach(pb);
    g_assert_cmpfloat(metric("moat_tunnel_tunnels"), ==, 0);
    plugin()->destroy();
}

/* Before, a leaving peer's tunnel stayed findable by its name until its
 * partner's next check: a peer rejoining at once took the free side, was
 * paired with the partner that was ending, and was closed when it left. */
static void test_rejoin_gets_a_new_tunnel(void)
{
    g_assert_cmpint(plugin()->init(&gateway), ==, 0);
    fake_session a = {1}, b = {2}, a2 = {3}, b2 = {4};
    const char *error = NULL;
    void *pa = join(&a, "again", &error);
    void *pb = join(&b, "again", &error);
    g_assert_nonnull(pa);
    g_assert_nonnull(pb);
    plugin()->on_channel(pa, 0, "tunnel", true);
    plugin()->on_data(pb, 0, MOAT_SCTP_PPID_BINARY, packet, 100);
    plugin()->detach(pa);
    /* a rejoins before b's check: a tunnel of its own, alone. */
    void *pa2 = join(&a2, "again", &error);
    g_assert_nonnull(pa2);
    g_assert_cmpfloat(metric("moat_tunnel_tunnels"), ==, 2);
    g_assert_cmpfloat(metric("moat_tunnel_peers"), ==, 2);
    g_assert_cmpfloat(metric("moat_tunnel_messages_received_total"), ==, 1);
    plugin()->on_channel(pa2, 0, "tunnel", true);
    plugin()->on_data(pb, 0, MOAT_SCTP_PPID_BINARY, packet, 100);
    g_assert_cmpint(a2.relayed, ==, 0); /* b's tunnel is not a2's */
    g_assert_cmpfloat(metric("moat_tunnel_dropped_messages_total{reason=\"no_peer\"}"), ==, 1);
    plugin()->on_timer(pb, 1);
    g_assert_true(b.closed);
    plugin()->detach(pb);
    g_assert_cmpfloat(metric("moat_tunnel_messages_received_total"), ==, 2);
    plugin()->on_timer(pa2, 1);
    g_assert_false(a2.closed);
    g_assert_cmpuint(a2.timer_us, ==, TUNNEL_CHECK_US);
    g_assert_cmpfloat(metric("moat_tunnel_tunnels"), ==, 1);
    g_assert_cmpfloat(metric("moat_tunnel_lanes"), ==, 1);
    /* A new partner: the rejoined peer's tunnel carries. */
    void *pb2 = join(&b2, "again", &error);
    g_assert_nonnull(pb2);
    plugin()->on_data(pb2, 0, MOAT_SCTP_PPID_BINARY, packet, 100);
    g_assert_cmpint(a2.relayed, ==, 1);
    plugin()->detach(pa2);
    plugin()->detach(pb2);
    g_assert_cmpfloat(metric("moat_tunnel_tunnels"), ==, 0);
    g_assert_cmpint(a.refs + b.refs + a2.refs + b2.refs, ==, 0);
    plugin()->destroy();
}

/* The same for a lane 0 rejoining while its peer's other lane lingers:
 * before, it took its old slot beside that lane and ended with it. */
static void test_lane_rejoin_gets_a_new_tunnel(void)
{
    g_assert_cmpint(plugin()->init(&gateway), ==, 0);
    fake_session a0 = {1}, a1 = {2}, again = {3};
    const char *error = NULL;
    void *pa0 = join(&a0, "lanes/" KEY_A "/0", &error);
    void *pa1 = join(&a1, "lanes/" KEY_A "/1", &error);
    g_assert_nonnull(pa0);
    g_assert_nonnull(pa1);
    plugin()->detach(pa0);
    void *pagain = join(&again, "lanes/" KEY_A "/0", &error);
    g_assert_nonnull(pagain);
    plugin()->on_timer(pa1, 1);
    g_assert_true(a1.closed);
    plugin()->detach(pa1);
    plugin()->on_timer(pagain, 1);
    g_assert_false(again.closed);
    g_assert_cmpfloat(metric("moat_tunnel_lanes"), ==, 1);
    plugin()->detach(pagain);
    g_assert_cmpfloat(metric("moat_tunnel_tunnels"), ==, 0);
    plugin()->destroy();
}

/* Before, the seat of a peer whose DELETE was answered stayed taken until
 * its session was gone (its data channels drained: tens of ms, up to the
 * drain timeout): a newcomer by the name got 409 meanwhile. */
static void test_join_while_a_peer_is_ending_gets_a_new_tunnel(void)
{
    g_assert_cmpint(plugin()->init(&gateway), ==, 0);
    fake_session a = {1}, b = {2}, a2 = {3};
    const char *error = NULL;
    void *pa = join(&a, "draining", &error);
    void *pb = join(&b, "draining", &error);
    g_assert_nonnull(pa);
    g_assert_nonnull(pb);
    a.ending = true; /* DELETE answered; its session drains */
    void *pa2 = join(&a2, "draining", &error);
    g_assert_nonnull(pa2);
    g_assert_cmpfloat(metric("moat_tunnel_refused_total{reason=\"full\"}"), ==, 0);
    g_assert_cmpfloat(metric("moat_tunnel_tunnels"), ==, 2);
    /* The old pair relays on until a is gone (its drain delivers b's). */
    plugin()->on_channel(pa, 0, "tunnel", true);
    plugin()->on_channel(pa2, 0, "tunnel", true);
    plugin()->on_data(pb, 0, MOAT_SCTP_PPID_BINARY, packet, 100);
    g_assert_cmpint(a.relayed, ==, 1);
    g_assert_cmpint(a2.relayed, ==, 0);
    plugin()->on_timer(pb, 1);
    g_assert_false(b.closed);
    plugin()->detach(pa);
    plugin()->on_timer(pb, 1);
    g_assert_true(b.closed);
    plugin()->detach(pb);
    plugin()->on_timer(pa2, 1);
    g_assert_false(a2.closed);
    g_assert_cmpfloat(metric("moat_tunnel_tunnels"), ==, 1);
    plugin()->detach(pa2);
    plugin()->destroy();
    /* A gateway that cannot say: the seat is taken until a leaves. */
    g_assert_cmpint(plugin()->init(&older_gateway), ==, 0);
    a.ending = false;
    a2.closed = b.closed = false;
    pa = join(&a, "draining", &error);
    pb = join(&b, "draining", &error);
    a.ending = true;
    g_assert_null(join(&a2, "draining", &error));
    g_assert_true(g_str_has_prefix(error, MOAT_PLUGIN_ERROR_CONFLICT));
    plugin()->detach(pa);
    plugin()->detach(pb);
    plugin()->destroy();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tunnel/two_peers_and_a_conflict", test_two_peers_and_a_conflict);
    g_test_add_func("/tunnel/refusals", test_refusals);
    g_test_add_func("/tunnel/lanes", test_lanes);
    g_test_add_func("/tunnel/seventeenth-channel", test_seventeenth_channel_takes_over);
    g_test_add_func("/tunnel/peer-without-channel-ends",
                    test_peer_without_channel_ends_with_its_partner);
    g_test_add_func("/tunnel/rejoin-gets-a-new-tunnel", test_rejoin_gets_a_new_tunnel);
    g_test_add_func("/tunnel/lane-rejoin-gets-a-new-tunnel", test_lane_rejoin_gets_a_new_tunnel);
    g_test_add_func("/tunnel/join-while-a-peer-is-ending",
                    test_join_while_a_peer_is_ending_gets_a_new_tunnel);
    return g_test_run();
}

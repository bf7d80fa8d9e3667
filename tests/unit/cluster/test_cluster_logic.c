/* gateway/cluster's pure logic: placement (two random choices, region
 * first, recent placements), the lease state machine, key names, and node
 * records from other machines (refused when malformed or unsafe). */
#include "cluster/cluster_keys.h"
#include "cluster/lease.h"
#include "cluster/node_record.h"
#include "cluster/placement.h"

#include <glib.h>
#include <string.h>

static void test_placement_prefers_less_loaded(void)
{
    moat_placement_candidate c[] = {
        {"a", "", true, 90, 100, 0},
        {"b", "", true, 10, 100, 0},
    };
    for (uint32_t r = 0; r < 8; r++)
        g_assert_cmpint(moat_placement_choose(c, 2, "", r, r * 7 + 1), ==, 1);
}

static void test_placement_skips_draining_and_full(void)
{
    moat_placement_candidate c[] = {
        {"a", "", false, 0, 100, 0},
        {"b", "", true, 100, 100, 0},
        {"c", "", true, 99, 100, 0},
    };
    for (uint32_t r = 0; r < 16; r++)
        g_assert_cmpint(moat_placement_choose(c, 3, "", r, r + 3), ==, 2);
    /* Every serving node full: a full one rather than none. */
    c[2].sessions = 100;
    int chosen = moat_placement_choose(c, 3, "", 1, 2);
    g_assert_true(chosen == 1 || chosen == 2);
    /* Nobody serving. */
    c[1].serving = c[2].serving = false;
    g_assert_cmpint(moat_placement_choose(c, 3, "", 1, 2), ==, -1);
    g_assert_cmpint(moat_placement_choose(c, 0, "", 1, 2), ==, -1);
}

static void test_placement_region_first(void)
{
    moat_placement_candidate c[] = {
        {"eu1", "eu", true, 50, 100, 0},
        {"us1", "us", true, 0, 100, 0},
        {"eu2", "eu", true, 60, 100, 0},
    };
    for (uint32_t r = 0; r < 16; r++) {
        int chosen = moat_placement_choose(c, 3, "eu", r, r * 5 + 2);
        g_assert_true(chosen == 0); /* eu1 is the lighter of the two eu nodes */
    }
    /* The region's nodes all draining: any region. */
    c[0].serving = c[2].serving = false;
    g_assert_cmpint(moat_placement_choose(c, 3, "eu", 4, 9), ==, 1);
}

static void test_placement_spreads_a_burst(void)
{
    moat_placement_recent recent;
    moat_placement_recent_init(&recent, 5000);
    moat_placement_candidate c[] = {
        {"a", "", true, 0, 100, 0},
        {"b", "", true, 0, 100, 0},
    };
    int counts[2] = {0, 0};
    for (int i = 0; i < 20; i++) {
        c[0].recent = moat_placement_recent_count(&recent, "a", 1000 + i);
        c[1].recent = moat_placement_recent_count(&recent, "b", 1000 + i);
        int chosen = moat_placement_choose(c, 2, "", 0, 0); /* always a vs b, a first */
        counts[chosen]++;
        moat_placement_recent_add(&recent, c[chosen].id, 1000 + i);
    }
    g_assert_cmpint(counts[0], ==, 10);
    g_assert_cmpint(counts[1], ==, 10);
    /* Placements older than the window no longer count. */
    g_assert_cmpuint(moat_placement_recent_count(&recent, "a", 1000 + 19), ==, 10);
    g_assert_cmpuint(moat_placement_recent_count(&recent, "a", 1000 + 5020), ==, 0);
}

static void test_lease_renews_and_expires(void)
{
    moat_lease lease;
    moat_lease_init(&lease, 4000, 1000, true, 1000);
    g_assert_true(moat_lease_valid(&lease, 4999));
    g_assert_false(moat_lease_valid(&lease, 5000));
    g_assert_cmpint(moat_lease_tick(&lease, 1500, true), ==, MOAT_LEASE_WAIT);
    g_assert_cmpint(moat_lease_tick(&lease, 2000, true), ==, MOAT_LEASE_RENEW);
    moat_lease_renew_sent(&lease, 2000);
    g_assert_cmpint(moat_lease_tick(&lease, 3500, true), ==, MOAT_LEASE_WAIT); /* in flight */
    moat_lease_renew_reply(&lease, 2000, false, true);
    g_assert_true(moat_lease_valid(&lease, 5999));
    g_assert_false(moat_lease_valid(&lease, 6000));
    /* A failed renewal changes nothing: the lease lapses locally too. */
    g_assert_cmpint(moat_lease_tick(&lease, 3000, true), ==, MOAT_LEASE_RENEW);
    moat_lease_renew_sent(&lease, 3000);
    moat_lease_renew_reply(&lease, 3000, true, false);
    g_assert_false(moat_lease_valid(&lease, 6000));
    g_assert_cmpint(lease.state, ==, MOAT_LEASE_OWNED);
}

static void test_lease_lost_and_released(void)
{
    moat_lease lease;
    moat_lease_init(&lease, 4000, 0, true, 0);
    moat_lease_renew_sent(&lease, 1000);
    moat_lease_renew_reply(&lease, 1000, false, false);
    g_assert_cmpint(lease.state, ==, MOAT_LEASE_LOST);
    g_assert_false(moat_lease_valid(&lease, 1001));
    g_assert_cmpint(moat_lease_tick(&lease, 2000, true), ==, MOAT_LEASE_WAIT);

    moat_lease_init(&lease, 4000, 10000, true, 10000);
    g_assert_cmpint(moat_lease_tick(&lease, 12000, false), ==, MOAT_LEASE_RENEW);
    moat_lease_renew_sent(&lease, 12000);
    moat_lease_renew_reply(&lease, 12000, false, true);
    /* Unused since 10000: renewed until a whole lease has passed, then let go. */
    g_assert_cmpint(moat_lease_tick(&lease, 13999, false), ==, MOAT_LEASE_RENEW);
    moat_lease_renew_sent(&lease, 13999);
    moat_lease_renew_reply(&lease, 13999, false, true);
    g_assert_cmpint(moat_lease_tick(&lease, 14000, false), ==, MOAT_LEASE_RELEASE);
    g_assert_cmpint(lease.state, ==, MOAT_LEASE_RELEASED);
}

static void test_lease_unconfirmed_renews_at_once(void)
{
    moat_lease lease;
    moat_lease_init(&lease, 4000, 500, false, 0); /* placed while Redis was away */
    g_assert_false(moat_lease_valid(&lease, 501));
    g_assert_cmpint(moat_lease_tick(&lease, 501, true), ==, MOAT_LEASE_RENEW);
}

static void test_keys(void)
{
    char out[300];
    g_assert_true(moat_cluster_node_key("host:8088", out, sizeof out));
    g_assert_cmpstr(out, ==, "moat:node:host:8088");
    g_assert_true(moat_cluster_room_key("room", "lobby", out, sizeof out));
    g_assert_cmpstr(out, ==, "moat:room:room:lobby");
    g_assert_false(moat_cluster_room_key("room", "a:b", out, sizeof out));
    g_assert_false(moat_cluster_room_key("room", "", out, sizeof out));
    g_assert_false(moat_cluster_node_key("with space", out, sizeof out));
    g_assert_false(moat_cluster_node_key("tab\tid", out, sizeof out));
    char small[12];
    g_assert_false(moat_cluster_node_key("abcdefghij", small, sizeof small));
    char room[MOAT_CLUSTER_NAME_MAX];
    g_assert_true(moat_cluster_room_of_resource("lobby/p1", room, sizeof room));
    g_assert_cmpstr(room, ==, "lobby");
    g_assert_true(moat_cluster_room_of_resource("lobby", room, sizeof room));
    g_assert_false(moat_cluster_room_of_resource("/x", room, sizeof room));
    g_assert_false(moat_cluster_room_of_resource("", room, sizeof room));
    char *long_name = g_strnfill(200, 'x');
    g_assert_false(moat_cluster_room_of_resource(long_name, room, sizeof room));
    g_free(long_name);
}

static void test_node_record_round_trip(void)
{
    moat_cluster_node node = {0};
    strcpy(node.id, "n1");
    strcpy(node.http, "http://10.0.0.5:8088");
    strcpy(node.region, "eu");
    node.draining = true;
    node.sessions = 7;
    node.max_sessions = 100;
    char *json = moat_cluster_node_to_json(&node);
    moat_cluster_node back;
    char error[96];
    g_assert_true(moat_cluster_node_parse(json, strlen(json), &back, error, sizeof error));
    g_assert_cmpmem(&node, sizeof node, &back, sizeof back);
    g_free(json);
}

static void test_node_record_refuses_hostile(void)
{
    const char *bad[] = {
        "",
        "[]",
        "{\"id\":\"n\",\"http\":\"http://a\",\"state\":\"serving\",\"id\":\"m\"}",
        "{\"http\":\"http://a\",\"state\":\"serving\"}",
        "{\"id\":\"n\",\"http\":\"javascript:x\",\"state\":\"serving\"}",
        "{\"id\":\"n\",\"http\":\"http://a\\r\\nSet-Cookie: x\",\"state\":\"serving\"}",
        "{\"id\":\"n\",\"http\":\"http://a b\",\"state\":\"serving\"}",
        "{\"id\":\"n\",\"http\":\"http://a\\\"b\",\"state\":\"serving\"}",
        "{\"id\":\"n\",\"http\":\"http://a\",\"state\":\"asleep\"}",
        "{\"id\":\"n\",\"http\":\"http://a\",\"state\":\"serving\",\"sessions\":-1}",
        "{\"id\":\"n\",\"http\":\"http://a\",\"state\":\"serving\",\"sessions\":4294967296}",
        "{\"id\":\"n\",\"http\":\"http://a\",\"state\":\"serving\",\"sessions\":\"3\"}",
        "{\"id\":\"n\\u0000x\",\"http\":\"http://a\",\"state\":\"serving\"}",
        "{\"id\":\"n x\",\"http\":\"http://a\",\"state\":\"serving\"}",
        "{\"id\":\"n\",\"http\":\"http://a\",\"state\":\"serving\",\"region\":\"\\u00e9\"}",
    };
    moat_cluster_node node;
    char error[96];
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        if (moat_cluster_node_parse(bad[i], strlen(bad[i]), &node, error, sizeof error))
            g_error("accepted: %s", bad[i]);
    }
    char *huge = g_strdup_printf("{\"id\":\"n\",\"http\":\"http://a\",\"state\":\"serving\","
                                 "\"region\":\"%0*d\"}",
                                 5000, 0);
    g_assert_false(moat_cluster_node_parse(huge, strlen(huge), &node, error, sizeof error));
    g_free(huge);
    const char *good = "{\"id\":\"n\",\"http\":\"https://a.example\",\"state\":\"serving\"}";
    g_assert_true(moat_cluster_node_parse(good, strlen(good), &node, error, sizeof error));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cluster/placement/less-loaded", test_placement_prefers_less_loaded);
    g_test_add_func("/cluster/placement/draining-full", test_placement_skips_draining_and_full);
    g_test_add_func("/cluster/placement/region", test_placement_region_first);
    g_test_add_func("/cluster/placement/burst", test_placement_spreads_a_burst);
    g_test_add_func("/cluster/lease/renew-expire", test_lease_renews_and_expires);
    g_test_add_func("/cluster/lease/lost-released", test_lease_lost_and_released);
    g_test_add_func("/cluster/lease/unconfirmed", test_lease_unconfirmed_renews_at_once);
    g_test_add_func("/cluster/keys", test_keys);
    g_test_add_func("/cluster/record/round-trip", test_node_record_round_trip);
    g_test_add_func("/cluster/record/hostile", test_node_record_refuses_hostile);
    return g_test_run();
}

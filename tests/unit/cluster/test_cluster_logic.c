/* gateway/cluster's pure logic: placement (two random choices, region
 * first, recent placements), the lease state machine, key names, and node
 * records from other machines (refused when malformed or unsafe). */
#include "cluster/cluster_keys.h"
#include "cluster/cluster_message.h"
#include "cluster/lease.h"
#include "cluster/node_record.h"
#include "cluster/placement.h"

#include <glib.h>
#include <jansson.h>
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
    g_assert_true(moat_cluster_room_full_key("room", "lobby", out, sizeof out));
    g_assert_cmpstr(out, ==, "moat:full:room:lobby");
    g_assert_false(moat_cluster_room_full_key("room", "a:b", out, sizeof out));
}

/* Proxy mode's Locations naming the owner: a round trip for any node id,
 * anything malformed refused, a path without via/ left to the node. */
static void test_via_paths(void)
{
    char path[512], node[MOAT_CLUSTER_NAME_MAX], id[48];
    g_assert_true(moat_cluster_via_path("host:8088/x", "0123abcd", path, sizeof path));
    g_assert_cmpstr(path, ==, "/whip/resource/via/686f73743a383038382f78/0123abcd");
    const char *rest = path + strlen("/whip/resource/");
    g_assert_cmpint(moat_cluster_via_parse(rest, node, sizeof node, id, sizeof id), ==,
                    MOAT_CLUSTER_VIA_OK);
    g_assert_cmpstr(node, ==, "host:8088/x");
    g_assert_cmpstr(id, ==, "0123abcd");
    g_assert_false(moat_cluster_via_path("n0", "a/b", path, sizeof path));
    g_assert_false(moat_cluster_via_path("n 0", "ab", path, sizeof path));
    g_assert_false(moat_cluster_via_path("n0", "", path, sizeof path));
    char small[24];
    g_assert_false(moat_cluster_via_path("n0", "0123456789", small, sizeof small));
    g_assert_cmpint(moat_cluster_via_parse("0123abcd", node, sizeof node, id, sizeof id), ==,
                    MOAT_CLUSTER_VIA_NONE);
    const char *bad[] = {
        "via/",          "via/6e30",      "via/6e3/ab",
        "via/zz/ab",     "via/6e30/",     "via/6e30/a/b",
        "via/6e3000/ab", "via/6e2030/ab", "via//ab",
        "via/6e30/a.b",  "via/6E30/a%2f", "via/6e30/0123456789012345678901234567890123456789"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
        g_assert_cmpint(moat_cluster_via_parse(bad[i], node, sizeof node, id, sizeof id), ==,
                        MOAT_CLUSTER_VIA_INVALID);
    /* Upper-case hex is still hex. */
    g_assert_cmpint(moat_cluster_via_parse("via/6E30/ab", node, sizeof node, id, sizeof id), ==,
                    MOAT_CLUSTER_VIA_OK);
    g_assert_cmpstr(node, ==, "n0");
    /* A node id too long for the caller's buffer. */
    char tiny[2];
    g_assert_cmpint(moat_cluster_via_parse("via/6e30/ab", tiny, sizeof tiny, id, sizeof id), ==,
                    MOAT_CLUSTER_VIA_INVALID);
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

/* ---- node-to-node messages (cluster_message.c) ---- */

static moat_cluster_drop_reason refused(const char *text)
{
    moat_cluster_message m;
    moat_cluster_drop_reason reason = MOAT_CLUSTER_DROP_COUNT;
    g_assert_false(moat_cluster_message_parse(text, strlen(text), &m, &reason));
    g_assert_null(m.body);
    return reason;
}

static void test_message_round_trip(void)
{
    moat_cluster_message request = {.kind = MOAT_CLUSTER_MSG_REQUEST};
    g_strlcpy(request.from, "n0:8080", sizeof request.from);
    g_strlcpy(request.id, "1-abc", sizeof request.id);
    g_strlcpy(request.reply_to, "moat:rpc:n0:8080", sizeof request.reply_to);
    g_strlcpy(request.method, "POST", sizeof request.method);
    g_strlcpy(request.path, "/api/rooms/lobby/subscribers/s1/layer", sizeof request.path);
    request.body = g_strdup("{\"rid\":\"auto\"}");
    request.body_length = strlen(request.body);
    size_t length = 0;
    char *text = moat_cluster_message_to_json(&request, &length);
    g_assert_nonnull(text);
    moat_cluster_message back;
    moat_cluster_drop_reason reason;
    g_assert_true(moat_cluster_message_parse(text, length, &back, &reason));
    g_assert_cmpint(back.kind, ==, MOAT_CLUSTER_MSG_REQUEST);
    g_assert_cmpstr(back.path, ==, request.path);
    g_assert_cmpstr(back.body, ==, request.body);
    moat_cluster_message_clear(&back);
    g_free(text);
    /* A request's reply channel must be its sender's own. */
    g_strlcpy(request.reply_to, "moat:rpc:other", sizeof request.reply_to);
    g_assert_null(moat_cluster_message_to_json(&request, NULL));
    moat_cluster_message_clear(&request);

    moat_cluster_message reply = {.kind = MOAT_CLUSTER_MSG_REPLY, .status = 404};
    g_strlcpy(reply.from, "n1", sizeof reply.from);
    g_strlcpy(reply.id, "1-abc", sizeof reply.id);
    text = moat_cluster_message_to_json(&reply, &length);
    g_assert_true(moat_cluster_message_parse(text, length, &back, &reason));
    g_assert_cmpuint(back.status, ==, 404);
    g_assert_null(back.body);
    moat_cluster_message_clear(&back);
    g_free(text);
    /* A body that is not UTF-8 is not sent. */
    reply.body = "\xff\xfe";
    reply.body_length = 2;
    g_assert_null(moat_cluster_message_to_json(&reply, NULL));
}

static void test_message_refusals(void)
{
    g_assert_cmpint(refused(""), ==, MOAT_CLUSTER_DROP_MALFORMED);
    g_assert_cmpint(refused("[1]"), ==, MOAT_CLUSTER_DROP_MALFORMED);
    g_assert_cmpint(
        refused("{\"v\":2,\"kind\":\"reply\",\"from\":\"a\",\"id\":\"1\",\"status\":200}"), ==,
        MOAT_CLUSTER_DROP_MALFORMED);
    /* Status out of range, duplicate keys, ids with spaces. */
    g_assert_cmpint(
        refused("{\"v\":1,\"kind\":\"reply\",\"from\":\"a\",\"id\":\"1\",\"status\":99}"), ==,
        MOAT_CLUSTER_DROP_MALFORMED);
    /* 1xx is no final status: relayed as one, libsoup wrote "100 Continue"
     * heads forever. */
    static const int not_final[] = {100, 101, 199, 600};
    for (size_t i = 0; i < G_N_ELEMENTS(not_final); i++) {
        char reply[128];
        g_snprintf(reply, sizeof reply,
                   "{\"v\":1,\"kind\":\"reply\",\"from\":\"a\",\"id\":\"1\",\"status\":%d}",
                   not_final[i]);
        g_assert_cmpint(refused(reply), ==, MOAT_CLUSTER_DROP_MALFORMED);
    }
    moat_cluster_message interim = {.kind = MOAT_CLUSTER_MSG_REPLY, .status = 100};
    g_strlcpy(interim.from, "a", sizeof interim.from);
    g_strlcpy(interim.id, "1", sizeof interim.id);
    g_assert_null(moat_cluster_message_to_json(&interim, NULL));
    g_assert_cmpint(refused("{\"v\":1,\"kind\":\"reply\",\"from\":\"a\",\"from\":\"b\",\"id\":"
                            "\"1\",\"status\":200}"),
                    ==, MOAT_CLUSTER_DROP_MALFORMED);
    g_assert_cmpint(
        refused("{\"v\":1,\"kind\":\"reply\",\"from\":\"a b\",\"id\":\"1\",\"status\":200}"), ==,
        MOAT_CLUSTER_DROP_MALFORMED);
    const char *base =
        "{\"v\":1,\"kind\":\"request\",\"from\":\"a\",\"id\":\"1\",\"method\":\"GET\","
        "\"reply_to\":\"%s\",\"path\":\"%s\"}";
    char text[512];
    g_snprintf(text, sizeof text, base, "moat:rpc:b", "/api/rooms");
    g_assert_cmpint(refused(text), ==, MOAT_CLUSTER_DROP_REPLY_CHANNEL);
    g_snprintf(text, sizeof text, base, "moat:rpc:a", "/api/cluster/drain");
    g_assert_cmpint(refused(text), ==, MOAT_CLUSTER_DROP_PATH);
    g_snprintf(text, sizeof text, base, "moat:rpc:a", "/api/rooms/../cluster");
    g_assert_cmpint(refused(text), ==, MOAT_CLUSTER_DROP_PATH);
    g_snprintf(text, sizeof text, base, "moat:rpc:a", "/api/rooms/a?x=1");
    g_assert_cmpint(refused(text), ==, MOAT_CLUSTER_DROP_PATH);
    /* Events: a room topic and a JSON object. */
    g_assert_cmpint(refused("{\"v\":1,\"kind\":\"event\",\"from\":\"a\",\"topic\":\"calls/x\","
                            "\"body\":\"{}\"}"),
                    ==, MOAT_CLUSTER_DROP_MALFORMED);
    g_assert_cmpint(refused("{\"v\":1,\"kind\":\"event\",\"from\":\"a\",\"topic\":\"rooms/x\","
                            "\"body\":\"[]\"}"),
                    ==, MOAT_CLUSTER_DROP_MALFORMED);
    /* Oversized: refused before parsing. */
    size_t big = MOAT_CLUSTER_MESSAGE_MAX + 1;
    char *huge = g_malloc0(big + 1);
    memset(huge, ' ', big);
    moat_cluster_message m;
    moat_cluster_drop_reason reason;
    g_assert_false(moat_cluster_message_parse(huge, big, &m, &reason));
    g_assert_cmpint(reason, ==, MOAT_CLUSTER_DROP_OVERSIZED);
    g_free(huge);
    g_assert_cmpstr(moat_cluster_drop_reason_name(MOAT_CLUSTER_DROP_UNKNOWN_NODE), ==,
                    "unknown_node");
}

static void test_message_paths_and_merge(void)
{
    char room[MOAT_CLUSTER_NAME_MAX];
    g_assert_true(
        moat_cluster_room_of_api_path("/api/rooms/lobby/subscribers/x/layer", room, sizeof room));
    g_assert_cmpstr(room, ==, "lobby");
    g_assert_false(moat_cluster_room_of_api_path("/api/rooms", room, sizeof room));
    g_assert_false(moat_cluster_room_of_api_path("/api/rooms//x", room, sizeof room));
    g_assert_true(moat_cluster_path_forwardable("/api/rooms"));
    g_assert_false(moat_cluster_path_forwardable("/api/roomsx"));
    g_assert_false(moat_cluster_path_forwardable("/api/rooms/a b"));

    json_t *rooms = json_array();
    const char *listing = "{\"rooms\":[{\"name\":\"a\"},{\"name\":\"b\"}]}";
    g_assert_true(moat_cluster_rooms_merge(rooms, "n1", listing, strlen(listing), 3));
    g_assert_true(moat_cluster_rooms_merge(rooms, "n2", listing, strlen(listing), 3));
    g_assert_cmpuint(json_array_size(rooms), ==, 3); /* bounded */
    g_assert_cmpstr(json_string_value(json_object_get(json_array_get(rooms, 2), "node")), ==, "n2");
    const char *bad = "{\"rooms\":[{\"name\":\"a\"},7]}";
    g_assert_false(moat_cluster_rooms_merge(rooms, "n3", bad, strlen(bad), 100));
    g_assert_false(moat_cluster_rooms_merge(rooms, "n3", "nope", 4, 100));
    g_assert_cmpuint(json_array_size(rooms), ==, 3);
    json_decref(rooms);
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
    g_test_add_func("/cluster/keys/via", test_via_paths);
    g_test_add_func("/cluster/message/round-trip", test_message_round_trip);
    g_test_add_func("/cluster/message/refusals", test_message_refusals);
    g_test_add_func("/cluster/message/paths-merge", test_message_paths_and_merge);
    g_test_add_func("/cluster/record/round-trip", test_node_record_round_trip);
    g_test_add_func("/cluster/record/hostile", test_node_record_refuses_hostile);
    return g_test_run();
}

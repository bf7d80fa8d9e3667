/* The topic of a plugin's <api_path>/<resource>/events WebSocket path
 * (core/events.h): one printable segment between the prefix and /events. */
#include "session/events.h"

#include <glib.h>
#include <string.h>

static void test_topics(void)
{
    char topic[64];
    g_assert_true(
        moat_events_resource_topic("/api/rooms", "/api/rooms/lobby/events", topic, sizeof topic));
    g_assert_cmpstr(topic, ==, "rooms/lobby");
    g_assert_true(
        moat_events_resource_topic("/api/rooms", "/api/rooms/a-b_c/events", topic, sizeof topic));
    g_assert_cmpstr(topic, ==, "rooms/a-b_c");
}

static void test_refusals(void)
{
    char topic[32];
    const char *bad[] = {
        "/api/rooms/events",
        "/api/rooms//events",
        "/api/rooms/a/b/events",
        "/api/roomsx/a/events",
        "/api/rooms/a/event",
        "/api/rooms/a b/events",
        "/api/rooms/a\x01/events",
        "/api/other/a/events",
        "/api/rooms",
        "",
        "/api/rooms/a/events/x",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
        g_assert_false(moat_events_resource_topic("/api/rooms", bad[i], topic, sizeof topic));
    /* Not under /api/, or a topic too long for the buffer. */
    g_assert_false(moat_events_resource_topic("/rooms", "/rooms/a/events", topic, sizeof topic));
    g_assert_false(moat_events_resource_topic(
        "/api/rooms", "/api/rooms/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/events", topic,
        sizeof topic));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/events/topics", test_topics);
    g_test_add_func("/events/refusals", test_refusals);
    return g_test_run();
}

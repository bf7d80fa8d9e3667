/* The built echo module as the gateway loads it: through GModule, by the
 * exported entry symbol, with nothing else exported. */
#include <glib.h>
#include <gmodule.h>
#include <string.h>

#include "echo_fake_gateway.h"
#include "plugin.h"

static void test_load_module(void)
{
    const char *path = g_getenv("MOAT_ECHO_MODULE");
    g_assert_nonnull(path);
    GModule *module = g_module_open(path, G_MODULE_BIND_LOCAL);
    g_assert_nonnull(module);

    gpointer symbol = NULL;
    g_assert_true(g_module_symbol(module, MOAT_PLUGIN_ENTRY_SYMBOL, &symbol));
    /* The RTP library linked into the module stays private to it. */
    gpointer private_symbol = NULL;
    g_assert_false(g_module_symbol(module, "moat_rtp_parse", &private_symbol));
    g_assert_false(g_module_symbol(module, "moat_echo_route", &private_symbol));

    moat_plugin_entry_fn entry = (moat_plugin_entry_fn)symbol;
    const moat_plugin *plugin = entry();
    g_assert_cmpint(plugin->api_version, ==, MOAT_PLUGIN_API_VERSION);
    g_assert_cmpstr(plugin->name, ==, "echo");
    g_assert_nonnull(plugin->description);
    g_assert_nonnull(plugin->attach);
    g_assert_nonnull(plugin->detach);
    g_assert_nonnull(plugin->handle_message);
    g_assert_nonnull(plugin->on_media);
    g_assert_nonnull(plugin->on_rtcp);
    g_assert_nonnull(plugin->on_data);
    g_assert_nonnull(plugin->hangup);

    g_assert_cmpint(plugin->init(&fake_gateway_calls), ==, 0);
    moat_media_info media;
    memset(&media, 0, sizeof(media));
    media.kind = MOAT_MEDIA_KIND_AUDIO;
    g_strlcpy(media.mid, "0", sizeof(media.mid));
    media.peer_sends = media.peer_receives = true;
    media.remote_ssrc = 0x1234;
    media.local_ssrc = 0x5678;
    moat_session_info info = {.session_id = "m", .media = &media, .n_media = 1};
    moat_plugin_session gw;
    fake_session_init(&gw);
    const char *error = NULL;
    void *state = plugin->attach(&gw, &info, &error);
    g_assert_nonnull(state);

    uint8_t packet[20] = {0x80, 0, 0, 1, 0, 0, 0, 0, 0x00, 0x00, 0x12, 0x34};
    /* As the core's demux describes it (rtp/rtp_demux.h). */
    moat_rtp_packet p = {.data = packet,
                         .length = sizeof(packet),
                         .capacity = sizeof(packet),
                         .media_index = 0,
                         .kind = MOAT_MEDIA_KIND_AUDIO,
                         .ssrc = 0x1234,
                         .sequence = 1,
                         .extended_sequence = 1,
                         .payload_offset = 12,
                         .payload_length = 8};
    plugin->on_media(state, &p);
    g_assert_cmpuint(gw.rtp->len, ==, 1);
    gsize len;
    const uint8_t *out = g_bytes_get_data(g_ptr_array_index(gw.rtp, 0), &len);
    g_assert_cmpuint(len, ==, sizeof(packet));
    g_assert_cmpmem(out + 8, 4, "\x00\x00\x56\x78", 4);
    plugin->on_data(state, 1, 51, (const uint8_t *)"hi", 2);
    g_assert_cmpuint(gw.data->len, ==, 1);
    char *reply = plugin->handle_message(state, "{}");
    g_assert_cmpstr(reply, ==, "{\"plugin\":\"echo\",\"echoed_rtp\":1,\"echoed_data\":1}");
    g_free(reply);

    plugin->hangup(state);
    plugin->detach(state);
    plugin->destroy();
    fake_session_clear(&gw);
    g_assert_true(g_module_close(module));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/echo/module/load", test_load_module);
    return g_test_run();
}

/* Recording gateway calls for the echo plugin's tests. */
#include "echo_fake_gateway.h"

uint64_t fake_gateway_now_us;

static void free_data_message(gpointer p)
{
    fake_data_message *m = p;
    g_bytes_unref(m->bytes);
    g_free(m);
}

static int fake_send_rtp(moat_plugin_session *s, const uint8_t *packet, size_t length)
{
    g_ptr_array_add(s->rtp, g_bytes_new(packet, length));
    return 0;
}

static int fake_send_rtcp(moat_plugin_session *s, const uint8_t *packet, size_t length)
{
    g_ptr_array_add(s->rtcp, g_bytes_new(packet, length));
    return 0;
}

static int fake_send_data(moat_plugin_session *s, uint16_t stream_id, uint32_t ppid,
                          const uint8_t *data, size_t length)
{
    fake_data_message *m = g_new0(fake_data_message, 1);
    m->stream_id = stream_id;
    m->ppid = ppid;
    m->bytes = g_bytes_new(data, length);
    g_ptr_array_add(s->data, m);
    return 0;
}

static void fake_push_event(moat_plugin_session *s, const char *json) {}

static void fake_close_session(moat_plugin_session *s) {}

static uint64_t fake_now_us(void)
{
    return fake_gateway_now_us;
}

const moat_gateway_calls fake_gateway_calls = {
    .send_rtp = fake_send_rtp,
    .send_rtcp = fake_send_rtcp,
    .send_data = fake_send_data,
    .push_event = fake_push_event,
    .close_session = fake_close_session,
    .now_us = fake_now_us,
};

void fake_session_init(moat_plugin_session *s)
{
    s->rtp = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    s->rtcp = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    s->data = g_ptr_array_new_with_free_func(free_data_message);
}

void fake_session_clear(moat_plugin_session *s)
{
    g_ptr_array_unref(s->rtp);
    g_ptr_array_unref(s->rtcp);
    g_ptr_array_unref(s->data);
}

void fake_session_reset(moat_plugin_session *s)
{
    g_ptr_array_set_size(s->rtp, 0);
    g_ptr_array_set_size(s->rtcp, 0);
    g_ptr_array_set_size(s->data, 0);
}

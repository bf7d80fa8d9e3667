/* The echo plugin's packet path, measured (echo_path.h). */
#include "echo_path.h"

#include "plugin.h"
#include "rtp/rtp_packet.h"
#if MOAT_PLUGIN_API_VERSION >= 2
#include "rtp/rtp_demux.h"
#endif

#include <string.h>
#include <time.h>

const moat_plugin *moat_plugin_entry(void);

struct moat_plugin_session {
    uint8_t buffer[2048];
    unsigned long sent;
};

/* What the gateway's send_rtp does before SRTP: parse, copy. */
static int send_rtp(moat_plugin_session *s, const uint8_t *packet, size_t length)
{
    moat_rtp_header h;
    if (moat_rtp_parse(packet, length, &h) != MOAT_RTP_OK || length > sizeof s->buffer)
        return -1;
    memcpy(s->buffer, packet, length);
    s->sent++;
    return 0;
}

static int send_rtcp(moat_plugin_session *s, const uint8_t *packet, size_t length)
{
    return 0;
}

static int send_data(moat_plugin_session *s, uint16_t id, uint32_t ppid, const uint8_t *data,
                     size_t length)
{
    return 0;
}

static void push_event(moat_plugin_session *s, const char *json) {}
static void close_session(moat_plugin_session *s) {}

static uint64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static const moat_gateway_calls calls = {
    .send_rtp = send_rtp,
    .send_rtcp = send_rtcp,
    .send_data = send_data,
    .push_event = push_event,
    .close_session = close_session,
    .now_us = now_us,
};

static size_t packet(uint8_t *p, uint32_t ssrc, uint16_t seq, uint8_t pt, char mid, size_t payload)
{
    memset(p, 0, 20);
    p[0] = 0x90;
    p[1] = pt;
    p[2] = (uint8_t)(seq >> 8);
    p[3] = (uint8_t)seq;
    p[8] = (uint8_t)(ssrc >> 24);
    p[9] = (uint8_t)(ssrc >> 16);
    p[10] = (uint8_t)(ssrc >> 8);
    p[11] = (uint8_t)ssrc;
    p[12] = 0xBE;
    p[13] = 0xDE;
    p[15] = 1;
    p[16] = 3 << 4; /* mid, one byte */
    p[17] = (uint8_t)mid;
    memset(p + 20, 0x5a, payload);
    return 20 + payload;
}

double echo_path_ns(unsigned packets)
{
    const moat_plugin *plugin = moat_plugin_entry();
    plugin->init(&calls);
    moat_media_info media[2];
    memset(media, 0, sizeof media);
    for (int i = 0; i < 2; i++) {
        media[i].kind = i ? MOAT_MEDIA_KIND_VIDEO : MOAT_MEDIA_KIND_AUDIO;
        media[i].mid[0] = (char)('0' + i);
        media[i].peer_sends = media[i].peer_receives = true;
        media[i].local_ssrc = 0xA000u + (uint32_t)i;
        media[i].payload_types[0] = i ? 96 : 111;
        media[i].n_payload_types = 1;
        media[i].mid_extension_id = 3;
#if MOAT_PLUGIN_API_VERSION >= 2
        media[i].extensions.mid = 3;
#endif
    }
    moat_session_info info = {.session_id = "bench", .media = media, .n_media = 2};
    static moat_plugin_session session;
    const char *error = NULL;
    void *state = plugin->attach(&session, &info, &error);
#if MOAT_PLUGIN_API_VERSION >= 2
    moat_rtp_demux demux;
    moat_rtp_demux_init(&demux, media, 2);
#endif
    uint8_t buffer[2048];
    uint64_t start = now_us();
    for (unsigned i = 0; i < packets; i++) {
        bool video = (i % 4) != 0; /* three video packets per audio one */
        size_t length = packet(buffer, video ? 0x2222 : 0x1111, (uint16_t)i, video ? 96 : 111,
                               video ? '1' : '0', video ? 1100 : 100);
        moat_rtp_header h; /* the core's own parse in the receive path */
        if (moat_rtp_parse(buffer, length, &h) != MOAT_RTP_OK)
            continue;
#if MOAT_PLUGIN_API_VERSION >= 2
        moat_rtp_packet p;
        moat_rtp_demux_parsed(&demux, buffer, length, sizeof buffer, &h, 0, &p);
        plugin->on_media(state, &p);
#else
        plugin->on_rtp(state, buffer, length, sizeof buffer);
#endif
    }
    uint64_t elapsed = now_us() - start;
    plugin->detach(state);
    plugin->destroy();
    return session.sent ? (double)elapsed * 1000.0 / packets : -1.0;
}

/* The legitimate media patterns: packet sizes, timing, timestamps, markers,
 * keyframe bursts, and the probe each packet carries. */
#include "rtp_probe.h"
#include "rtp_source.h"

#include "rtp/rtp_packet.h"

#include <glib.h>

static void test_g711(void)
{
    rtp_source s;
    rtp_source_init(&s, FLOOD_MEDIA_G711, 0, 0x1234, 1000);
    g_assert_false(rtp_source_frame_due(&s, 999));
    uint32_t first_timestamp = 0;
    uint16_t first_sequence = s.sequence;
    for (int i = 0; i < 100; i++) {
        uint64_t now = 1000 + (uint64_t)i * 20000;
        g_assert_true(rtp_source_frame_due(&s, now));
        rtp_frame frame;
        rtp_source_next_frame(&s, now, &frame);
        g_assert_false(rtp_source_frame_due(&s, now));
        g_assert_cmpuint(frame.n_packets, ==, 1);
        uint8_t packet[1500];
        size_t length = rtp_source_write(&s, &frame, 0, now, packet, sizeof packet);
        g_assert_cmpuint(length, ==, 172);
        moat_rtp_header h;
        g_assert_cmpint(moat_rtp_parse(packet, length, &h), ==, MOAT_RTP_OK);
        g_assert_cmpuint(h.payload_type, ==, 0);
        g_assert_cmpuint(h.ssrc, ==, 0x1234);
        g_assert_cmpuint(h.sequence, ==, (uint16_t)(first_sequence + i));
        if (i == 0)
            first_timestamp = h.timestamp;
        g_assert_cmpuint(h.timestamp, ==, first_timestamp + 160u * (uint32_t)i);
        uint64_t sent;
        g_assert_true(rtp_probe_read(packet + h.payload_offset, h.payload_length, 0, &sent));
        g_assert_cmpuint(sent, ==, now);
    }
}

static void test_opus_sizes_vary(void)
{
    rtp_source s;
    rtp_source_init(&s, FLOOD_MEDIA_OPUS, 111, 7, 0);
    size_t smallest = 10000, largest = 0;
    for (int i = 0; i < 200; i++) {
        rtp_frame frame;
        rtp_source_next_frame(&s, (uint64_t)i * 20000, &frame);
        uint8_t packet[1500];
        size_t length = rtp_source_write(&s, &frame, 0, 0, packet, sizeof packet);
        smallest = MIN(smallest, length);
        largest = MAX(largest, length);
        g_assert_cmpuint(packet[12], ==, 0xFC); /* CELT 20 ms TOC */
    }
    g_assert_cmpuint(smallest, >=, 12 + 80);
    g_assert_cmpuint(largest, <=, 12 + 160);
    g_assert_cmpuint(largest - smallest, >, 30);
    g_assert_cmpuint(s.timestamp_step, ==, 960);
}

static void test_video_keyframe_bursts(void)
{
    rtp_source s;
    rtp_source_init(&s, FLOOD_MEDIA_VIDEO, 96, 9, 0);
    size_t keyframes = 0, max_delta_packets = 0;
    for (int i = 0; i < 200; i++) {
        if (i == 150)
            rtp_source_request_keyframe(&s);
        rtp_frame frame;
        rtp_source_next_frame(&s, (uint64_t)i * 33333, &frame);
        if (i == 0 || i == 90 || i == 150)
            g_assert_true(frame.keyframe);
        if (frame.keyframe) {
            keyframes++;
            g_assert_cmpuint(frame.n_packets, >=, 20);
        } else {
            max_delta_packets = MAX(max_delta_packets, frame.n_packets);
        }
        for (size_t p = 0; p < frame.n_packets; p++) {
            uint8_t packet[1500];
            size_t length = rtp_source_write(&s, &frame, p, 0, packet, sizeof packet);
            g_assert_cmpuint(length, <=, 12 + RTP_SOURCE_MAX_PAYLOAD);
            moat_rtp_header h;
            g_assert_cmpint(moat_rtp_parse(packet, length, &h), ==, MOAT_RTP_OK);
            g_assert_cmpint(h.marker, ==, p + 1 == frame.n_packets);
            g_assert_cmpuint(h.timestamp, ==, frame.timestamp);
        }
    }
    /* 0, 90, and the request at 150, which restarts the 90-frame period. */
    g_assert_cmpuint(keyframes, ==, 3);
    g_assert_cmpuint(max_delta_packets, <=, 5);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rtp_source/g711", test_g711);
    g_test_add_func("/rtp_source/opus", test_opus_sizes_vary);
    g_test_add_func("/rtp_source/video", test_video_keyframe_bursts);
    return g_test_run();
}

/* The fan-out publisher's paced media: rates, sizes, one packet per due
 * time (no bursts), markers and timestamps per frame, the keyframe at the
 * start, and a restarted schedule after a long stall. */
#include "sfu_source.h"

#include "rtp/rtp_packet.h"

#include <glib.h>

static void run_one_second(sfu_source *s, uint64_t start, unsigned *audio, unsigned *video,
                           unsigned *markers)
{
    *audio = *video = *markers = 0;
    for (uint64_t now = start; now < start + 1000000; now += 100) {
        sfu_stream *stream = sfu_source_due(s, now);
        if (stream == NULL)
            continue;
        uint8_t packet[1500];
        size_t length = sfu_source_write(s, stream, now, packet, sizeof packet);
        moat_rtp_header h;
        g_assert_cmpint(moat_rtp_parse(packet, length, &h), ==, MOAT_RTP_OK);
        if (stream->video) {
            g_assert_cmpuint(length, ==, SFU_VIDEO_PACKET_LENGTH);
            g_assert_cmpuint(h.payload_type, ==, 96);
            *markers += h.marker;
            (*video)++;
        } else {
            g_assert_cmpuint(length, ==, SFU_AUDIO_PACKET_LENGTH);
            g_assert_cmpuint(h.payload_type, ==, 111);
            (*audio)++;
        }
        /* Paced: the stream's next packet is a whole interval away. */
        g_assert_cmpuint(stream->next_us, >, now);
    }
}

static void test_rates_and_frames(void)
{
    sfu_source s;
    sfu_source_init(&s, 0xA0, 111, 0xB0, 96, 0, 0);
    unsigned audio, video, markers;
    run_one_second(&s, 0, &audio, &video, &markers);
    g_assert_cmpuint(audio, >=, SFU_AUDIO_PPS - 1);
    g_assert_cmpuint(audio, <=, SFU_AUDIO_PPS + 1);
    g_assert_cmpuint(video, >=, SFU_VIDEO_PPS - 1);
    g_assert_cmpuint(video, <=, SFU_VIDEO_PPS + 1);
    g_assert_cmpuint(markers, >=, 29); /* five packets per 30 fps frame */
    g_assert_cmpuint(markers, <=, 31);
}

static void test_first_frame_is_a_keyframe(void)
{
    sfu_source s;
    sfu_source_init(&s, 1, 111, 2, 96, 0, 0);
    uint8_t packet[1500];
    size_t length = sfu_source_write(&s, &s.video, 0, packet, sizeof packet);
    moat_rtp_header h;
    g_assert_cmpint(moat_rtp_parse(packet, length, &h), ==, MOAT_RTP_OK);
    const uint8_t *payload = packet + h.payload_offset;
    g_assert_cmphex(payload[0], ==, 0x10);        /* VP8 descriptor: start of partition */
    g_assert_cmphex(payload[1] & 0x01, ==, 0x00); /* P bit clear: keyframe */
    g_assert_cmphex(payload[4], ==, 0x9d);        /* start code */
}

static void test_stall_restarts_the_schedule(void)
{
    sfu_source s;
    sfu_source_init(&s, 1, 111, 2, 96, 0, 0);
    uint8_t packet[1500];
    uint64_t late = 5000000; /* five seconds without sending */
    sfu_stream *stream = sfu_source_due(&s, late);
    g_assert_nonnull(stream);
    sfu_source_write(&s, stream, late, packet, sizeof packet);
    g_assert_cmpuint(stream->next_us, >, late);
    g_assert_cmpuint(sfu_source_write(&s, stream, late, packet, 10), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tools/sfu-source/rates-and-frames", test_rates_and_frames);
    g_test_add_func("/tools/sfu-source/first-frame-keyframe", test_first_frame_is_a_keyframe);
    g_test_add_func("/tools/sfu-source/stall-restarts", test_stall_restarts_the_schedule);
    return g_test_run();
}

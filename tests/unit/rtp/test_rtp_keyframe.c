/* Keyframe detection in VP8, VP9 and H.264 payloads (rtp/rtp_keyframe.h):
 * keyframes as encoders packetize them, delta frames, continuation packets
 * and truncated descriptors. */
#include <glib.h>
#include <string.h>

#include "rtp/rtp_keyframe.h"

static void test_codec_names(void)
{
    g_assert_cmpint(moat_video_codec_from_name("vp8"), ==, MOAT_VIDEO_CODEC_VP8);
    g_assert_cmpint(moat_video_codec_from_name("VP9"), ==, MOAT_VIDEO_CODEC_VP9);
    g_assert_cmpint(moat_video_codec_from_name("H264"), ==, MOAT_VIDEO_CODEC_H264);
    g_assert_cmpint(moat_video_codec_from_name("AV1"), ==, MOAT_VIDEO_CODEC_UNKNOWN);
}

static void test_vp8(void)
{
    moat_keyframe_info info;
    /* X=1 S=1 PID=0; I with a 15-bit picture id, T/K byte; a keyframe of
     * 1280x720 (start code 9d 01 2a). */
    const uint8_t key[] = {0x90, 0xa0, 0x80, 0x01, 0x00, 0x50, 0x42, 0x00,
                           0x9d, 0x01, 0x2a, 0x00, 0x05, 0xd0, 0x02, 0x00};
    g_assert_true(moat_rtp_keyframe(MOAT_VIDEO_CODEC_VP8, key, sizeof key, &info));
    g_assert_cmpuint(info.width, ==, 1280);
    g_assert_cmpuint(info.height, ==, 720);
    /* The same frame's second packet (S=0), and a delta frame (P=1). */
    uint8_t other[sizeof key];
    memcpy(other, key, sizeof key);
    other[0] = 0x80;
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_VP8, other, sizeof other, &info));
    memcpy(other, key, sizeof key);
    other[5] = 0x51;
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_VP8, other, sizeof other, &info));
    /* Without the extension byte: the payload header follows at once; a
     * keyframe too short for its size still counts, with size unknown. */
    const uint8_t bare[] = {0x10, 0x00, 0x00, 0x00};
    g_assert_true(moat_rtp_keyframe(MOAT_VIDEO_CODEC_VP8, bare, sizeof bare, &info));
    g_assert_cmpuint(info.width, ==, 0);
    /* Every truncation of the keyframe is safe. */
    for (size_t n = 0; n < 6; n++)
        g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_VP8, key, n, &info));
}

static void test_vp9(void)
{
    moat_keyframe_info info;
    /* I=1 (7-bit id) B=1 V=1; SS: one spatial layer, Y, 640x360. */
    const uint8_t key[] = {0x8a, 0x05, 0x10, 0x02, 0x80, 0x01, 0x68, 0x00};
    g_assert_true(moat_rtp_keyframe(MOAT_VIDEO_CODEC_VP9, key, sizeof key, &info));
    g_assert_cmpuint(info.width, ==, 640);
    g_assert_cmpuint(info.height, ==, 360);
    const uint8_t delta[] = {0xca, 0x05}; /* P=1 */
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_VP9, delta, sizeof delta, &info));
    const uint8_t middle[] = {0x80, 0x05}; /* B=0 */
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_VP9, middle, sizeof middle, &info));
    /* L=1 non-flexible: SID 1 is not the base layer; SID 0 is. */
    const uint8_t upper[] = {0xa8, 0x05, 0x02, 0x00};
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_VP9, upper, sizeof upper, &info));
    const uint8_t base[] = {0xa8, 0x05, 0x00, 0x00};
    g_assert_true(moat_rtp_keyframe(MOAT_VIDEO_CODEC_VP9, base, sizeof base, &info));
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_VP9, base, 2, &info));
}

static void test_h264(void)
{
    moat_keyframe_info info;
    const uint8_t idr[] = {0x65, 0x88};
    const uint8_t slice[] = {0x41, 0x9a};
    g_assert_true(moat_rtp_keyframe(MOAT_VIDEO_CODEC_H264, idr, sizeof idr, &info));
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_H264, slice, sizeof slice, &info));
    /* STAP-A with SPS and PPS (as browsers send before an IDR). */
    const uint8_t stap[] = {0x18, 0x00, 0x02, 0x67, 0x42, 0x00, 0x02, 0x68, 0xce};
    g_assert_true(moat_rtp_keyframe(MOAT_VIDEO_CODEC_H264, stap, sizeof stap, &info));
    const uint8_t stap_delta[] = {0x18, 0x00, 0x02, 0x41, 0x9a};
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_H264, stap_delta, sizeof stap_delta, &info));
    const uint8_t stap_bad[] = {0x18, 0x00, 0x09, 0x67};
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_H264, stap_bad, sizeof stap_bad, &info));
    /* FU-A: the first fragment of an IDR, then a middle one. */
    const uint8_t fu_start[] = {0x7c, 0x85, 0x00};
    const uint8_t fu_middle[] = {0x7c, 0x05, 0x00};
    g_assert_true(moat_rtp_keyframe(MOAT_VIDEO_CODEC_H264, fu_start, sizeof fu_start, &info));
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_H264, fu_middle, sizeof fu_middle, &info));
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_H264, fu_start, 1, &info));
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_UNKNOWN, idr, sizeof idr, &info));
    g_assert_false(moat_rtp_keyframe(MOAT_VIDEO_CODEC_H264, NULL, 0, &info));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/keyframe/codec-names", test_codec_names);
    g_test_add_func("/keyframe/vp8", test_vp8);
    g_test_add_func("/keyframe/vp9", test_vp9);
    g_test_add_func("/keyframe/h264", test_h264);
    return g_test_run();
}

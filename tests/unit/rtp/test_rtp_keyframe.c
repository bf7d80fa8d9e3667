/* Keyframe detection in VP8, VP9 and H.264 payloads (rtp/rtp_keyframe.h):
 * keyframes as encoders packetize them, delta frames, continuation packets
 * and truncated descriptors; picture sizes from H.264 SPSs (rtp/h264_sps.h). */
#include <glib.h>
#include <string.h>

#include "rtp/h264_sps.h"
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

/* SPSs as x264 writes them (GStreamer x264enc): High 320x180 (cropped from
 * 12 macroblock rows), Constrained Baseline 1280x720, Main 640x360; with
 * emulation prevention bytes. */
static const uint8_t sps_320[] = {0x67, 0x64, 0x00, 0x14, 0xac, 0xd9, 0x41, 0x41, 0x9f, 0x9f,
                                  0x01, 0x6a, 0x0c, 0x0c, 0x0d, 0x4a, 0x00, 0x00, 0x03, 0x00,
                                  0x02, 0x00, 0x00, 0x03, 0x00, 0x79, 0x1e, 0x28, 0x53, 0x2c};
static const uint8_t sps_1280[] = {0x67, 0x42, 0xc0, 0x1f, 0xd9, 0x00, 0x50, 0x05, 0xbb,
                                   0x01, 0x6a, 0x02, 0x02, 0x02, 0x80, 0x00, 0x00, 0x03,
                                   0x00, 0x80, 0x00, 0x00, 0x1e, 0x47, 0x8c, 0x19, 0x24};
static const uint8_t sps_640[] = {0x67, 0x4d, 0x40, 0x1e, 0xec, 0xa0, 0x50, 0x17, 0xfc, 0xb8,
                                  0x0b, 0x50, 0x60, 0x60, 0x6a, 0x50, 0x00, 0x00, 0x03, 0x00,
                                  0x10, 0x00, 0x00, 0x03, 0x03, 0xc8, 0xf1, 0x62, 0xd9, 0x60};

static void check_sps(const uint8_t *sps, size_t length, uint16_t width, uint16_t height)
{
    moat_keyframe_info info;
    g_assert_true(moat_rtp_keyframe(MOAT_VIDEO_CODEC_H264, sps, length, &info));
    g_assert_cmpuint(info.width, ==, width);
    g_assert_cmpuint(info.height, ==, height);
    uint16_t w, h;
    g_assert_true(moat_h264_sps_size(sps, length, &w, &h));
    /* Truncated: no size (never a read past the end, under ASan). */
    for (size_t n = 0; n < 8; n++)
        g_assert_false(moat_h264_sps_size(sps, n, &w, &h));
    /* In an STAP-A before a PPS, as browsers send them. */
    uint8_t stap[64] = {0x18, 0x00, (uint8_t)length};
    memcpy(stap + 3, sps, length);
    const uint8_t pps[] = {0x00, 0x02, 0x68, 0xce};
    memcpy(stap + 3 + length, pps, sizeof pps);
    g_assert_true(moat_rtp_keyframe(MOAT_VIDEO_CODEC_H264, stap, 3 + length + sizeof pps, &info));
    g_assert_cmpuint(info.width, ==, width);
    g_assert_cmpuint(info.height, ==, height);
}

static void test_h264_sps(void)
{
    check_sps(sps_320, sizeof sps_320, 320, 180);
    check_sps(sps_1280, sizeof sps_1280, 1280, 720);
    check_sps(sps_640, sizeof sps_640, 640, 360);
    /* Not an SPS; a huge Exp-Golomb run. */
    uint16_t w, h;
    const uint8_t pps[] = {0x68, 0xce, 0x38, 0x80};
    g_assert_false(moat_h264_sps_size(pps, sizeof pps, &w, &h));
    const uint8_t zeros[] = {0x67, 0x42, 0xc0, 0x1f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    g_assert_false(moat_h264_sps_size(zeros, sizeof zeros, &w, &h));
    /* High profile with a scaling matrix whose delta_scale code is
     * 4294967293 (out of -128..127): refused; it overflowed an int before
     * (UBSan aborted the gateway on one publisher packet). */
    const uint8_t scaling[] = {0x67, 0x64, 0x00, 0x1f, 0xad, 0x80, 0x00, 0x00, 0x00,
                               0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff};
    g_assert_false(moat_h264_sps_size(scaling, sizeof scaling, &w, &h));
    moat_keyframe_info info;
    g_assert_true(moat_rtp_keyframe(MOAT_VIDEO_CODEC_H264, scaling, sizeof scaling, &info));
    g_assert_cmpuint(info.width, ==, 0);
    /* The bounds of delta_scale (-128..127): code 256 (-128) parses, code
     * 255 (+128) does not (a 1280x720 High-profile SPS whose first scaling
     * list starts with that code). */
    const uint8_t minus_128[] = {0x67, 0x64, 0x00, 0x1f, 0xad, 0x80, 0x40, 0x7f,
                                 0xff, 0x80, 0xb4, 0x02, 0x80, 0x2d, 0xc8};
    g_assert_true(moat_h264_sps_size(minus_128, sizeof minus_128, &w, &h));
    g_assert_cmpuint(w, ==, 1280);
    g_assert_cmpuint(h, ==, 720);
    const uint8_t plus_128[] = {0x67, 0x64, 0x00, 0x1f, 0xad, 0x80, 0x40, 0x3f,
                                0xff, 0x80, 0xb4, 0x02, 0x80, 0x2d, 0xc8};
    g_assert_false(moat_h264_sps_size(plus_128, sizeof plus_128, &w, &h));
    const uint8_t plus_127[] = {0x67, 0x64, 0x00, 0x1f, 0xad, 0x80, 0xfe, 0xff,
                                0xfe, 0x02, 0xd0, 0x0a, 0x00, 0xb7, 0x20};
    g_assert_true(moat_h264_sps_size(plus_127, sizeof plus_127, &w, &h));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/keyframe/codec-names", test_codec_names);
    g_test_add_func("/keyframe/vp8", test_vp8);
    g_test_add_func("/keyframe/vp9", test_vp9);
    g_test_add_func("/keyframe/h264", test_h264);
    g_test_add_func("/keyframe/h264-sps", test_h264_sps);
    return g_test_run();
}

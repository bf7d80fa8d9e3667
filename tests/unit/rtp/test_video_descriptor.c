/* VP8 and VP9 payload descriptors (rtp/video_descriptor.h): where the
 * picture id and TL0PICIDX are, in-place rewriting, and the mapping that
 * keeps them continuous across source switches, wraparounds included. */
#include <glib.h>
#include <string.h>

#include "rtp/video_descriptor.h"

static void test_vp8_parse(void)
{
    moat_video_descriptor d;
    /* X S; I L T; 15-bit picture id 0x1234; TL0PICIDX 7; TID 2. */
    const uint8_t full[] = {0x90, 0xe0, 0x92, 0x34, 0x07, 0x80, 0x00};
    g_assert_cmpint(moat_video_descriptor_parse(MOAT_VIDEO_CODEC_VP8, full, sizeof full, &d), ==,
                    MOAT_RTP_OK);
    g_assert_cmpuint(d.picture_id_bits, ==, 15);
    g_assert_cmpuint(d.picture_id, ==, 0x1234);
    g_assert_cmpuint(d.picture_id_offset, ==, 2);
    g_assert_true(d.has_tl0picidx);
    g_assert_cmpuint(d.tl0picidx, ==, 7);
    g_assert_cmpuint(d.tl0picidx_offset, ==, 4);
    g_assert_true(d.has_tid);
    g_assert_cmpuint(d.tid, ==, 2);
    g_assert_false(d.layer_sync);
    g_assert_true(d.begins_frame);
    g_assert_cmpuint(d.length, ==, 6);
    /* TID 1 with Y (a layer sync frame); S with partition 1 does not begin
     * the frame, S with partition 0 without X does, no S does not. */
    const uint8_t sync[] = {0x90, 0x20, 0x60};
    g_assert_cmpint(moat_video_descriptor_parse(MOAT_VIDEO_CODEC_VP8, sync, sizeof sync, &d), ==,
                    MOAT_RTP_OK);
    g_assert_true(d.has_tid && d.layer_sync && d.begins_frame);
    g_assert_cmpuint(d.tid, ==, 1);
    const uint8_t partition1[] = {0x11, 0x00};
    g_assert_cmpint(
        moat_video_descriptor_parse(MOAT_VIDEO_CODEC_VP8, partition1, sizeof partition1, &d), ==,
        MOAT_RTP_OK);
    g_assert_false(d.begins_frame);
    const uint8_t middle[] = {0x00, 0x00};
    g_assert_cmpint(moat_video_descriptor_parse(MOAT_VIDEO_CODEC_VP8, middle, sizeof middle, &d),
                    ==, MOAT_RTP_OK);
    g_assert_false(d.begins_frame);
    /* 7-bit picture id, no TL0PICIDX, a K byte only. */
    const uint8_t short_id[] = {0x80, 0x90, 0x45, 0x1f, 0xaa};
    g_assert_cmpint(
        moat_video_descriptor_parse(MOAT_VIDEO_CODEC_VP8, short_id, sizeof short_id, &d), ==,
        MOAT_RTP_OK);
    g_assert_cmpuint(d.picture_id_bits, ==, 7);
    g_assert_cmpuint(d.picture_id, ==, 0x45);
    g_assert_false(d.has_tl0picidx);
    g_assert_false(d.has_tid);
    g_assert_cmpuint(d.length, ==, 4);
    /* No extension: no ids. */
    const uint8_t bare[] = {0x10, 0x00};
    g_assert_cmpint(moat_video_descriptor_parse(MOAT_VIDEO_CODEC_VP8, bare, sizeof bare, &d), ==,
                    MOAT_RTP_OK);
    g_assert_cmpuint(d.picture_id_bits, ==, 0);
    g_assert_cmpuint(d.length, ==, 1);
    /* Every truncation of the full descriptor is refused. */
    for (size_t n = 0; n < 6; n++)
        g_assert_cmpint(moat_video_descriptor_parse(MOAT_VIDEO_CODEC_VP8, full, n, &d), ==,
                        MOAT_RTP_ERR_TRUNCATED);
    g_assert_cmpint(moat_video_descriptor_parse(MOAT_VIDEO_CODEC_H264, full, sizeof full, &d), ==,
                    MOAT_RTP_ERR_TYPE);
}

static void test_vp9_parse(void)
{
    moat_video_descriptor d;
    /* I L B (non-flexible); picture id 0x7ffe; TID 1 SID 0; TL0PICIDX 255. */
    const uint8_t nonflex[] = {0xa8, 0xff, 0xfe, 0x20, 0xff, 0x00};
    g_assert_cmpint(moat_video_descriptor_parse(MOAT_VIDEO_CODEC_VP9, nonflex, sizeof nonflex, &d),
                    ==, MOAT_RTP_OK);
    g_assert_cmpuint(d.picture_id_bits, ==, 15);
    g_assert_cmpuint(d.picture_id, ==, 0x7ffe);
    g_assert_true(d.has_tid);
    g_assert_cmpuint(d.tid, ==, 1);
    g_assert_false(d.layer_sync);
    g_assert_true(d.begins_frame);
    g_assert_true(d.has_tl0picidx);
    g_assert_cmpuint(d.tl0picidx, ==, 255);
    g_assert_cmpuint(d.tl0picidx_offset, ==, 4);
    g_assert_cmpuint(d.length, ==, 5);
    /* Flexible mode (F): no TL0PICIDX. */
    const uint8_t flex[] = {0xb8, 0x05, 0x00, 0x02};
    g_assert_cmpint(moat_video_descriptor_parse(MOAT_VIDEO_CODEC_VP9, flex, sizeof flex, &d), ==,
                    MOAT_RTP_OK);
    g_assert_cmpuint(d.picture_id_bits, ==, 7);
    g_assert_cmpuint(d.picture_id, ==, 5);
    g_assert_false(d.has_tl0picidx);
    for (size_t n = 0; n < 5; n++)
        g_assert_cmpint(moat_video_descriptor_parse(MOAT_VIDEO_CODEC_VP9, nonflex, n, &d), ==,
                        MOAT_RTP_ERR_TRUNCATED);
}

static void test_write(void)
{
    moat_video_descriptor d;
    uint8_t vp8[] = {0x90, 0xe0, 0x92, 0x34, 0x07, 0x80, 0x00};
    g_assert_cmpint(moat_video_descriptor_parse(MOAT_VIDEO_CODEC_VP8, vp8, sizeof vp8, &d), ==,
                    MOAT_RTP_OK);
    moat_video_descriptor_write(vp8, &d, 0x7fff, 200);
    const uint8_t want[] = {0x90, 0xe0, 0xff, 0xff, 200, 0x80, 0x00};
    g_assert_cmpmem(vp8, sizeof vp8, want, sizeof want);
    /* A 7-bit id stays 7 bits (the M bit clear). */
    uint8_t seven[] = {0x80, 0x80, 0x45, 0xaa};
    g_assert_cmpint(moat_video_descriptor_parse(MOAT_VIDEO_CODEC_VP8, seven, sizeof seven, &d), ==,
                    MOAT_RTP_OK);
    moat_video_descriptor_write(seven, &d, 0x1ff, 0);
    const uint8_t want7[] = {0x80, 0x80, 0x7f, 0xaa};
    g_assert_cmpmem(seven, sizeof seven, want7, sizeof want7);
}

static moat_video_descriptor ids(uint8_t bits, uint16_t picture, uint8_t tl0)
{
    return (moat_video_descriptor){
        .picture_id_bits = bits, .picture_id = picture, .has_tl0picidx = true, .tl0picidx = tl0};
}

static void apply(moat_picture_map *m, bool changed, moat_video_descriptor d, uint16_t picture,
                  uint8_t tl0)
{
    uint16_t p;
    uint8_t t;
    moat_picture_map_apply(m, changed, &d, &p, &t);
    g_assert_cmpuint(p, ==, picture);
    g_assert_cmpuint(t, ==, tl0);
}

static void test_map_switch(void)
{
    moat_picture_map m = {0};
    /* The first source passes unchanged, several packets per picture. */
    apply(&m, false, ids(15, 100, 10), 100, 10);
    apply(&m, false, ids(15, 100, 10), 100, 10);
    apply(&m, false, ids(15, 101, 11), 101, 11);
    /* A layer switch to a source far away: it continues at the next
     * picture and TL0PICIDX, and its own steps follow. */
    apply(&m, true, ids(15, 20000, 200), 102, 12);
    apply(&m, false, ids(15, 20000, 200), 102, 12);
    apply(&m, false, ids(15, 20001, 200), 103, 12);
    apply(&m, false, ids(15, 20002, 201), 104, 13);
    /* A late packet of the same source keeps its mapping and does not
     * move the newest id back: the next switch continues after 104. */
    apply(&m, false, ids(15, 19999, 199), 101, 11);
    apply(&m, true, ids(15, 5, 3), 105, 14);
    /* And back to the first source (a switch back down). */
    apply(&m, true, ids(15, 103, 13), 106, 15);
}

static void test_map_wrap(void)
{
    moat_picture_map m = {0};
    /* The source wraps at 2^15 and TL0PICIDX at 256: so does the output. */
    apply(&m, false, ids(15, 0x7ffe, 254), 0x7ffe, 254);
    apply(&m, false, ids(15, 0x7fff, 255), 0x7fff, 255);
    apply(&m, false, ids(15, 0, 0), 0, 0);
    /* A switch right after the wrap continues from 0, not from 0x7fff. */
    apply(&m, true, ids(15, 300, 40), 1, 1);
    /* A switch whose delta wraps: the output crosses 2^15 smoothly. */
    moat_picture_map w = {0};
    apply(&w, false, ids(15, 0x7ff0, 250), 0x7ff0, 250);
    apply(&w, true, ids(15, 3, 7), 0x7ff1, 251);
    for (uint16_t i = 1; i <= 20; i++)
        apply(&w, false, ids(15, (uint16_t)(3 + i), (uint8_t)(7 + i)), (0x7ff1 + i) & 0x7fff,
              (uint8_t)(251 + i));
    /* 7-bit sources: continuity modulo 128 on the wire. */
    moat_picture_map s = {0};
    moat_video_descriptor d = ids(7, 126, 0);
    uint16_t p;
    uint8_t t;
    moat_picture_map_apply(&s, false, &d, &p, &t);
    d.picture_id = 127;
    moat_picture_map_apply(&s, false, &d, &p, &t);
    d.picture_id = 0;
    moat_picture_map_apply(&s, false, &d, &p, &t);
    g_assert_cmpuint(p & 0x7f, ==, 0);
    d.picture_id = 60;
    moat_picture_map_apply(&s, true, &d, &p, &t);
    g_assert_cmpuint(p & 0x7f, ==, 1);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/video-descriptor/vp8", test_vp8_parse);
    g_test_add_func("/video-descriptor/vp9", test_vp9_parse);
    g_test_add_func("/video-descriptor/write", test_write);
    g_test_add_func("/video-descriptor/map-switch", test_map_switch);
    g_test_add_func("/video-descriptor/map-wrap", test_map_wrap);
    return g_test_run();
}

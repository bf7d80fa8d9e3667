/* The PNG encoder and the chart canvas: the file read back chunk by chunk,
 * CRCs checked and pixels inflated must be the image drawn. */
#include "plot_canvas.h"
#include "png_writer.h"

#include "rtp/rtp_bytes.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <zlib.h>

static void test_round_trip(void)
{
    plot_canvas canvas;
    g_assert_cmpint(plot_canvas_init(&canvas, 40, 30, 0xFFFFFF), ==, 0);
    plot_line(&canvas, 0, 0, 39, 29, 0xFF0000, 1);
    plot_text(&canvas, 2, 20, "1%", 0x0000FF, 1);
    plot_rect(&canvas, 30, 2, 4, 4, 0x00FF00);
    g_assert_cmpint(plot_text_width("1%", 1), ==, 11);

    char *dir = g_dir_make_tmp("png-XXXXXX", NULL);
    char *path = g_build_filename(dir, "chart.png", NULL);
    char error[256] = "";
    g_assert_cmpint(png_write_rgb(path, canvas.rgb, 40, 30, error, sizeof error), ==, 0);

    gchar *data;
    gsize length;
    g_assert_true(g_file_get_contents(path, &data, &length, NULL));
    const uint8_t *p = (const uint8_t *)data;
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    g_assert_cmpmem(p, 8, signature, 8);
    GByteArray *idat = g_byte_array_new();
    size_t offset = 8;
    bool ended = false;
    while (offset + 12 <= length && !ended) {
        uint32_t chunk = moat_rd32(p + offset);
        const uint8_t *type = p + offset + 4;
        g_assert_cmpuint(offset + 12 + chunk, <=, length);
        uint32_t crc = (uint32_t)crc32(0L, type, 4 + chunk);
        g_assert_cmpuint(moat_rd32(type + 4 + chunk), ==, crc);
        if (memcmp(type, "IHDR", 4) == 0) {
            g_assert_cmpuint(moat_rd32(type + 4), ==, 40);
            g_assert_cmpuint(moat_rd32(type + 8), ==, 30);
            g_assert_cmpuint(type[12], ==, 8);
            g_assert_cmpuint(type[13], ==, 2);
        } else if (memcmp(type, "IDAT", 4) == 0) {
            g_byte_array_append(idat, type + 4, chunk);
        } else if (memcmp(type, "IEND", 4) == 0) {
            ended = true;
        }
        offset += 12 + chunk;
    }
    g_assert_true(ended);
    g_assert_cmpuint(offset, ==, length);
    uint8_t raw[(40 * 3 + 1) * 30];
    uLongf raw_length = sizeof raw;
    g_assert_cmpint(uncompress(raw, &raw_length, idat->data, idat->len), ==, Z_OK);
    g_assert_cmpuint(raw_length, ==, sizeof raw);
    for (int y = 0; y < 30; y++) {
        g_assert_cmpuint(raw[y * 121], ==, 0);
        g_assert_cmpmem(raw + y * 121 + 1, 120, canvas.rgb + y * 120, 120);
    }
    g_assert_cmpmem(raw + 1, 3, "\xFF\x00\x00", 3); /* the line starts at (0, 0) */

    g_byte_array_free(idat, TRUE);
    g_free(data);
    g_remove(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    plot_canvas_free(&canvas);
}

static void test_unwritable_path(void)
{
    uint8_t pixel[3] = {0};
    char error[256] = "";
    g_assert_cmpint(png_write_rgb("/nonexistent/dir/x.png", pixel, 1, 1, error, sizeof error), ==,
                    -1);
    g_assert_nonnull(strstr(error, "/nonexistent/dir/x.png"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/png_writer/round_trip", test_round_trip);
    g_test_add_func("/png_writer/unwritable", test_unwritable_path);
    return g_test_run();
}

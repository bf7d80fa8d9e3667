/* The RGB drawing surface of the --plot chart: clipped pixels, rectangles,
 * thick lines (Bresenham) and text in the built-in 5x7 font. */
#include "plot_canvas.h"
#include "plot_font.h"

#include <stdlib.h>
#include <string.h>

int plot_canvas_init(plot_canvas *c, int width, int height, plot_color background)
{
    c->width = width;
    c->height = height;
    c->rgb = malloc((size_t)width * (size_t)height * 3);
    if (c->rgb == NULL)
        return -1;
    plot_rect(c, 0, 0, width, height, background);
    return 0;
}

void plot_canvas_free(plot_canvas *c)
{
    free(c->rgb);
    c->rgb = NULL;
}

void plot_pixel(plot_canvas *c, int x, int y, plot_color color)
{
    if (x < 0 || y < 0 || x >= c->width || y >= c->height)
        return;
    uint8_t *p = c->rgb + ((size_t)y * (size_t)c->width + (size_t)x) * 3;
    p[0] = (uint8_t)(color >> 16);
    p[1] = (uint8_t)(color >> 8);
    p[2] = (uint8_t)color;
}

void plot_rect(plot_canvas *c, int x, int y, int width, int height, plot_color color)
{
    for (int j = y; j < y + height; j++)
        for (int i = x; i < x + width; i++)
            plot_pixel(c, i, j, color);
}

void plot_line(plot_canvas *c, int x0, int y0, int x1, int y1, plot_color color, int thickness)
{
    int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
    int dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    int half = thickness / 2;
    for (;;) {
        plot_rect(c, x0 - half, y0 - half, thickness, thickness, color);
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

void plot_text(plot_canvas *c, int x, int y, const char *text, plot_color color, int scale)
{
    for (const char *p = text; *p; p++, x += PLOT_FONT_ADVANCE * scale) {
        const uint8_t *rows = plot_font_glyph(*p);
        if (rows == NULL)
            continue;
        for (int row = 0; row < PLOT_FONT_HEIGHT; row++)
            for (int column = 0; column < PLOT_FONT_WIDTH; column++)
                if (rows[row] & (0x10 >> column))
                    plot_rect(c, x + column * scale, y + row * scale, scale, scale, color);
    }
}

int plot_text_width(const char *text, int scale)
{
    int n = (int)strlen(text);
    return n > 0 ? (n * PLOT_FONT_ADVANCE - 1) * scale : 0;
}

int plot_text_height(int scale)
{
    return PLOT_FONT_HEIGHT * scale;
}

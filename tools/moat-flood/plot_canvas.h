/* An RGB drawing surface for the --plot chart: pixels, lines, filled
 * rectangles and text in a built-in 5x7 font. Drawing outside the canvas is
 * clipped. */
#ifndef PLOT_CANVAS_H
#define PLOT_CANVAS_H

#include <stdint.h>

typedef struct {
    int width, height;
    uint8_t *rgb; /* width * height * 3 */
} plot_canvas;

/* 0xRRGGBB */
typedef uint32_t plot_color;

/* 0, or -1 when the pixels cannot be allocated. */
int plot_canvas_init(plot_canvas *c, int width, int height, plot_color background);
void plot_canvas_free(plot_canvas *c);

void plot_pixel(plot_canvas *c, int x, int y, plot_color color);
void plot_rect(plot_canvas *c, int x, int y, int width, int height, plot_color color);
/* A line `thickness` pixels wide (Bresenham with a square pen). */
void plot_line(plot_canvas *c, int x0, int y0, int x1, int y1, plot_color color, int thickness);
/* Text with its top-left corner at (x, y), each font pixel scale x scale.
 * Lower case prints as upper case; characters without a glyph as blanks. */
void plot_text(plot_canvas *c, int x, int y, const char *text, plot_color color, int scale);
int plot_text_width(const char *text, int scale);
int plot_text_height(int scale);

#endif

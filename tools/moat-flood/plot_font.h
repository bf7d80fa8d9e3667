/* A 5x7 bitmap font: digits, upper-case letters and the punctuation chart
 * labels use. */
#ifndef PLOT_FONT_H
#define PLOT_FONT_H

#include <stdint.h>

#define PLOT_FONT_WIDTH   5
#define PLOT_FONT_HEIGHT  7
#define PLOT_FONT_ADVANCE 6

/* Seven rows, the leftmost pixel in bit 4; NULL for a character without a
 * glyph (lower case is looked up as upper case). */
const uint8_t *plot_font_glyph(char c);

#endif

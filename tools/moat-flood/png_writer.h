/* A minimal PNG encoder (RFC 2083): 8-bit RGB, no interlace, filter 0 on
 * every row, one zlib-compressed IDAT chunk. */
#ifndef PNG_WRITER_H
#define PNG_WRITER_H

#include <stddef.h>
#include <stdint.h>

/* rgb holds width * height * 3 octets, rows top to bottom. 0, or -1 with a
 * message. */
int png_write_rgb(const char *path, const uint8_t *rgb, unsigned width, unsigned height,
                  char *error, size_t error_size);

#endif

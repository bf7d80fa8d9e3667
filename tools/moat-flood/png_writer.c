/* A minimal PNG encoder (RFC 2083) for the --plot chart: 8-bit RGB, filter 0
 * on every row, one zlib-compressed IDAT chunk, CRC per chunk. */
#include "png_writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Length, type, data, CRC over type and data. */
static int write_chunk(FILE *f, const char type[4], const uint8_t *data, size_t length)
{
    uint8_t header[8], crc_bytes[4];
    put32(header, (uint32_t)length);
    memcpy(header + 4, type, 4);
    uLong crc = crc32(0L, (const Bytef *)type, 4);
    if (length > 0)
        crc = crc32(crc, data, (uInt)length);
    put32(crc_bytes, (uint32_t)crc);
    if (fwrite(header, 1, 8, f) != 8 || (length > 0 && fwrite(data, 1, length, f) != length) ||
        fwrite(crc_bytes, 1, 4, f) != 4)
        return -1;
    return 0;
}

int png_write_rgb(const char *path, const uint8_t *rgb, unsigned width, unsigned height,
                  char *error, size_t error_size)
{
    size_t row = (size_t)width * 3;
    size_t raw_length = (row + 1) * height;
    uint8_t *raw = malloc(raw_length);
    uLongf packed_length = compressBound((uLong)raw_length);
    uint8_t *packed = malloc(packed_length);
    int result = -1;
    if (raw == NULL || packed == NULL) {
        snprintf(error, error_size, "out of memory for a %ux%u image", width, height);
        goto done;
    }
    for (unsigned y = 0; y < height; y++) {
        raw[y * (row + 1)] = 0; /* filter: none */
        memcpy(raw + y * (row + 1) + 1, rgb + y * row, row);
    }
    if (compress2(packed, &packed_length, raw, (uLong)raw_length, 6) != Z_OK) {
        snprintf(error, error_size, "zlib could not compress the image");
        goto done;
    }
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        snprintf(error, error_size, "cannot write %s: %s", path, strerror(errno));
        goto done;
    }
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    uint8_t ihdr[13];
    put32(ihdr, width);
    put32(ihdr + 4, height);
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 2;  /* colour type: RGB */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering */
    ihdr[12] = 0; /* no interlace */
    int status = fwrite(signature, 1, 8, f) == 8 ? 0 : -1;
    if (status == 0)
        status = write_chunk(f, "IHDR", ihdr, sizeof ihdr);
    if (status == 0)
        status = write_chunk(f, "IDAT", packed, packed_length);
    if (status == 0)
        status = write_chunk(f, "IEND", NULL, 0);
    if (fclose(f) != 0)
        status = -1;
    if (status != 0)
        snprintf(error, error_size, "cannot write %s: %s", path, strerror(errno));
    result = status;
done:
    free(raw);
    free(packed);
    return result;
}

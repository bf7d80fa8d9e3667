/* The coded picture size from an H.264 sequence parameter set (ITU-T H.264
 * 7.3.2.1.1), for rooms that show each simulcast layer's resolution. The
 * NAL unit is attacker input: reads are bounded by its length, emulation
 * prevention bytes are skipped, and every Exp-Golomb code is bounded. Pure
 * function, any thread. */
#ifndef MOAT_H264_SPS_H
#define MOAT_H264_SPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* `nal` starts with the NAL unit header (type 7). True with the cropped
 * width and height when the SPS parses. */
bool moat_h264_sps_size(const uint8_t *nal, size_t length, uint16_t *width, uint16_t *height);

#endif

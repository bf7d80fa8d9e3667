/* Test audio helpers: a sine tone, G.711 (mu-law and A-law) by hand, the
 * frequency of decoded audio by zero crossings, RTP packets. */
#ifndef MOAT_TEST_TONE_H
#define MOAT_TEST_TONE_H

#include <stddef.h>
#include <stdint.h>

/* `count` samples of a sine at `hz`, sample rate `rate`, from sample `first`. */
void tone_fill(int16_t *samples, size_t count, double hz, int rate, uint64_t first);

uint8_t tone_ulaw_encode(int16_t sample);
int16_t tone_ulaw_decode(uint8_t code);
uint8_t tone_alaw_encode(int16_t sample);
int16_t tone_alaw_decode(uint8_t code);

/* Frequency in Hz from zero crossings (with hysteresis) of `count` samples. */
double tone_frequency(const int16_t *samples, size_t count, int rate);

/* Writes a 12-byte RTP header followed by payload; returns the length. */
size_t tone_rtp(uint8_t *out, uint8_t payload_type, uint16_t sequence, uint32_t timestamp,
                uint32_t ssrc, const uint8_t *payload, size_t payload_length);

#endif

/* Test audio helpers (see tone.h). G.711 per ITU-T G.711's segment tables,
 * written from the standard's description. */
#include "tone.h"

#include <math.h>
#include <string.h>

void tone_fill(int16_t *samples, size_t count, double hz, int rate, uint64_t first)
{
    for (size_t i = 0; i < count; i++)
        samples[i] = (int16_t)(12000.0 * sin(2.0 * M_PI * hz * (double)(first + i) / rate));
}

uint8_t tone_ulaw_encode(int16_t sample)
{
    int value = sample, sign = 0;
    if (value < 0) {
        value = -value;
        sign = 0x80;
    }
    if (value > 32635)
        value = 32635;
    value += 0x84;
    int exponent = 7;
    for (int mask = 0x4000; !(value & mask) && exponent > 0; mask >>= 1)
        exponent--;
    int mantissa = (value >> (exponent + 3)) & 0x0f;
    return (uint8_t) ~(sign | exponent << 4 | mantissa);
}

int16_t tone_ulaw_decode(uint8_t code)
{
    code = (uint8_t)~code;
    int exponent = (code >> 4) & 7, mantissa = code & 0x0f;
    int value = ((mantissa << 3) + 0x84) << exponent;
    value -= 0x84;
    return (int16_t)(code & 0x80 ? -value : value);
}

uint8_t tone_alaw_encode(int16_t sample)
{
    int value = sample, sign = 0x80;
    if (value < 0) {
        value = -value - 1;
        sign = 0;
    }
    if (value > 32767)
        value = 32767;
    int exponent = 0;
    for (int v = value >> 8; v && exponent < 7; v >>= 1)
        exponent++;
    int mantissa = exponent ? (value >> (exponent + 3)) & 0x0f : (value >> 4) & 0x0f;
    return (uint8_t)((sign | exponent << 4 | mantissa) ^ 0x55);
}

int16_t tone_alaw_decode(uint8_t code)
{
    code ^= 0x55;
    int exponent = (code >> 4) & 7, mantissa = code & 0x0f;
    int value = exponent ? ((mantissa << 4) + 0x108) << (exponent - 1) : (mantissa << 4) + 8;
    return (int16_t)(code & 0x80 ? value : -value);
}

double tone_frequency(const int16_t *samples, size_t count, int rate)
{
    const int threshold = 1000;
    int state = 0; /* -1 below -threshold, 1 above threshold */
    size_t first = 0, last = 0, rises = 0;
    for (size_t i = 0; i < count; i++) {
        if (samples[i] > threshold && state <= 0) {
            if (state < 0) {
                if (!rises)
                    first = i;
                last = i;
                rises++;
            }
            state = 1;
        } else if (samples[i] < -threshold) {
            state = -1;
        }
    }
    if (rises < 2)
        return 0;
    return (double)(rises - 1) * rate / (double)(last - first);
}

size_t tone_rtp(uint8_t *out, uint8_t payload_type, uint16_t sequence, uint32_t timestamp,
                uint32_t ssrc, const uint8_t *payload, size_t payload_length)
{
    out[0] = 0x80;
    out[1] = payload_type & 0x7f;
    out[2] = (uint8_t)(sequence >> 8);
    out[3] = (uint8_t)sequence;
    for (int i = 0; i < 4; i++) {
        out[4 + i] = (uint8_t)(timestamp >> (24 - 8 * i));
        out[8 + i] = (uint8_t)(ssrc >> (24 - 8 * i));
    }
    memcpy(out + 12, payload, payload_length);
    return 12 + payload_length;
}

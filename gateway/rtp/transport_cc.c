/* Transport-wide feedback: building, parsing, recording (transport_cc.h). */
#include "rtp/transport_cc.h"

#include "rtp/rtp_bytes.h"

#include <string.h>

#define FCI_FIXED 8 /* base seq, status count, reference time, fb count */

enum { LOST = 0, SMALL = 1, LARGE = 2 };

/* The symbols and deltas (in 250 µs) of the statuses; the reference time. */
static int classify(const int64_t *arrival, size_t count, uint8_t *symbols, int32_t *deltas,
                    int32_t *reference)
{
    int64_t previous = -1;
    for (size_t i = 0; i < count; i++) {
        if (arrival[i] < 0) {
            symbols[i] = LOST;
            continue;
        }
        if (previous < 0) {
            /* floor to 64 ms; the first delta is from there */
            *reference = (int32_t)((arrival[i] / MOAT_TWCC_REF_TICK_US) & 0xffffff);
            previous = (arrival[i] / MOAT_TWCC_REF_TICK_US) * MOAT_TWCC_REF_TICK_US;
        }
        int64_t ticks = (arrival[i] - previous) / MOAT_TWCC_DELTA_TICK_US;
        if (ticks < INT16_MIN || ticks > INT16_MAX)
            return MOAT_RTP_ERR_INVALID; /* the caller splits there */
        previous += ticks * MOAT_TWCC_DELTA_TICK_US;
        deltas[i] = (int32_t)ticks;
        symbols[i] = ticks >= 0 && ticks <= 255 ? SMALL : LARGE;
    }
    return MOAT_RTP_OK;
}

/* Packet chunks: a run-length chunk for 14 or more equal symbols, else a
 * one-bit vector (14 symbols, no large delta among them) or a two-bit one
 * (7 symbols). Symbols past `count` in a vector are written as 0. */
static size_t write_chunks(const uint8_t *symbols, size_t count, uint8_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < count;) {
        size_t run = 1;
        while (i + run < count && symbols[i + run] == symbols[i] && run < 8191)
            run++;
        if (run >= 14 || i + run == count) {
            moat_wr16(out + n, (uint16_t)((symbols[i] << 13) | run));
            i += run;
        } else {
            bool large = false;
            for (size_t k = i; k < i + 14 && k < count; k++)
                large = large || symbols[k] == LARGE;
            uint16_t chunk = 0x8000;
            if (!large) {
                for (size_t k = 0; k < 14; k++)
                    if (i + k < count && symbols[i + k] == SMALL)
                        chunk |= (uint16_t)(1u << (13 - k));
                i += 14;
            } else {
                chunk |= 0x4000;
                for (size_t k = 0; k < 7; k++)
                    if (i + k < count)
                        chunk |= (uint16_t)(symbols[i + k] << (2 * (6 - k)));
                i += 7;
            }
            moat_wr16(out + n, chunk);
        }
        n += 2;
    }
    return n;
}

int moat_twcc_build(moat_rtcp_writer *w, uint32_t sender_ssrc, uint32_t media_ssrc,
                    uint16_t base_seq, const int64_t *arrival_us, size_t count, uint8_t fb_count)
{
    if (count == 0 || count > MOAT_TWCC_MAX_STATUS)
        return MOAT_RTP_ERR_INVALID;
    uint8_t symbols[MOAT_TWCC_MAX_STATUS];
    int32_t deltas[MOAT_TWCC_MAX_STATUS];
    int32_t reference = 0;
    int rc = classify(arrival_us, count, symbols, deltas, &reference);
    if (rc != MOAT_RTP_OK)
        return rc;
    uint8_t chunks[2 * MOAT_TWCC_MAX_STATUS];
    size_t chunk_bytes = write_chunks(symbols, count, chunks);
    size_t delta_bytes = 0;
    for (size_t i = 0; i < count; i++)
        delta_bytes += symbols[i] == SMALL ? 1 : symbols[i] == LARGE ? 2 : 0;
    size_t fci = FCI_FIXED + chunk_bytes + delta_bytes;
    size_t size = MOAT_RTCP_HEADER_SIZE + 8 + ((fci + 3) & ~(size_t)3);
    uint8_t *p;
    rc = moat_rtcp_writer_begin(w, MOAT_RTCP_FMT_TRANSPORT_CC, MOAT_RTCP_RTPFB, size, &p);
    if (rc != MOAT_RTP_OK)
        return rc;
    moat_wr32(p, sender_ssrc);
    moat_wr32(p + 4, media_ssrc);
    uint8_t *f = p + 8;
    moat_wr16(f, base_seq);
    moat_wr16(f + 2, (uint16_t)count);
    f[4] = (uint8_t)(reference >> 16);
    f[5] = (uint8_t)(reference >> 8);
    f[6] = (uint8_t)reference;
    f[7] = fb_count;
    memcpy(f + FCI_FIXED, chunks, chunk_bytes);
    uint8_t *d = f + FCI_FIXED + chunk_bytes;
    for (size_t i = 0; i < count; i++) {
        if (symbols[i] == SMALL) {
            *d++ = (uint8_t)deltas[i];
        } else if (symbols[i] == LARGE) {
            moat_wr16(d, (uint16_t)(int16_t)deltas[i]);
            d += 2;
        }
    }
    /* The padding octets are zero (writer_begin cleared them); RFC 3550's
     * P bit is not set: the length counts them. */
    return MOAT_RTP_OK;
}

int moat_twcc_parse(const moat_rtcp_fb *fb, moat_twcc_header *header, int64_t *arrival_us,
                    size_t max)
{
    if (fb->type != MOAT_RTCP_RTPFB || fb->fmt != MOAT_RTCP_FMT_TRANSPORT_CC)
        return MOAT_RTP_ERR_TYPE;
    const uint8_t *f = fb->fci;
    size_t length = fb->fci_length;
    if (length < FCI_FIXED)
        return MOAT_RTP_ERR_TRUNCATED;
    header->base_seq = moat_rd16(f);
    header->status_count = moat_rd16(f + 2);
    int32_t reference = (int32_t)((uint32_t)f[4] << 16 | (uint32_t)f[5] << 8 | f[6]);
    if (reference & 0x800000)
        reference -= 0x1000000; /* 24-bit signed */
    header->reference_time = reference;
    header->fb_count = f[7];
    size_t count = header->status_count;
    /* Symbols first (chunks), then the deltas they announce. */
    uint8_t symbols[MOAT_TWCC_MAX_STATUS];
    size_t want = count < max ? count : max;
    if (want > MOAT_TWCC_MAX_STATUS)
        want = MOAT_TWCC_MAX_STATUS;
    size_t at = FCI_FIXED, seen = 0;
    while (seen < count) {
        if (at + 2 > length)
            return MOAT_RTP_ERR_TRUNCATED;
        uint16_t chunk = moat_rd16(f + at);
        at += 2;
        if (!(chunk & 0x8000)) {
            uint8_t symbol = (chunk >> 13) & 3;
            size_t run = chunk & 0x1fff;
            if (symbol == 3)
                return MOAT_RTP_ERR_MALFORMED;
            for (size_t k = 0; k < run && seen < count; k++, seen++)
                if (seen < want)
                    symbols[seen] = symbol;
        } else if (!(chunk & 0x4000)) {
            for (size_t k = 0; k < 14 && seen < count; k++, seen++)
                if (seen < want)
                    symbols[seen] = (chunk >> (13 - k)) & 1;
        } else {
            for (size_t k = 0; k < 7 && seen < count; k++, seen++) {
                uint8_t symbol = (chunk >> (2 * (6 - k))) & 3;
                if (symbol == 3)
                    return MOAT_RTP_ERR_MALFORMED;
                if (seen < want)
                    symbols[seen] = symbol;
            }
        }
    }
    int64_t time = (int64_t)reference * MOAT_TWCC_REF_TICK_US;
    for (size_t i = 0; i < want; i++) {
        if (symbols[i] == LOST) {
            arrival_us[i] = -1;
            continue;
        }
        int32_t delta;
        if (symbols[i] == SMALL) {
            if (at + 1 > length)
                return MOAT_RTP_ERR_TRUNCATED;
            delta = f[at++];
        } else {
            if (at + 2 > length)
                return MOAT_RTP_ERR_TRUNCATED;
            delta = (int16_t)moat_rd16(f + at);
            at += 2;
        }
        time += (int64_t)delta * MOAT_TWCC_DELTA_TICK_US;
        arrival_us[i] = time;
    }
    return (int)want;
}

void moat_twcc_recorder_init(moat_twcc_recorder *r)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < MOAT_TWCC_WINDOW; i++)
        r->arrival_us[i] = -1;
}

void moat_twcc_recorder_on_packet(moat_twcc_recorder *r, uint16_t seq, uint64_t now_us)
{
    if (!r->started) {
        r->started = true;
        r->next_seq = seq;
        r->highest = seq;
    }
    int16_t from_next = (int16_t)(uint16_t)(seq - r->next_seq);
    if (from_next < 0)
        return; /* reported already (as lost): too late */
    if (from_next >= MOAT_TWCC_WINDOW) {
        /* A jump: what lies between is forgotten, not reported lost. */
        r->next_seq = (uint16_t)(seq - MOAT_TWCC_WINDOW / 2);
    }
    if ((int16_t)(uint16_t)(seq - r->highest) > 0)
        r->highest = seq;
    size_t slot = seq % MOAT_TWCC_WINDOW;
    r->arrival_us[slot] = (int64_t)now_us;
    r->seq_of[slot] = seq;
    r->received++;
}

int moat_twcc_recorder_build(moat_twcc_recorder *r, moat_rtcp_writer *w, uint32_t sender_ssrc,
                             uint32_t media_ssrc, uint64_t now_us)
{
    if (!r->started || now_us - r->last_build_us < MOAT_TWCC_INTERVAL_US)
        return 0;
    int built = 0;
    int64_t arrival[MOAT_TWCC_MAX_STATUS];
    while ((int16_t)(uint16_t)(r->highest - r->next_seq) >= 0) {
        size_t count = (size_t)(uint16_t)(r->highest - r->next_seq) + 1;
        if (count > MOAT_TWCC_MAX_STATUS)
            count = MOAT_TWCC_MAX_STATUS;
        for (size_t i = 0; i < count; i++) {
            uint16_t seq = (uint16_t)(r->next_seq + i);
            size_t slot = seq % MOAT_TWCC_WINDOW;
            arrival[i] = r->seq_of[slot] == seq ? r->arrival_us[slot] : -1;
        }
        int rc =
            moat_twcc_build(w, sender_ssrc, media_ssrc, r->next_seq, arrival, count, r->fb_count);
        if (rc == MOAT_RTP_ERR_NO_SPACE)
            break; /* the rest next time */
        for (size_t i = 0; i < count; i++) {
            size_t slot = (uint16_t)(r->next_seq + i) % MOAT_TWCC_WINDOW;
            r->arrival_us[slot] = -1;
        }
        r->next_seq = (uint16_t)(r->next_seq + count);
        if (rc != MOAT_RTP_OK)
            continue; /* deltas past 8 s: those statuses are skipped */
        r->fb_count++;
        r->feedbacks++;
        r->reported += count;
        built++;
    }
    if (built)
        r->last_build_us = now_us;
    return built;
}

/* VP8 and VP9 payload descriptors: parsing, in-place id rewriting and the
 * continuity mapping (video_descriptor.h). */
#include "rtp/video_descriptor.h"

#include <string.h>

#define PICTURE_MOD 0x8000u

/* A 7- or 15-bit picture id at payload[*at] (M bit first). */
static int picture_id(const uint8_t *p, size_t length, size_t *at, moat_video_descriptor *out)
{
    if (*at >= length)
        return MOAT_RTP_ERR_TRUNCATED;
    out->picture_id_offset = *at;
    if (p[*at] & 0x80) {
        if (*at + 1 >= length)
            return MOAT_RTP_ERR_TRUNCATED;
        out->picture_id_bits = 15;
        out->picture_id = (uint16_t)((p[*at] & 0x7f) << 8 | p[*at + 1]);
        *at += 2;
    } else {
        out->picture_id_bits = 7;
        out->picture_id = p[*at];
        *at += 1;
    }
    return MOAT_RTP_OK;
}

/* RFC 7741: X R N S R PID | I L T K RSV | [M PictureID] | [TL0PICIDX] |
 * [TID Y KEYIDX]. */
static int parse_vp8(const uint8_t *p, size_t length, moat_video_descriptor *out)
{
    if (length < 1)
        return MOAT_RTP_ERR_TRUNCATED;
    size_t at = 1;
    out->begins_frame = (p[0] & 0x10) && (p[0] & 0x0f) == 0;
    if (p[0] & 0x80) {
        if (at >= length)
            return MOAT_RTP_ERR_TRUNCATED;
        uint8_t x = p[at++];
        if (x & 0x80) {
            int rc = picture_id(p, length, &at, out);
            if (rc != MOAT_RTP_OK)
                return rc;
        }
        if (x & 0x40) {
            if (at >= length)
                return MOAT_RTP_ERR_TRUNCATED;
            out->has_tl0picidx = true;
            out->tl0picidx_offset = at;
            out->tl0picidx = p[at++];
        }
        if (x & 0x30) {
            if (at >= length)
                return MOAT_RTP_ERR_TRUNCATED;
            if (x & 0x20) {
                out->has_tid = true;
                out->tid = p[at] >> 6;
                out->layer_sync = (p[at] & 0x20) != 0;
            }
            at++;
        }
    }
    out->length = at;
    return MOAT_RTP_OK;
}

/* RFC 9628: I P L F B E V Z | [M PictureID] | [TID U SID D] | [TL0PICIDX
 * in non-flexible mode] | ... (reference indices and the scalability
 * structure follow; they need no rewriting: P_DIFFs are differences). */
static int parse_vp9(const uint8_t *p, size_t length, moat_video_descriptor *out)
{
    if (length < 1)
        return MOAT_RTP_ERR_TRUNCATED;
    size_t at = 1;
    out->begins_frame = (p[0] & 0x08) != 0;
    if (p[0] & 0x80) {
        int rc = picture_id(p, length, &at, out);
        if (rc != MOAT_RTP_OK)
            return rc;
    }
    if (p[0] & 0x20) {
        if (at >= length)
            return MOAT_RTP_ERR_TRUNCATED;
        out->has_tid = true;
        out->layer_sync = (p[at] & 0x10) != 0;
        out->tid = p[at++] >> 5;
        if (!(p[0] & 0x10)) {
            if (at >= length)
                return MOAT_RTP_ERR_TRUNCATED;
            out->has_tl0picidx = true;
            out->tl0picidx_offset = at;
            out->tl0picidx = p[at++];
        }
    }
    out->length = at;
    return MOAT_RTP_OK;
}

int moat_video_descriptor_parse(moat_video_codec codec, const uint8_t *payload, size_t length,
                                moat_video_descriptor *out)
{
    memset(out, 0, sizeof *out);
    switch (codec) {
    case MOAT_VIDEO_CODEC_VP8:
        return parse_vp8(payload, length, out);
    case MOAT_VIDEO_CODEC_VP9:
        return parse_vp9(payload, length, out);
    default:
        return MOAT_RTP_ERR_TYPE;
    }
}

void moat_video_descriptor_write(uint8_t *payload, const moat_video_descriptor *d,
                                 uint16_t picture_id, uint8_t tl0picidx)
{
    uint8_t *at = payload + d->picture_id_offset;
    if (d->picture_id_bits == 15) {
        at[0] = (uint8_t)(0x80 | ((picture_id >> 8) & 0x7f));
        at[1] = (uint8_t)picture_id;
    } else if (d->picture_id_bits == 7) {
        at[0] = (uint8_t)(picture_id & 0x7f);
    }
    if (d->has_tl0picidx)
        payload[d->tl0picidx_offset] = tl0picidx;
}

/* Whether picture a is after b, in the descriptor's width. */
static bool newer_picture(uint16_t a, uint16_t b, uint8_t bits)
{
    uint16_t mod = (uint16_t)(1u << bits);
    uint16_t diff = (uint16_t)((a - b) & (mod - 1));
    return diff != 0 && diff < mod / 2;
}

static bool newer_tl0(uint8_t a, uint8_t b)
{
    return (int8_t)(uint8_t)(a - b) > 0;
}

void moat_picture_map_apply(moat_picture_map *m, bool source_changed,
                            const moat_video_descriptor *d, uint16_t *picture_id,
                            uint8_t *tl0picidx)
{
    if (m->started && source_changed) {
        if (d->picture_id_bits)
            m->picture_delta =
                (uint16_t)((m->last_picture + 1u - d->picture_id) & (PICTURE_MOD - 1));
        if (d->has_tl0picidx)
            m->tl0_delta = (uint8_t)(m->last_tl0 + 1u - d->tl0picidx);
    }
    uint16_t picture = (uint16_t)((d->picture_id + m->picture_delta) & (PICTURE_MOD - 1));
    uint8_t tl0 = (uint8_t)(d->tl0picidx + m->tl0_delta);
    if (d->picture_id_bits) {
        bool first = !m->started || source_changed;
        if (first || newer_picture(picture, m->last_picture, d->picture_id_bits))
            m->last_picture = picture;
    }
    if (d->has_tl0picidx && (!m->started || source_changed || newer_tl0(tl0, m->last_tl0)))
        m->last_tl0 = tl0;
    m->started = true;
    *picture_id = picture;
    *tl0picidx = tl0;
}

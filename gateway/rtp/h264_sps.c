/* Reading an H.264 SPS up to its frame size and cropping (h264_sps.h). */
#include "rtp/h264_sps.h"

typedef struct {
    const uint8_t *data;
    size_t length;
    size_t byte;   /* next byte to load */
    size_t zeros;  /* zero bytes just read (emulation prevention) */
    uint32_t bits; /* loaded, not yet consumed */
    unsigned n_bits;
    bool failed;
} bit_reader;

/* One more byte of the RBSP, skipping 0x03 after two zero bytes. */
static bool load(bit_reader *r)
{
    if (r->byte < r->length && r->zeros >= 2 && r->data[r->byte] == 0x03) {
        r->byte++;
        r->zeros = 0;
    }
    if (r->byte >= r->length) {
        r->failed = true;
        return false;
    }
    uint8_t b = r->data[r->byte++];
    r->zeros = b == 0 ? r->zeros + 1 : 0;
    r->bits = r->bits << 8 | b;
    r->n_bits += 8;
    return true;
}

static uint32_t bit(bit_reader *r)
{
    if (r->n_bits == 0 && !load(r))
        return 0;
    r->n_bits--;
    return (r->bits >> r->n_bits) & 1u;
}

static uint32_t bits(bit_reader *r, unsigned n)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < n && !r->failed; i++)
        v = v << 1 | bit(r);
    return v;
}

/* ue(v), at most 31 leading zeros. */
static uint32_t ue(bit_reader *r)
{
    unsigned zeros = 0;
    while (!r->failed && bit(r) == 0) {
        if (++zeros > 31) {
            r->failed = true;
            return 0;
        }
    }
    if (r->failed)
        return 0;
    return (uint32_t)((1ull << zeros) - 1 + bits(r, zeros));
}

static void skip_se(bit_reader *r)
{
    (void)ue(r);
}

static bool high_profile(uint32_t profile)
{
    return profile == 100 || profile == 110 || profile == 122 || profile == 244 || profile == 44 ||
           profile == 83 || profile == 86 || profile == 118 || profile == 128 || profile == 138 ||
           profile == 139 || profile == 134 || profile == 135;
}

/* 7.3.2.1.1.1: delta_scale values, read and dropped. A delta_scale is
 * -128..127: se(v) codes 0..254 and 256 (code k is (-1)^(k+1) * ceil(k/2),
 * so 255 is +128); any other code fails the parse (a huge one made
 * last + delta overflow an int). */
static void skip_scaling_list(bit_reader *r, unsigned size)
{
    int32_t last = 8, next = 8;
    for (unsigned j = 0; j < size && !r->failed; j++) {
        if (next != 0) {
            uint32_t code = ue(r);
            if (code == 255 || code > 256) {
                r->failed = true;
                return;
            }
            int32_t delta = (code & 1) ? (int32_t)((code + 1) / 2) : -(int32_t)(code / 2);
            next = (last + delta + 256) % 256;
        }
        last = next == 0 ? last : next;
    }
}

/* Chroma format and scaling matrices of the high profiles; the chroma
 * format idc (1 when absent). */
static uint32_t skip_high_fields(bit_reader *r)
{
    uint32_t chroma = ue(r);
    if (chroma == 3)
        bit(r); /* separate_colour_plane_flag */
    ue(r);      /* bit_depth_luma_minus8 */
    ue(r);      /* bit_depth_chroma_minus8 */
    bit(r);     /* qpprime_y_zero_transform_bypass_flag */
    if (bit(r)) {
        unsigned lists = chroma != 3 ? 8 : 12;
        for (unsigned i = 0; i < lists && !r->failed; i++) {
            if (bit(r))
                skip_scaling_list(r, i < 6 ? 16 : 64);
        }
    }
    return chroma;
}

static void skip_pic_order(bit_reader *r)
{
    uint32_t type = ue(r);
    if (type == 0) {
        ue(r); /* log2_max_pic_order_cnt_lsb_minus4 */
    } else if (type == 1) {
        bit(r);
        skip_se(r);
        skip_se(r);
        uint32_t cycle = ue(r);
        if (cycle > 255) {
            r->failed = true;
            return;
        }
        for (uint32_t i = 0; i < cycle && !r->failed; i++)
            skip_se(r);
    }
}

bool moat_h264_sps_size(const uint8_t *nal, size_t length, uint16_t *width, uint16_t *height)
{
    if (length < 4 || (nal[0] & 0x1f) != 7)
        return false;
    bit_reader r = {.data = nal, .length = length, .byte = 1};
    uint32_t profile = bits(&r, 8);
    bits(&r, 16); /* constraint flags, level */
    ue(&r);       /* seq_parameter_set_id */
    uint32_t chroma = high_profile(profile) ? skip_high_fields(&r) : 1;
    ue(&r); /* log2_max_frame_num_minus4 */
    skip_pic_order(&r);
    ue(&r);  /* max_num_ref_frames */
    bit(&r); /* gaps_in_frame_num_value_allowed_flag */
    uint32_t mbs_wide = ue(&r) + 1, map_units_high = ue(&r) + 1;
    uint32_t frame_mbs_only = bit(&r);
    if (!frame_mbs_only)
        bit(&r); /* mb_adaptive_frame_field_flag */
    bit(&r);     /* direct_8x8_inference_flag */
    uint32_t left = 0, right = 0, top = 0, bottom = 0;
    if (bit(&r)) {
        left = ue(&r);
        right = ue(&r);
        top = ue(&r);
        bottom = ue(&r);
    }
    if (r.failed || mbs_wide > 1024 || map_units_high > 1024)
        return false;
    /* 7.4.2.1.1: crop units in luma samples. */
    uint32_t unit_x = chroma == 1 || chroma == 2 ? 2 : 1;
    uint32_t unit_y = (chroma == 1 ? 2 : 1) * (2 - frame_mbs_only);
    uint64_t w = (uint64_t)mbs_wide * 16, h = (uint64_t)map_units_high * 16 * (2 - frame_mbs_only);
    uint64_t crop_x = ((uint64_t)left + right) * unit_x, crop_y = ((uint64_t)top + bottom) * unit_y;
    if (crop_x >= w || crop_y >= h)
        return false;
    *width = (uint16_t)(w - crop_x);
    *height = (uint16_t)(h - crop_y);
    return true;
}

/* RTCP compound iteration, SR/RR/SDES/BYE parsing and building. */
#include "rtp/rtcp_packet.h"

#include <string.h>

#include "rtp/rtp_bytes.h"

#define REPORT_BLOCK_SIZE 24
#define SR_SENDER_INFO    24 /* sender SSRC + NTP + RTP ts + packet and octet counts */
#define RR_SENDER         4
#define MAX_PACKET_SIZE   (65536u * 4u)

void moat_rtcp_iter_init(moat_rtcp_iter *it, const uint8_t *buf, size_t len)
{
    it->buf = buf;
    it->len = buf == NULL ? 0 : len;
    it->offset = 0;
    it->error = MOAT_RTP_OK;
}

int moat_rtcp_iter_next(moat_rtcp_iter *it, moat_rtcp_header *out)
{
    if (it->error != MOAT_RTP_OK)
        return it->error;
    if (it->offset >= it->len)
        return 0;

    const uint8_t *p = it->buf + it->offset;
    size_t remaining = it->len - it->offset;
    int err = MOAT_RTP_OK;
    moat_rtcp_header h;
    memset(&h, 0, sizeof(h));

    if (remaining < MOAT_RTCP_HEADER_SIZE) {
        err = MOAT_RTP_ERR_TRUNCATED;
        goto fail;
    }
    h.version = p[0] >> 6;
    h.padding = (p[0] & 0x20) != 0;
    h.count = p[0] & 0x1F;
    h.type = p[1];
    h.length = ((size_t)moat_rd16(p + 2) + 1) * 4;
    if (h.version != 2) {
        err = MOAT_RTP_ERR_VERSION;
        goto fail;
    }
    if (h.length > remaining) {
        err = MOAT_RTP_ERR_LENGTH;
        goto fail;
    }
    h.packet = p;
    h.body = p + MOAT_RTCP_HEADER_SIZE;
    h.body_length = h.length - MOAT_RTCP_HEADER_SIZE;
    if (h.padding) {
        uint8_t pad = p[h.length - 1];
        if (pad == 0 || pad > h.body_length) {
            err = MOAT_RTP_ERR_PADDING;
            goto fail;
        }
        h.body_length -= pad;
    }
    it->offset += h.length;
    *out = h;
    return 1;

fail:
    it->error = err;
    return err;
}

int moat_rtcp_check_compound(const uint8_t *buf, size_t len)
{
    moat_rtcp_iter it;
    moat_rtcp_header h;
    int n = 0;
    int rc;
    if (buf == NULL || len == 0)
        return MOAT_RTP_ERR_TRUNCATED;
    moat_rtcp_iter_init(&it, buf, len);
    /* At most len / 4 iterations: every packet is at least 4 octets. */
    while ((rc = moat_rtcp_iter_next(&it, &h)) > 0)
        n++;
    return rc < 0 ? rc : n;
}

static void read_report_block(const uint8_t *p, moat_rtcp_report_block *rb)
{
    rb->ssrc = moat_rd32(p);
    rb->fraction_lost = p[4];
    uint32_t lost = moat_rd24(p + 5);
    /* Sign-extend the 24-bit two's complement count. */
    rb->cumulative_lost = (lost & 0x800000u) ? (int32_t)lost - 0x1000000 : (int32_t)lost;
    rb->highest_sequence = moat_rd32(p + 8);
    rb->jitter = moat_rd32(p + 12);
    rb->last_sr = moat_rd32(p + 16);
    rb->delay_since_last_sr = moat_rd32(p + 20);
}

static void write_report_block(uint8_t *p, const moat_rtcp_report_block *rb)
{
    int32_t lost = rb->cumulative_lost;
    if (lost > 0x7FFFFF)
        lost = 0x7FFFFF;
    if (lost < -0x800000)
        lost = -0x800000;
    moat_wr32(p, rb->ssrc);
    p[4] = rb->fraction_lost;
    moat_wr24(p + 5, (uint32_t)lost & 0xFFFFFFu);
    moat_wr32(p + 8, rb->highest_sequence);
    moat_wr32(p + 12, rb->jitter);
    moat_wr32(p + 16, rb->last_sr);
    moat_wr32(p + 20, rb->delay_since_last_sr);
}

int moat_rtcp_parse_sr(const moat_rtcp_header *h, moat_rtcp_sr *out)
{
    if (h->type != MOAT_RTCP_SR)
        return MOAT_RTP_ERR_TYPE;
    /* Profile-specific extensions may follow the blocks; they are ignored. */
    if (h->body_length < SR_SENDER_INFO + (size_t)h->count * REPORT_BLOCK_SIZE)
        return MOAT_RTP_ERR_TRUNCATED;
    const uint8_t *p = h->body;
    out->ssrc = moat_rd32(p);
    out->ntp_timestamp = moat_rd64(p + 4);
    out->rtp_timestamp = moat_rd32(p + 12);
    out->packet_count = moat_rd32(p + 16);
    out->octet_count = moat_rd32(p + 20);
    out->n_reports = h->count;
    for (size_t i = 0; i < out->n_reports; i++)
        read_report_block(p + SR_SENDER_INFO + i * REPORT_BLOCK_SIZE, &out->reports[i]);
    return MOAT_RTP_OK;
}

int moat_rtcp_parse_rr(const moat_rtcp_header *h, moat_rtcp_rr *out)
{
    if (h->type != MOAT_RTCP_RR)
        return MOAT_RTP_ERR_TYPE;
    if (h->body_length < RR_SENDER + (size_t)h->count * REPORT_BLOCK_SIZE)
        return MOAT_RTP_ERR_TRUNCATED;
    out->ssrc = moat_rd32(h->body);
    out->n_reports = h->count;
    for (size_t i = 0; i < out->n_reports; i++)
        read_report_block(h->body + RR_SENDER + i * REPORT_BLOCK_SIZE, &out->reports[i]);
    return MOAT_RTP_OK;
}

/* Reads one SDES chunk starting at body[*pos] (32-bit aligned) and leaves
 * *pos at the next chunk. Every item consumes at least 2 octets, so the loop
 * ends within body_length / 2 steps. */
static int read_sdes_chunk(const uint8_t *body, size_t body_length, size_t *pos,
                           moat_rtcp_sdes_chunk *chunk)
{
    size_t i = *pos;
    if (body_length - i < 4)
        return MOAT_RTP_ERR_TRUNCATED;
    chunk->ssrc = moat_rd32(body + i);
    chunk->cname = NULL;
    chunk->cname_length = 0;
    i += 4;
    for (;;) {
        if (i >= body_length)
            return MOAT_RTP_ERR_TRUNCATED;
        uint8_t type = body[i];
        if (type == MOAT_RTCP_SDES_END) {
            /* The terminating null octets run to the next 32-bit boundary. */
            i = (i + 4) & ~(size_t)3;
            if (i > body_length)
                return MOAT_RTP_ERR_TRUNCATED;
            *pos = i;
            return MOAT_RTP_OK;
        }
        if (body_length - i < 2)
            return MOAT_RTP_ERR_TRUNCATED;
        size_t item_len = body[i + 1];
        i += 2;
        if (item_len > body_length - i)
            return MOAT_RTP_ERR_TRUNCATED;
        if (type == MOAT_RTCP_SDES_CNAME && chunk->cname == NULL) {
            chunk->cname = body + i;
            chunk->cname_length = item_len;
        }
        i += item_len;
    }
}

int moat_rtcp_parse_sdes(const moat_rtcp_header *h, moat_rtcp_sdes *out)
{
    if (h->type != MOAT_RTCP_SDES)
        return MOAT_RTP_ERR_TYPE;
    size_t pos = 0;
    out->n_chunks = 0;
    for (size_t c = 0; c < h->count; c++) {
        int rc = read_sdes_chunk(h->body, h->body_length, &pos, &out->chunks[c]);
        if (rc != MOAT_RTP_OK)
            return rc;
        out->n_chunks = c + 1;
    }
    return MOAT_RTP_OK;
}

int moat_rtcp_parse_bye(const moat_rtcp_header *h, moat_rtcp_bye *out)
{
    if (h->type != MOAT_RTCP_BYE)
        return MOAT_RTP_ERR_TYPE;
    size_t ssrc_bytes = (size_t)h->count * 4;
    if (h->body_length < ssrc_bytes)
        return MOAT_RTP_ERR_TRUNCATED;
    out->n_ssrcs = h->count;
    for (size_t i = 0; i < out->n_ssrcs; i++)
        out->ssrcs[i] = moat_rd32(h->body + 4 * i);
    out->reason = NULL;
    out->reason_length = 0;
    if (h->body_length > ssrc_bytes) {
        size_t reason_len = h->body[ssrc_bytes];
        if (reason_len > h->body_length - ssrc_bytes - 1)
            return MOAT_RTP_ERR_MALFORMED;
        out->reason = h->body + ssrc_bytes + 1;
        out->reason_length = reason_len;
    }
    return MOAT_RTP_OK;
}

void moat_rtcp_writer_init(moat_rtcp_writer *w, uint8_t *buf, size_t capacity)
{
    w->buf = buf;
    w->capacity = buf == NULL ? 0 : capacity;
    w->length = 0;
}

int moat_rtcp_writer_begin(moat_rtcp_writer *w, uint8_t count, uint8_t type, size_t size,
                           uint8_t **body)
{
    if (count > MOAT_RTCP_MAX_COUNT || size < MOAT_RTCP_HEADER_SIZE || size % 4 != 0 ||
        size > MAX_PACKET_SIZE)
        return MOAT_RTP_ERR_INVALID;
    if (w->length > w->capacity || size > w->capacity - w->length)
        return MOAT_RTP_ERR_NO_SPACE;
    uint8_t *p = w->buf + w->length;
    memset(p, 0, size);
    p[0] = (uint8_t)(0x80 | count);
    p[1] = type;
    moat_wr16(p + 2, (uint16_t)(size / 4 - 1));
    w->length += size;
    *body = p + MOAT_RTCP_HEADER_SIZE;
    return MOAT_RTP_OK;
}

int moat_rtcp_build_sr(moat_rtcp_writer *w, const moat_rtcp_sr *sr)
{
    if (sr->n_reports > MOAT_RTCP_MAX_COUNT)
        return MOAT_RTP_ERR_INVALID;
    size_t size = MOAT_RTCP_HEADER_SIZE + SR_SENDER_INFO + sr->n_reports * REPORT_BLOCK_SIZE;
    uint8_t *p;
    int rc = moat_rtcp_writer_begin(w, (uint8_t)sr->n_reports, MOAT_RTCP_SR, size, &p);
    if (rc != MOAT_RTP_OK)
        return rc;
    moat_wr32(p, sr->ssrc);
    moat_wr64(p + 4, sr->ntp_timestamp);
    moat_wr32(p + 12, sr->rtp_timestamp);
    moat_wr32(p + 16, sr->packet_count);
    moat_wr32(p + 20, sr->octet_count);
    for (size_t i = 0; i < sr->n_reports; i++)
        write_report_block(p + SR_SENDER_INFO + i * REPORT_BLOCK_SIZE, &sr->reports[i]);
    return MOAT_RTP_OK;
}

int moat_rtcp_build_rr(moat_rtcp_writer *w, uint32_t ssrc, const moat_rtcp_report_block *reports,
                       size_t n_reports)
{
    if (n_reports > MOAT_RTCP_MAX_COUNT || (n_reports > 0 && reports == NULL))
        return MOAT_RTP_ERR_INVALID;
    size_t size = MOAT_RTCP_HEADER_SIZE + RR_SENDER + n_reports * REPORT_BLOCK_SIZE;
    uint8_t *p;
    int rc = moat_rtcp_writer_begin(w, (uint8_t)n_reports, MOAT_RTCP_RR, size, &p);
    if (rc != MOAT_RTP_OK)
        return rc;
    moat_wr32(p, ssrc);
    for (size_t i = 0; i < n_reports; i++)
        write_report_block(p + RR_SENDER + i * REPORT_BLOCK_SIZE, &reports[i]);
    return MOAT_RTP_OK;
}

int moat_rtcp_build_sdes_cname(moat_rtcp_writer *w, uint32_t ssrc, const char *cname,
                               size_t cname_length)
{
    if (cname == NULL || cname_length == 0 || cname_length > 255)
        return MOAT_RTP_ERR_INVALID;
    /* SSRC, type, length, text, then at least one null octet up to a
     * 32-bit boundary; writer_begin zeroes the packet so the nulls are there. */
    size_t chunk = 4 + 2 + cname_length + 1;
    size_t size = MOAT_RTCP_HEADER_SIZE + ((chunk + 3) & ~(size_t)3);
    uint8_t *p;
    int rc = moat_rtcp_writer_begin(w, 1, MOAT_RTCP_SDES, size, &p);
    if (rc != MOAT_RTP_OK)
        return rc;
    moat_wr32(p, ssrc);
    p[4] = MOAT_RTCP_SDES_CNAME;
    p[5] = (uint8_t)cname_length;
    memcpy(p + 6, cname, cname_length);
    return MOAT_RTP_OK;
}

int moat_rtcp_build_bye(moat_rtcp_writer *w, const uint32_t *ssrcs, size_t n_ssrcs,
                        const char *reason, size_t reason_length)
{
    if (n_ssrcs > MOAT_RTCP_MAX_COUNT || (n_ssrcs > 0 && ssrcs == NULL) || reason_length > 255 ||
        (reason == NULL && reason_length > 0))
        return MOAT_RTP_ERR_INVALID;
    size_t body = n_ssrcs * 4;
    if (reason != NULL)
        body += (1 + reason_length + 3) & ~(size_t)3;
    uint8_t *p;
    int rc = moat_rtcp_writer_begin(w, (uint8_t)n_ssrcs, MOAT_RTCP_BYE,
                                    MOAT_RTCP_HEADER_SIZE + body, &p);
    if (rc != MOAT_RTP_OK)
        return rc;
    for (size_t i = 0; i < n_ssrcs; i++)
        moat_wr32(p + 4 * i, ssrcs[i]);
    if (reason != NULL) {
        p[n_ssrcs * 4] = (uint8_t)reason_length;
        if (reason_length > 0)
            memcpy(p + n_ssrcs * 4 + 1, reason, reason_length);
    }
    return MOAT_RTP_OK;
}

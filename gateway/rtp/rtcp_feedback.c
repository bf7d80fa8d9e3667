/* Parsing and building of RTCP NACK, PLI, FIR and REMB feedback. */
#include "rtp/rtcp_feedback.h"

#include <string.h>

#include "rtp/rtp_bytes.h"

#define FB_COMMON_SIZE 8 /* sender SSRC + media SSRC */
#define NACK_FCI_SIZE  4
#define FIR_FCI_SIZE   8
#define REMB_FCI_FIXED 8 /* "REMB", SSRC count, exponent and mantissa */
#define REMB_MANTISSA  0x3FFFFu

int moat_rtcp_parse_fb(const moat_rtcp_header *h, moat_rtcp_fb *out)
{
    if (h->type != MOAT_RTCP_RTPFB && h->type != MOAT_RTCP_PSFB)
        return MOAT_RTP_ERR_TYPE;
    if (h->body_length < FB_COMMON_SIZE)
        return MOAT_RTP_ERR_TRUNCATED;
    out->type = h->type;
    out->fmt = h->count;
    out->sender_ssrc = moat_rd32(h->body);
    out->media_ssrc = moat_rd32(h->body + 4);
    out->fci = h->body + FB_COMMON_SIZE;
    out->fci_length = h->body_length - FB_COMMON_SIZE;
    return MOAT_RTP_OK;
}

bool moat_rtcp_fb_is_nack(const moat_rtcp_fb *fb)
{
    return fb->type == MOAT_RTCP_RTPFB && fb->fmt == MOAT_RTCP_FMT_NACK;
}

bool moat_rtcp_fb_is_pli(const moat_rtcp_fb *fb)
{
    return fb->type == MOAT_RTCP_PSFB && fb->fmt == MOAT_RTCP_FMT_PLI;
}

bool moat_rtcp_fb_is_fir(const moat_rtcp_fb *fb)
{
    return fb->type == MOAT_RTCP_PSFB && fb->fmt == MOAT_RTCP_FMT_FIR;
}

bool moat_rtcp_fb_is_remb(const moat_rtcp_fb *fb)
{
    return fb->type == MOAT_RTCP_PSFB && fb->fmt == MOAT_RTCP_FMT_AFB && fb->fci_length >= 4 &&
           memcmp(fb->fci, "REMB", 4) == 0;
}

int moat_rtcp_nack_expand(const moat_rtcp_fb *fb, uint16_t *seqs, size_t max)
{
    if (!moat_rtcp_fb_is_nack(fb))
        return MOAT_RTP_ERR_TYPE;
    if (fb->fci_length % NACK_FCI_SIZE != 0)
        return MOAT_RTP_ERR_MALFORMED;
    size_t n = 0;
    for (size_t off = 0; off < fb->fci_length && n < max; off += NACK_FCI_SIZE) {
        uint16_t pid = moat_rd16(fb->fci + off);
        uint16_t blp = moat_rd16(fb->fci + off + 2);
        seqs[n++] = pid;
        for (unsigned bit = 0; bit < 16 && n < max; bit++) {
            if (blp & (1u << bit))
                seqs[n++] = (uint16_t)(pid + bit + 1);
        }
    }
    /* n <= max and the FCI length is below 2^18, so n fits an int. */
    return (int)n;
}

int moat_rtcp_parse_fir(const moat_rtcp_fb *fb, moat_rtcp_fir_entry *entries, size_t max)
{
    if (!moat_rtcp_fb_is_fir(fb))
        return MOAT_RTP_ERR_TYPE;
    if (fb->fci_length == 0 || fb->fci_length % FIR_FCI_SIZE != 0)
        return MOAT_RTP_ERR_MALFORMED;
    size_t total = fb->fci_length / FIR_FCI_SIZE;
    for (size_t i = 0; i < total && i < max; i++) {
        entries[i].ssrc = moat_rd32(fb->fci + i * FIR_FCI_SIZE);
        entries[i].sequence = fb->fci[i * FIR_FCI_SIZE + 4];
    }
    return (int)total;
}

int moat_rtcp_parse_remb(const moat_rtcp_fb *fb, moat_rtcp_remb *out)
{
    if (!moat_rtcp_fb_is_remb(fb))
        return MOAT_RTP_ERR_TYPE;
    if (fb->fci_length < REMB_FCI_FIXED)
        return MOAT_RTP_ERR_TRUNCATED;
    const uint8_t *p = fb->fci;
    size_t n = p[4];
    unsigned exponent = p[5] >> 2;
    uint64_t mantissa = ((uint32_t)(p[5] & 0x03) << 16) | moat_rd16(p + 6);
    if (fb->fci_length < REMB_FCI_FIXED + 4 * n)
        return MOAT_RTP_ERR_TRUNCATED;
    /* An 18-bit mantissa shifted by up to 63 overflows 64 bits past 46. */
    if (mantissa != 0 && exponent > 46)
        out->bitrate = UINT64_MAX;
    else
        out->bitrate = mantissa << exponent;
    out->n_ssrcs = n;
    for (size_t i = 0; i < n && i < MOAT_RTCP_REMB_MAX_SSRCS; i++)
        out->ssrcs[i] = moat_rd32(p + REMB_FCI_FIXED + 4 * i);
    return MOAT_RTP_OK;
}

static int begin_fb(moat_rtcp_writer *w, uint8_t type, uint8_t fmt, uint32_t sender_ssrc,
                    uint32_t media_ssrc, size_t fci_length, uint8_t **fci)
{
    uint8_t *p;
    int rc = moat_rtcp_writer_begin(w, fmt, type,
                                    MOAT_RTCP_HEADER_SIZE + FB_COMMON_SIZE + fci_length, &p);
    if (rc != MOAT_RTP_OK)
        return rc;
    moat_wr32(p, sender_ssrc);
    moat_wr32(p + 4, media_ssrc);
    *fci = p + FB_COMMON_SIZE;
    return MOAT_RTP_OK;
}

int moat_rtcp_build_pli(moat_rtcp_writer *w, uint32_t sender_ssrc, uint32_t media_ssrc)
{
    uint8_t *fci;
    return begin_fb(w, MOAT_RTCP_PSFB, MOAT_RTCP_FMT_PLI, sender_ssrc, media_ssrc, 0, &fci);
}

int moat_rtcp_build_fir(moat_rtcp_writer *w, uint32_t sender_ssrc,
                        const moat_rtcp_fir_entry *entries, size_t n_entries)
{
    if (entries == NULL || n_entries == 0 || n_entries > 65536 / 2)
        return MOAT_RTP_ERR_INVALID;
    uint8_t *fci;
    /* RFC 5104 section 4.3.1.2: the media source SSRC field is unused (0);
     * the targets are in the FCI entries. */
    int rc = begin_fb(w, MOAT_RTCP_PSFB, MOAT_RTCP_FMT_FIR, sender_ssrc, 0,
                      n_entries * FIR_FCI_SIZE, &fci);
    if (rc != MOAT_RTP_OK)
        return rc;
    for (size_t i = 0; i < n_entries; i++) {
        moat_wr32(fci + i * FIR_FCI_SIZE, entries[i].ssrc);
        fci[i * FIR_FCI_SIZE + 4] = entries[i].sequence;
    }
    return MOAT_RTP_OK;
}

/* Groups `lost` into PID/BLP pairs; with out == NULL it only counts them, so
 * the builder can size the packet before writing anything. */
static size_t pack_nack(const uint16_t *lost, size_t n_lost, uint8_t *out)
{
    size_t n_fci = 0;
    uint16_t pid = 0;
    uint16_t blp = 0;
    for (size_t i = 0; i < n_lost; i++) {
        uint16_t delta = (uint16_t)(lost[i] - pid);
        if (n_fci > 0 && delta == 0)
            continue;
        if (n_fci > 0 && delta <= 16) {
            blp |= (uint16_t)(1u << (delta - 1));
            if (out != NULL)
                moat_wr16(out + (n_fci - 1) * NACK_FCI_SIZE + 2, blp);
            continue;
        }
        pid = lost[i];
        blp = 0;
        if (out != NULL) {
            moat_wr16(out + n_fci * NACK_FCI_SIZE, pid);
            moat_wr16(out + n_fci * NACK_FCI_SIZE + 2, 0);
        }
        n_fci++;
    }
    return n_fci;
}

int moat_rtcp_build_nack(moat_rtcp_writer *w, uint32_t sender_ssrc, uint32_t media_ssrc,
                         const uint16_t *lost, size_t n_lost)
{
    if (lost == NULL || n_lost == 0)
        return MOAT_RTP_ERR_INVALID;
    size_t n_fci = pack_nack(lost, n_lost, NULL);
    /* The 16-bit length field counts words after the first one. */
    if (n_fci > 65536 - 3)
        return MOAT_RTP_ERR_INVALID;
    uint8_t *fci;
    int rc = begin_fb(w, MOAT_RTCP_RTPFB, MOAT_RTCP_FMT_NACK, sender_ssrc, media_ssrc,
                      n_fci * NACK_FCI_SIZE, &fci);
    if (rc != MOAT_RTP_OK)
        return rc;
    pack_nack(lost, n_lost, fci);
    return MOAT_RTP_OK;
}

int moat_rtcp_build_remb(moat_rtcp_writer *w, uint32_t sender_ssrc, uint64_t bitrate,
                         const uint32_t *ssrcs, size_t n_ssrcs)
{
    if (n_ssrcs > 255 || (n_ssrcs > 0 && ssrcs == NULL))
        return MOAT_RTP_ERR_INVALID;
    /* Receivers read the rate into a signed 64-bit value (libwebrtc drops
     * a REMB past INT64_MAX as invalid). */
    if (bitrate > INT64_MAX)
        bitrate = INT64_MAX;
    unsigned exponent = 0;
    while ((bitrate >> exponent) > REMB_MANTISSA)
        exponent++;
    uint32_t mantissa = (uint32_t)(bitrate >> exponent);
    uint8_t *fci;
    int rc = begin_fb(w, MOAT_RTCP_PSFB, MOAT_RTCP_FMT_AFB, sender_ssrc, 0,
                      REMB_FCI_FIXED + 4 * n_ssrcs, &fci);
    if (rc != MOAT_RTP_OK)
        return rc;
    memcpy(fci, "REMB", 4);
    fci[4] = (uint8_t)n_ssrcs;
    fci[5] = (uint8_t)(exponent << 2 | mantissa >> 16);
    moat_wr16(fci + 6, (uint16_t)mantissa);
    for (size_t i = 0; i < n_ssrcs; i++)
        moat_wr32(fci + REMB_FCI_FIXED + 4 * i, ssrcs[i]);
    return MOAT_RTP_OK;
}

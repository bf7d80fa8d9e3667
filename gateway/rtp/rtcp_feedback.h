/* RTCP feedback messages (RFC 4585 section 6): generic NACK (RTPFB fmt 1),
 * PLI (PSFB fmt 1), FIR (PSFB fmt 4, RFC 5104) and REMB (PSFB fmt 15,
 * draft-alvestrand-rmcat-remb), parsed from packets the compound iterator
 * returns and built through a moat_rtcp_writer. */
#ifndef MOAT_RTCP_FEEDBACK_H
#define MOAT_RTCP_FEEDBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtp/rtcp_packet.h"

#define MOAT_RTCP_FMT_NACK 1  /* RTPFB */
#define MOAT_RTCP_FMT_PLI  1  /* PSFB */
#define MOAT_RTCP_FMT_FIR  4  /* PSFB */
#define MOAT_RTCP_FMT_AFB  15 /* PSFB application layer feedback, REMB's carrier */

/* One NACK FCI names at most 17 sequence numbers (PID and 16 BLP bits). */
#define MOAT_RTCP_NACK_SEQS_PER_FCI 17
#define MOAT_RTCP_REMB_MAX_SSRCS    16

typedef struct {
    uint8_t type; /* MOAT_RTCP_RTPFB or MOAT_RTCP_PSFB */
    uint8_t fmt;
    uint32_t sender_ssrc;
    uint32_t media_ssrc;
    const uint8_t *fci; /* feedback control information, points into the packet */
    size_t fci_length;
} moat_rtcp_fb;

typedef struct {
    uint32_t ssrc;
    uint8_t sequence;
} moat_rtcp_fir_entry;

typedef struct {
    uint64_t bitrate; /* bits per second; saturates at UINT64_MAX */
    size_t n_ssrcs;   /* as the packet says; only the first MOAT_RTCP_REMB_MAX_SSRCS are kept */
    uint32_t ssrcs[MOAT_RTCP_REMB_MAX_SSRCS];
} moat_rtcp_remb;

/* Returns MOAT_RTP_ERR_TYPE unless the packet is RTPFB or PSFB. */
int moat_rtcp_parse_fb(const moat_rtcp_header *h, moat_rtcp_fb *out);

bool moat_rtcp_fb_is_nack(const moat_rtcp_fb *fb);
bool moat_rtcp_fb_is_pli(const moat_rtcp_fb *fb);
bool moat_rtcp_fb_is_fir(const moat_rtcp_fb *fb);
/* PSFB fmt 15 whose FCI starts with the "REMB" identifier. */
bool moat_rtcp_fb_is_remb(const moat_rtcp_fb *fb);

/* Expands the PID/BLP pairs of a generic NACK into sequence numbers, in
 * packet order, writing at most `max` (so a hostile NACK costs bounded work
 * and memory). Returns how many were written or a negative moat_rtp_result. */
int moat_rtcp_nack_expand(const moat_rtcp_fb *fb, uint16_t *seqs, size_t max);
/* Returns how many FIR entries the FCI holds (possibly more than written)
 * after writing at most `max`, or a negative moat_rtp_result. */
int moat_rtcp_parse_fir(const moat_rtcp_fb *fb, moat_rtcp_fir_entry *entries, size_t max);
int moat_rtcp_parse_remb(const moat_rtcp_fb *fb, moat_rtcp_remb *out);

int moat_rtcp_build_pli(moat_rtcp_writer *w, uint32_t sender_ssrc, uint32_t media_ssrc);
/* 1..MOAT_RTCP_MAX_COUNT entries would be plenty; any count fitting the
 * packet length field is accepted. */
int moat_rtcp_build_fir(moat_rtcp_writer *w, uint32_t sender_ssrc,
                        const moat_rtcp_fir_entry *entries, size_t n_entries);
/* Packs lost sequence numbers into PID/BLP pairs. Any order is accepted;
 * ascending order (modulo 2^16) gives the fewest pairs. Duplicates are
 * harmless. n_lost must be at least 1. */
int moat_rtcp_build_nack(moat_rtcp_writer *w, uint32_t sender_ssrc, uint32_t media_ssrc,
                         const uint16_t *lost, size_t n_lost);
/* n_ssrcs at most 255. */
int moat_rtcp_build_remb(moat_rtcp_writer *w, uint32_t sender_ssrc, uint64_t bitrate,
                         const uint32_t *ssrcs, size_t n_ssrcs);

#endif

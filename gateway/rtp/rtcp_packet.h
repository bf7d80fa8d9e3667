/* RTCP compound packets (RFC 3550 section 6): walking the packets of a
 * compound, parsing and building SR, RR, SDES (CNAME) and BYE, and the writer
 * every RTCP builder appends through. Feedback messages (RFC 4585, 5104,
 * REMB) live in rtcp_feedback.h. Views returned by the parsers point into the
 * parsed buffer and are valid only as long as it is. */
#ifndef MOAT_RTCP_PACKET_H
#define MOAT_RTCP_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtp/rtp_error.h"

#define MOAT_RTCP_HEADER_SIZE 4
/* The 5-bit count field bounds report blocks, SDES chunks and BYE SSRCs. */
#define MOAT_RTCP_MAX_COUNT 31

#define MOAT_RTCP_SR    200
#define MOAT_RTCP_RR    201
#define MOAT_RTCP_SDES  202
#define MOAT_RTCP_BYE   203
#define MOAT_RTCP_APP   204
#define MOAT_RTCP_RTPFB 205
#define MOAT_RTCP_PSFB  206

#define MOAT_RTCP_SDES_END   0
#define MOAT_RTCP_SDES_CNAME 1

/* One packet of a compound. */
typedef struct {
    uint8_t version;
    bool padding;
    uint8_t count; /* RC, SC or FMT depending on type */
    uint8_t type;
    const uint8_t *packet; /* first octet of the common header */
    size_t length;         /* whole packet in octets, header and padding included */
    const uint8_t *body;   /* after the 4-octet common header */
    size_t body_length;    /* without the padding */
} moat_rtcp_header;

typedef struct {
    const uint8_t *buf;
    size_t len;
    size_t offset;
    int error;
} moat_rtcp_iter;

void moat_rtcp_iter_init(moat_rtcp_iter *it, const uint8_t *buf, size_t len);
/* Returns 1 and fills *out with the next packet, 0 after the last one, or a
 * negative moat_rtp_result when the next packet's header or length is bad;
 * an error is sticky, so a caller looping while > 0 always stops. */
int moat_rtcp_iter_next(moat_rtcp_iter *it, moat_rtcp_header *out);

/* Walks a whole compound and returns how many packets it holds (> 0), or the
 * first error. Lets a caller reject a compound before acting on any part of
 * it. The first packet is not required to be SR/RR, because reduced-size RTCP
 * (RFC 5506) sends feedback alone. */
int moat_rtcp_check_compound(const uint8_t *buf, size_t len);

typedef struct {
    uint32_t ssrc;
    uint8_t fraction_lost;
    int32_t cumulative_lost; /* 24-bit signed on the wire; builders clamp */
    uint32_t highest_sequence;
    uint32_t jitter;
    uint32_t last_sr;
    uint32_t delay_since_last_sr; /* units of 1/65536 s */
} moat_rtcp_report_block;

typedef struct {
    uint32_t ssrc;
    uint64_t ntp_timestamp;
    uint32_t rtp_timestamp;
    uint32_t packet_count;
    uint32_t octet_count;
    size_t n_reports;
    moat_rtcp_report_block reports[MOAT_RTCP_MAX_COUNT];
} moat_rtcp_sr;

typedef struct {
    uint32_t ssrc;
    size_t n_reports;
    moat_rtcp_report_block reports[MOAT_RTCP_MAX_COUNT];
} moat_rtcp_rr;

typedef struct {
    uint32_t ssrc;
    const uint8_t *cname; /* NULL when the chunk has no CNAME item */
    size_t cname_length;
} moat_rtcp_sdes_chunk;

typedef struct {
    size_t n_chunks;
    moat_rtcp_sdes_chunk chunks[MOAT_RTCP_MAX_COUNT];
} moat_rtcp_sdes;

typedef struct {
    size_t n_ssrcs;
    uint32_t ssrcs[MOAT_RTCP_MAX_COUNT];
    const uint8_t *reason; /* NULL without a reason */
    size_t reason_length;
} moat_rtcp_bye;

/* Parsers take a packet from moat_rtcp_iter_next. They return MOAT_RTP_OK,
 * MOAT_RTP_ERR_TYPE for another packet type, or MOAT_RTP_ERR_TRUNCATED /
 * MOAT_RTP_ERR_MALFORMED when the body does not hold what the count says. */
int moat_rtcp_parse_sr(const moat_rtcp_header *h, moat_rtcp_sr *out);
int moat_rtcp_parse_rr(const moat_rtcp_header *h, moat_rtcp_rr *out);
int moat_rtcp_parse_sdes(const moat_rtcp_header *h, moat_rtcp_sdes *out);
int moat_rtcp_parse_bye(const moat_rtcp_header *h, moat_rtcp_bye *out);

/* Appends RTCP packets into a caller's buffer. Every builder writes a whole
 * packet or nothing, so a compound can be filled until MOAT_RTP_ERR_NO_SPACE
 * and sent as it is. */
typedef struct {
    uint8_t *buf;
    size_t capacity;
    size_t length;
} moat_rtcp_writer;

void moat_rtcp_writer_init(moat_rtcp_writer *w, uint8_t *buf, size_t capacity);
/* Reserves `size` octets (a multiple of 4, at most 65536 * 4) at the end and
 * writes the common header for a packet of that size; *body receives the
 * octets after the header. For builders of packet types not found here. */
int moat_rtcp_writer_begin(moat_rtcp_writer *w, uint8_t count, uint8_t type, size_t size,
                           uint8_t **body);

int moat_rtcp_build_sr(moat_rtcp_writer *w, const moat_rtcp_sr *sr);
int moat_rtcp_build_rr(moat_rtcp_writer *w, uint32_t ssrc, const moat_rtcp_report_block *reports,
                       size_t n_reports);
/* One chunk with one CNAME item; cname_length 1..255. */
int moat_rtcp_build_sdes_cname(moat_rtcp_writer *w, uint32_t ssrc, const char *cname,
                               size_t cname_length);
/* reason may be NULL; reason_length at most 255. */
int moat_rtcp_build_bye(moat_rtcp_writer *w, const uint32_t *ssrcs, size_t n_ssrcs,
                        const char *reason, size_t reason_length);

#endif

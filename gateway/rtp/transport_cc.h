/* Transport-wide congestion control feedback
 * (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 3.1, RTCP
 * RTPFB FMT 15): what a receiver tells the sender about each packet that
 * carried a transport-wide sequence number (received or not, and when,
 * to 250 µs), so the sender's estimator (Chromium's GoogCC) can work.
 *
 * The builder writes one feedback packet through a moat_rtcp_writer; the
 * parser reads one back (it is attacker input: bounded by the FCI length
 * and by what the caller takes); the recorder keeps arrival times of one
 * transport (all streams of a session) and builds the feedback that is due.
 * Pure state, one owner, one thread. */
#ifndef MOAT_RTP_TRANSPORT_CC_H
#define MOAT_RTP_TRANSPORT_CC_H

#include "rtp/rtcp_feedback.h"
#include "rtp/rtcp_packet.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_RTCP_FMT_TRANSPORT_CC 15 /* RTPFB */
#define MOAT_TWCC_URI              "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
#define MOAT_TWCC_MAX_STATUS       512  /* packet statuses in one feedback we build */
#define MOAT_TWCC_WINDOW           2048 /* sequence numbers the recorder holds */
#define MOAT_TWCC_INTERVAL_US      50000u
#define MOAT_TWCC_DELTA_TICK_US    250
#define MOAT_TWCC_REF_TICK_US      64000

/* One feedback's statuses: arrival_us[i] is the arrival of base_seq + i,
 * -1 when it was not received. Arrival times are on any clock in µs. */
int moat_twcc_build(moat_rtcp_writer *w, uint32_t sender_ssrc, uint32_t media_ssrc,
                    uint16_t base_seq, const int64_t *arrival_us, size_t count, uint8_t fb_count);

typedef struct {
    uint16_t base_seq;
    uint16_t status_count;
    int32_t reference_time; /* 24-bit signed, in MOAT_TWCC_REF_TICK_US */
    uint8_t fb_count;
} moat_twcc_header;

/* Parses an RTPFB FMT 15 packet: the header, and for the first `max`
 * statuses whether each was received and its arrival in µs on the
 * sender's reference clock (reference_time x 64 ms + deltas; -1 when not
 * received). Returns how many statuses were written, or a negative
 * moat_rtp_result (MOAT_RTP_ERR_TYPE for other feedback). */
int moat_twcc_parse(const moat_rtcp_fb *fb, moat_twcc_header *header, int64_t *arrival_us,
                    size_t max);

typedef struct {
    bool started;
    uint16_t next_seq; /* the first not reported yet */
    uint16_t highest;
    uint8_t fb_count;
    uint64_t last_build_us;
    int64_t arrival_us[MOAT_TWCC_WINDOW]; /* by seq % window, -1 none */
    uint16_t seq_of[MOAT_TWCC_WINDOW];    /* which seq the slot holds */
    uint64_t received, reported, feedbacks;
} moat_twcc_recorder;

void moat_twcc_recorder_init(moat_twcc_recorder *r);
/* A packet with transport-wide sequence number `seq` arrived. Packets
 * older than what was reported already are left out. */
void moat_twcc_recorder_on_packet(moat_twcc_recorder *r, uint16_t seq, uint64_t now_us);
/* When MOAT_TWCC_INTERVAL_US passed since the last one and something is
 * unreported: appends feedback packets (as many as fit) and returns how
 * many; 0 when nothing was due. */
int moat_twcc_recorder_build(moat_twcc_recorder *r, moat_rtcp_writer *w, uint32_t sender_ssrc,
                             uint32_t media_ssrc, uint64_t now_us);

#endif

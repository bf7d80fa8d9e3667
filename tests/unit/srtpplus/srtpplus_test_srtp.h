/* libsrtp sessions and RTP/RTCP packets for the SRTP+ tests: the real SRTP the library
 * sits around, never a stand-in for it. */
#ifndef SRTPPLUS_TEST_SRTP_H
#define SRTPPLUS_TEST_SRTP_H

#include <srtp2/srtp.h>
#include <stddef.h>
#include <stdint.h>

#include "srtpplus.h"
#include "srtpplus_byteorder.h"

/* Room for a packet, the chain block, the SRTP trailer and the tag. */
#define TEST_PACKET_CAPACITY 512

struct test_packet {
    uint8_t data[TEST_PACKET_CAPACITY];
    size_t len;
};

/* A libsrtp session for one SSRC (ssrc_specific), with the given initial ROC and a
 * replay window of 1024 so reordering tests are limited by SRTP+, not by libsrtp. */
srtp_t test_srtp_session(enum srtpplus_profile profile, const uint8_t *master_key,
                         const uint8_t *master_salt, uint32_t ssrc, uint32_t roc);

/* A 172-octet G.711 packet (12-octet header, PT 0, 160-octet payload derived from seq). */
void test_rtp_packet(struct test_packet *packet, uint32_t ssrc, uint16_t seq, uint32_t timestamp);

/* A receiver report with no report blocks from ssrc. */
void test_rtcp_packet(struct test_packet *packet, uint32_t ssrc);

/* protect, then (for the caller's sender) prepare/append around it. Aborts the test on
 * any failure. */
void test_send_rtp(srtp_t srtp, struct srtpplus_sender *tx, struct test_packet *packet);
void test_send_rtcp(srtp_t srtp, struct srtpplus_sender *tx, struct test_packet *packet);

/* The receive path of SRTPPLUS.md section 5 on a copy of packet: check, then
 * srtp_unprotect and confirm when the verdict lets it through. Returns the verdict;
 * *unprotected says whether srtp_unprotect accepted it, *confirm what confirm said. */
enum srtpplus_verdict test_receive_rtp(struct srtpplus_receiver *rx, srtp_t srtp,
                                       const struct test_packet *packet, bool enforcing,
                                       uint64_t now_ns, struct test_packet *plain,
                                       bool *unprotected, enum srtpplus_confirm *confirm);
enum srtpplus_verdict test_receive_rtcp(struct srtpplus_receiver *rx, srtp_t srtp,
                                        const struct test_packet *packet, bool enforcing,
                                        uint64_t now_ns, bool *unprotected);

/* Hex helpers for the JSON vectors; g_assert on malformed hex. */
size_t test_hex_decode(const char *hex, uint8_t *out, size_t capacity);

#endif

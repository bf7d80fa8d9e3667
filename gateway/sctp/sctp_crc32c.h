/* SCTP's checksum, CRC32c (RFC 9260 §6.8, Appendix A), computed by Moat
 * rather than by usrsctp: Debian's usrsctp is built -O0, and its software
 * CRC32c was 31% of the instructions of both ends of a bulk data channel.
 * usrsctp runs with checksum offload (sctp_stack.c): the mailbox fills in
 * the checksum of every packet on the way out and the association checks it
 * on the way in, before usrsctp sees the packet, so a corrupted packet is
 * still dropped and never reaches SCTP. Pure functions, any thread. */
#ifndef MOAT_SCTP_CRC32C_H
#define MOAT_SCTP_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Offset and size of the checksum in the SCTP common header. */
#define MOAT_SCTP_CHECKSUM_OFFSET    8
#define MOAT_SCTP_COMMON_HEADER_SIZE 12

/* CRC32c of data (initial value and final xor included): 0xE3069283 for
 * "123456789". Uses the CPU's crc32 instruction (SSE4.2) when it has one. */
uint32_t moat_sctp_crc32c(const uint8_t *data, size_t length);

/* The packet's checksum, computed with the checksum field taken as zero. */
uint32_t moat_sctp_packet_checksum(const uint8_t *packet, size_t length);

/* Writes the checksum into the packet (least significant byte first, as
 * RFC 9260 Appendix A stores it). length >= MOAT_SCTP_COMMON_HEADER_SIZE. */
void moat_sctp_packet_set_checksum(uint8_t *packet, size_t length);

/* Whether the packet is long enough for a common header and its checksum
 * is right. */
bool moat_sctp_packet_checksum_ok(const uint8_t *packet, size_t length);

#endif

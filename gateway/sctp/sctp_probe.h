/* PLPMTUD probe packets for SCTP (RFC 8899 §6.2.1): a HEARTBEAT chunk whose
 * Heartbeat Information is ours (a magic, the probe's sequence number and
 * size) followed by a PAD chunk (RFC 4820) filling the packet to the probe
 * size. Moat builds them itself, below usrsctp (which has no PLPMTUD), with
 * the ports and the peer's verification tag learned from the packets
 * usrsctp sends, and recognises the peer's HEARTBEAT ACK echoing one before
 * usrsctp sees the packet: usrsctp would not know the information, and it
 * stops reading a packet at a HEARTBEAT ACK whose length is not its own.
 *
 * Pure functions on byte buffers, any thread. */
#ifndef MOAT_SCTP_PROBE_H
#define MOAT_SCTP_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Common header + HEARTBEAT with our 12-byte information + an empty PAD. */
#define MOAT_SCTP_PROBE_MIN_SIZE (12u + 4u + 4u + 12u + 4u)
/* "MPLD": first word of our Heartbeat Information. */
#define MOAT_SCTP_PROBE_MAGIC 0x4d504c44u

/* What a probe needs from the association's packets. */
typedef struct {
    bool known;
    uint16_t source_port, destination_port;
    uint32_t peer_tag; /* verification tag the peer expects */
} moat_sctp_probe_header;

/* Learns the header from one packet usrsctp sends: its ports and tag, once
 * the packet is one that carries the peer's tag (not INIT, ABORT or
 * SHUTDOWN COMPLETE, whose tag may be zero or reflected). */
void moat_sctp_probe_learn(moat_sctp_probe_header *h, const uint8_t *packet, size_t length);

/* Writes a probe of exactly size bytes (a multiple of 4, at least
 * MOAT_SCTP_PROBE_MIN_SIZE, at most capacity), checksum included. Returns
 * size, or 0 when it cannot (header unknown, bad size). */
size_t moat_sctp_probe_build(const moat_sctp_probe_header *h, uint32_t seq, uint32_t size,
                             uint8_t *out, size_t capacity);

/* One HEARTBEAT ACK echoing a probe, found in a packet. */
typedef struct {
    uint32_t seq, size;
    size_t offset, length; /* of the chunk within the packet, padding included */
} moat_sctp_probe_ack;

/* Looks for a HEARTBEAT ACK carrying our information among the packet's
 * chunks (the checksum is not checked here). Returns true and fills ack
 * with the first one found; false for anything else, including malformed
 * packets. */
bool moat_sctp_probe_find_ack(const uint8_t *packet, size_t length, moat_sctp_probe_ack *ack);

/* Whether the packet has chunks other than the acknowledgement (which must
 * come from moat_sctp_probe_find_ack on it). */
bool moat_sctp_probe_has_other_chunks(size_t length, const moat_sctp_probe_ack *ack);

/* Copies the packet without the acknowledgement's chunk into out (capacity
 * at least length) and fills in the checksum; returns the new length. */
size_t moat_sctp_probe_strip_ack(const uint8_t *packet, size_t length,
                                 const moat_sctp_probe_ack *ack, uint8_t *out);

#endif

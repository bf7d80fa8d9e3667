/* Sizes and limits of Moat's SCTP associations, in one place so the stack's
 * sysctls, the socket options and the SDP (a=max-message-size) agree. */
#ifndef MOAT_SCTP_TUNING_H
#define MOAT_SCTP_TUNING_H

/* Largest message we accept from a peer; advertise it as
 * a=max-message-size (RFC 8841 §6). 256 KiB is what Chromium advertises. */
#define MOAT_SCTP_MAX_RECEIVE_MESSAGE_SIZE (256u * 1024u)

/* Send and receive buffer of each association. It bounds the largest message
 * we can send (a whole message must fit the send buffer) and the data in
 * flight; four maximum-size messages fit. */
#define MOAT_SCTP_SOCKET_BUFFER_SIZE (1024u * 1024u)

/* Streams asked for in INIT, both directions. A side may open channels only
 * on its own parity of stream ids (RFC 8832 §6), so 2048 streams give each
 * side 1024 channels. usrsctp allocates per-stream state for
 * min(ours, peer's) streams up front, which is why this is not 65535. */
#define MOAT_SCTP_STREAMS 2048

/* Chunks an association may hold in its send queue and for reassembly
 * (usrsctp's sctp_max_chunks_on_queue). */
#define MOAT_SCTP_MAX_CHUNKS_ON_QUEUE 16384

/* SCTP packet size: one packet is one DTLS record inside one UDP datagram,
 * and 1200 bytes leave room for DTLS, UDP and IPv6 headers under a 1280-byte
 * path MTU (the value browsers use). Path MTU discovery stays off. */
#define MOAT_SCTP_MTU 1200

#endif

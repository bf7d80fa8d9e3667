/* The probe every legitimate packet carries in its payload: a magic word and
 * the send time, so the echoed copy yields a round-trip time. The echo
 * plugin returns payloads untouched. */
#ifndef RTP_PROBE_H
#define RTP_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RTP_PROBE_LENGTH 12

/* Writes magic + send_us (12 octets) at `at`. */
void rtp_probe_write(uint8_t *at, uint64_t send_us);
/* Reads the probe at payload + offset; false when it is not one of ours. */
bool rtp_probe_read(const uint8_t *payload, size_t length, size_t offset, uint64_t *send_us);

#endif

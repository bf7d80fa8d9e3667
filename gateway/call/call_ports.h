/* The UDP port pairs of non-ICE call legs, from [media] port_min..port_max:
 * an even RTP port and RTP+1 for RTCP, both bound at allocation so a port
 * some other program holds is skipped. Pairs are picked at random (not in
 * sequence, so a leg's port cannot be guessed from another's). Allocation runs on the control
 * thread, release on the worker that closes the leg: one mutex, taken per
 * allocation and release, never per packet. */
#ifndef MOAT_CALL_PORTS_H
#define MOAT_CALL_PORTS_H

#include "engine/own_sockets.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_call_ports moat_call_ports;

/* NULL with a message when the range or the bind address is invalid.
 * `own` (NULL: none; it outlives the ports): where each pair's two ports
 * are marked Moat's own while they are bound (engine/own_sockets.h). */
moat_call_ports *moat_call_ports_new(const char *bind_address, int port_min, int port_max,
                                     moat_own_sockets *own, char *error, size_t error_size);
void moat_call_ports_free(moat_call_ports *ports);

/* Binds a pair: *rtp_fd on the returned even port, *rtcp_fd on port + 1
 * (non-blocking, dual-stack). 0 when every pair is in use ("Ran out of
 * ports"). */
uint16_t moat_call_ports_allocate(moat_call_ports *ports, int *rtp_fd, int *rtcp_fd);
/* The pair at `port` exactly (a restored call's: call_journal.h): 0 when
 * it is outside the range, odd-aligned, in use or does not bind. */
uint16_t moat_call_ports_allocate_at(moat_call_ports *ports, uint16_t port, int *rtp_fd,
                                     int *rtcp_fd);
/* Closes both sockets and returns the pair. Any thread. */
void moat_call_ports_release(moat_call_ports *ports, uint16_t port, int rtp_fd, int rtcp_fd);
size_t moat_call_ports_in_use(moat_call_ports *ports);
/* Any thread, lock-free: whether `port` (RTP or RTCP) belongs to a pair
 * now allocated. */
bool moat_call_ports_holds(const moat_call_ports *ports, uint16_t port);
/* The range's first and last port. */
void moat_call_ports_range(const moat_call_ports *ports, uint16_t *first, uint16_t *last);
size_t moat_call_ports_capacity(const moat_call_ports *ports);

#endif

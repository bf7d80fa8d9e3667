/* forged-spoofed: the forged SRTP of forged-own, sent from a raw IPv4
 * socket with the session's own address and port as the source, as an
 * off-path attacker who knows the 5-tuple would. */
#ifndef ATTACK_SPOOFED_H
#define ATTACK_SPOOFED_H

#include <stddef.h>

/* The raw socket (IPPROTO_RAW, IP header included), opened before any
 * session exists so a missing privilege is reported at once. -1 with a
 * message (it needs root or CAP_NET_RAW). */
int attack_spoofed_open_socket(char *error, size_t error_size);

#endif

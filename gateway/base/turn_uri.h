/* The check of a STUN or TURN server URI handed to clients ([turn] uris):
 * RFC 7064 and RFC 7065 syntax, as browsers' RTCPeerConnection parses it.
 * Pure; no allocation. */
#ifndef MOAT_TURN_URI_H
#define MOAT_TURN_URI_H

/* NULL when `uri` is scheme ":" host [":" port] ["?transport=" udp|tcp]
 * with scheme turn, turns, stun or stuns (any case; no query for stun and
 * stuns), host a name, an IPv4 address or a bracketed IPv6 address and
 * port 1..65535; otherwise what is wrong with it, in words. */
const char *moat_turn_uri_problem(const char *uri);

#endif

/* Where moat-flood may send: loopback and private networks only, unless the
 * user passes --allow-remote. Every address the tool would send to is
 * checked: the WHIP host (all of its resolved addresses), --target and the
 * candidates in each answer. */
#ifndef TARGET_POLICY_H
#define TARGET_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* Loopback (127/8, ::1), RFC 1918 (10/8, 172.16/12, 192.168/16), shared
 * address space (100.64/10), link-local (169.254/16, fe80::/10), unique
 * local IPv6 (fc00::/7); IPv4-mapped IPv6 addresses by their IPv4 part. */
bool target_address_is_local(const struct sockaddr *address);

/* Resolves host (a name or a literal) and checks every address. 0 when all
 * are allowed (or allow_remote); -1 with a message naming the address
 * otherwise, or when the name does not resolve. */
int target_policy_check_host(const char *host, bool allow_remote, char *error, size_t error_size);

/* The host of an http(s) URL, checked as above. -1 also for a URL that does
 * not parse or has no host. */
int target_policy_check_url(const char *url, bool allow_remote, char *error, size_t error_size);

/* Resolves "HOST:PORT" ("[v6]:PORT" for IPv6 literals) to its first
 * address, as a dual-stack socket address (v4-mapped for IPv4), after the
 * same check as target_policy_check_host. -1 with a message. */
int target_policy_resolve(const char *host_port, bool allow_remote, struct sockaddr_in6 *out,
                          char *error, size_t error_size);

/* Numeric text of an address, without port ("127.0.0.1", "::1"); v4-mapped
 * addresses print as IPv4. */
void target_address_text(const struct sockaddr *address, char *out, size_t size);

#endif

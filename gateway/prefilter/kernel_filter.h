/* The kernel prefilter of one worker socket: loads the eBPF socket filter
 * (kernel_filter.bpf.c, embedded in the binary as a libbpf skeleton),
 * attaches it to the socket with SO_ATTACH_BPF and owns its maps. Each worker
 * has its own copy of the program and maps; the worker is their only writer
 * (kernel_filter_state.h for the shared memory, the tuple calls below for the
 * tuple hash map). Loading needs CAP_BPF (or CAP_SYS_ADMIN) and a kernel
 * with BTF-less global data and mmap-able arrays (5.5+); without them
 * moat_kernel_filter_attach fails and the user-space prefilter works alone.
 *
 * Threads: attach/free on the thread that owns the worker before it starts
 * and after it stopped; moat_kernel_filter_read_drops from any thread (a
 * syscall reading per-CPU counters); everything else on the worker thread. */
#ifndef MOAT_KERNEL_FILTER_H
#define MOAT_KERNEL_FILTER_H

#include "prefilter/kernel_filter_state.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_kernel_filter moat_kernel_filter;

/* Loads the program and attaches it to `socket_fd`; NULL with the reason in
 * `error` (e.g. "Operation not permitted" without CAP_BPF). */
moat_kernel_filter *moat_kernel_filter_attach(int socket_fd, char *error, size_t error_size);
/* Detaches from the socket (when still open) and unloads. */
void moat_kernel_filter_free(moat_kernel_filter *filter);

moat_kf_state *moat_kernel_filter_state(moat_kernel_filter *filter);
void moat_kernel_filter_set_worker_enforcing(moat_kernel_filter *filter, bool enforcing);
/* `remote` now belongs to `owner` (a session): its RTP reaches the session's
 * checks instead of being dropped as an unknown tuple. */
void moat_kernel_filter_bind_tuple(moat_kernel_filter *filter, const void *owner,
                                   const struct sockaddr_in6 *remote);
/* A tuple several sessions share (cascade legs): known, so not dropped as
 * unknown, and passed to user space unchecked. */
void moat_kernel_filter_pass_tuple(moat_kernel_filter *filter, const void *owner,
                                   const struct sockaddr_in6 *remote);
void moat_kernel_filter_unbind_tuple(moat_kernel_filter *filter, const struct sockaddr_in6 *remote);
/* The owner left the worker: its tuples and its slot go. */
void moat_kernel_filter_forget(moat_kernel_filter *filter, const void *owner);

/* Totals per reason over every CPU since the program was loaded. */
void moat_kernel_filter_read_drops(const moat_kernel_filter *filter,
                                   uint64_t totals[MOAT_KF_REASON_COUNT]);
const char *moat_kernel_filter_reason_name(int reason);

#endif

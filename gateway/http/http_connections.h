/* How many connections the HTTP API holds, in all and per source (the key of
 * http_admission.h: an IPv4 address or an IPv6 /64), and whether one more
 * may be admitted. Pure accounting: no sockets, no clock; http_listener.c
 * calls it at each accept and when a connection's socket is gone.
 * Control thread only (not locked): admit and release assert (unless
 * NDEBUG, as in the release build) that they run on the thread that called
 * moat_connection_counts_new. */
#ifndef MOAT_HTTP_CONNECTIONS_H
#define MOAT_HTTP_CONNECTIONS_H

#include <stddef.h>

typedef struct moat_connection_counts moat_connection_counts;

typedef enum {
    MOAT_CONNECTION_ADMITTED = 0,
    MOAT_CONNECTION_OVER_TOTAL,  /* max_total connections are open */
    MOAT_CONNECTION_OVER_SOURCE, /* this source holds max_per_source already */
} moat_connection_verdict;

/* 0 for either cap: no limit. */
moat_connection_counts *moat_connection_counts_new(size_t max_total, size_t max_per_source);
void moat_connection_counts_free(moat_connection_counts *counts);

/* Counts one more connection from the source `key` (a source key, not an
 * address) if both caps allow it; a refused connection is not counted. */
moat_connection_verdict moat_connection_counts_admit(moat_connection_counts *counts,
                                                     const char *key);
/* Uncounts an admitted connection; a key that holds none is ignored. */
void moat_connection_counts_release(moat_connection_counts *counts, const char *key);

size_t moat_connection_counts_open(const moat_connection_counts *counts);
size_t moat_connection_counts_of(const moat_connection_counts *counts, const char *key);
/* Sources holding at least one connection (the table never keeps others,
 * so it is bounded by the open connections). */
size_t moat_connection_counts_sources(const moat_connection_counts *counts);

#endif

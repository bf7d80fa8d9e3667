/* Admission control for new WHIP sessions and RTP ingests: a token bucket
 * per source (IPv4 address, IPv6 /64 prefix) bounds how fast one client can
 * POST offers; counts per source (IPv4 address, IPv6 /56: what one customer
 * is usually delegated) bound what one client may hold (sessions not yet
 * ICE-connected); caps on live and pending sessions bound what all clients
 * together can hold. Control thread only, except where a function says. */
#ifndef MOAT_HTTP_ADMISSION_H
#define MOAT_HTTP_ADMISSION_H

#include <stddef.h>
#include <stdint.h>

typedef struct moat_admission moat_admission;

/* Why a request (or a connection) was refused before any work, counted on
 * /metrics. */
typedef enum {
    MOAT_REFUSED_BODY_TOO_LARGE = 0,
    MOAT_REFUSED_RATE_LIMITED,
    MOAT_REFUSED_MAX_SESSIONS,
    MOAT_REFUSED_MAX_PENDING,
    MOAT_REFUSED_REQUEST_TIMEOUT,     /* connection closed: request not in within the deadline */
    MOAT_REFUSED_MAX_CONNECTIONS,     /* connection closed at accept: all sources' cap */
    MOAT_REFUSED_MAX_CONNECTIONS_SRC, /* connection closed at accept: one source's cap */
    MOAT_REFUSED_MAX_PENDING_SRC,     /* one source's sessions not yet ICE-connected */
    MOAT_REFUSED_INGEST_PER_SOURCE,   /* one source's live RTP ingests */
    MOAT_REFUSED_WRONG_HOST,          /* /api/ with a Host that does not name the gateway */
    MOAT_REFUSED_CREATE_RATE,         /* POST /api/rooms (a plugin's api_path) too fast */
    MOAT_REFUSED_NOT_TLS,             /* HTTPS port: the first bytes are not a TLS handshake */
    MOAT_REFUSED_TLS_HANDSHAKE,       /* HTTPS port: handshake not done 3 s after the hello */
    MOAT_REFUSED_TLS_RENEGOTIATION,   /* HTTPS port: a handshake record after the handshake */
    MOAT_REFUSED_BAD_CONTENT_LENGTH,  /* a Content-Length that is not one decimal number */
    MOAT_REFUSED_REASON_COUNT
} moat_refusal_reason;

const char *moat_refusal_reason_name(moat_refusal_reason reason);

/* `rate_per_s` offers per second per source with bursts of `burst`; a rate
 * of 0 disables the per-source limit. At most `max_sources` sources are
 * tracked at once (idle ones are forgotten first). */
moat_admission *moat_admission_new(unsigned rate_per_s, unsigned burst, size_t max_sources);
void moat_admission_free(moat_admission *admission);

/* Takes one token for the source at `peer` (an IP address as text; NULL or
 * unparsable text shares one bucket). Returns 0 when allowed, otherwise the
 * whole seconds to wait before the next token (>= 1). */
unsigned moat_admission_take(moat_admission *admission, const char *peer, uint64_t now_us);
/* Sources tracked now (for tests). */
size_t moat_admission_sources(const moat_admission *admission);

/* The key a source is limited under: "4:a.b.c.d" or "6:<first 64 bits>". */
void moat_admission_source_key(const char *peer, char *out, size_t size);
/* The same with the IPv6 prefix cut after `prefix_bits` (8..128, a multiple
 * of 8): "6/56:<first 56 bits>". IPv4 (and v4-mapped) keys are the address. */
void moat_admission_source_key_prefix(const char *peer, unsigned prefix_bits, char *out,
                                      size_t size);

/* What each source holds (pending sessions): a counter per source key that
 * sessions hold a pointer to and decrement on their worker when they stop
 * counting (atomic), so the control thread never waits for them. A counter
 * is freed only once it is zero, so no session holds it then. */
typedef struct moat_source_counts moat_source_counts;

moat_source_counts *moat_source_counts_new(void);
/* Frees the table; every counter must be zero (sessions gone). */
void moat_source_counts_free(moat_source_counts *counts);
/* The counter of `key`, created at zero (zero counters of other keys are
 * dropped from time to time). The pointer stays valid while it is above
 * zero, and until the next call otherwise. */
int *moat_source_counts_get(moat_source_counts *counts, const char *key);
/* Keys held now (for tests). */
size_t moat_source_counts_size(const moat_source_counts *counts);

#endif

/* Admission control for new WHIP sessions: a token bucket per source (IPv4
 * address, IPv6 /64 prefix) bounds how fast one client can POST offers, and
 * caps on live and pending (not yet ICE-connected) sessions bound what all
 * clients together can hold. Control thread only. */
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
    MOAT_REFUSED_WRONG_HOST,          /* /api/ with a Host that does not name the gateway */
    MOAT_REFUSED_CREATE_RATE,         /* POST /api/rooms (a plugin's api_path) too fast */
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

#endif

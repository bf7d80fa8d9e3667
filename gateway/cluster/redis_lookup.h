/* A Redis host name looked up without blocking (GResolver, on its own
 * threads), for the Redis link (redis_link.c). Control thread only: started
 * there, answered there (the main context), abandoned there.
 *
 * Ownership: the lookup owns itself until it answers or is abandoned; after
 * moat_redis_lookup_abandon the callback is never called and the caller
 * must not touch the lookup again (it frees itself when GResolver returns,
 * however late). */
#ifndef MOAT_REDIS_LOOKUP_H
#define MOAT_REDIS_LOOKUP_H

typedef struct moat_redis_lookup moat_redis_lookup;

/* The lookup's answer, once: `address` is the numeric address to connect
 * to (the first IPv4 one, else the first, as hiredis ordered them), or
 * NULL with `error` saying why. The lookup is gone when this returns. */
typedef void (*moat_redis_lookup_fn)(void *user, const char *address, const char *error);

moat_redis_lookup *moat_redis_lookup_start(const char *host, moat_redis_lookup_fn fn, void *user);
void moat_redis_lookup_abandon(moat_redis_lookup *lookup);

#endif

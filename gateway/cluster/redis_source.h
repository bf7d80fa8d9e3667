/* The GLib event-loop glue of a hiredis async context (redis_source.c):
 * attach polls the context's socket from the thread-default main context
 * and drives hiredis's reads and writes; drop detaches it (the context
 * itself is hiredis's). Control thread. */
#ifndef MOAT_REDIS_SOURCE_H
#define MOAT_REDIS_SOURCE_H

#include <glib.h>
#include <hiredis/async.h>

typedef struct moat_redis_source moat_redis_source;

moat_redis_source *moat_redis_source_attach(redisAsyncContext *context);
/* NULL is fine. */
void moat_redis_source_drop(moat_redis_source *source);

#endif

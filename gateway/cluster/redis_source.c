/* Owns the GLib event-loop glue of one hiredis async context: a GSource
 * polling its socket. hiredis's own GLib adapter (hiredis/adapters/glib.h)
 * would call redisAsyncHandleRead on a context that redisAsyncHandleWrite
 * just freed (a write error with both events pending), so this file carries
 * the same few lines with that guard. Control thread. */
#include "cluster/redis_source.h"

struct moat_redis_source {
    GSource source;
    GPollFD poll_fd;
    redisAsyncContext *context; /* NULL once hiredis frees it */
};

static void source_update(moat_redis_source *source, gushort add, gushort remove)
{
    source->poll_fd.events = (gushort)((source->poll_fd.events | add) & ~remove);
    GMainContext *context = g_source_get_context(&source->source);
    if (context)
        g_main_context_wakeup(context);
}

static void add_read(void *data)
{
    source_update(data, G_IO_IN, 0);
}
static void del_read(void *data)
{
    source_update(data, 0, G_IO_IN);
}
static void add_write(void *data)
{
    source_update(data, G_IO_OUT, 0);
}
static void del_write(void *data)
{
    source_update(data, 0, G_IO_OUT);
}

static void cleanup(void *data)
{
    moat_redis_source *source = data;
    source->poll_fd.events = 0;
    source->context = NULL;
}

static gboolean source_prepare(GSource *base, gint *timeout)
{
    moat_redis_source *source = (moat_redis_source *)base;
    *timeout = -1;
    return (source->poll_fd.events & source->poll_fd.revents) != 0;
}

static gboolean source_check(GSource *base)
{
    moat_redis_source *source = (moat_redis_source *)base;
    return (source->poll_fd.events & source->poll_fd.revents) != 0;
}

static gboolean source_dispatch(GSource *base, GSourceFunc callback, gpointer data)
{
    moat_redis_source *source = (moat_redis_source *)base;
    gushort revents = source->poll_fd.revents;
    source->poll_fd.revents = 0;
    if ((revents & (G_IO_OUT | G_IO_ERR | G_IO_HUP)) && source->context)
        redisAsyncHandleWrite(source->context);
    if ((revents & (G_IO_IN | G_IO_ERR | G_IO_HUP)) && source->context)
        redisAsyncHandleRead(source->context);
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs source_funcs = {
    .prepare = source_prepare,
    .check = source_check,
    .dispatch = source_dispatch,
};

moat_redis_source *moat_redis_source_attach(redisAsyncContext *context)
{
    moat_redis_source *source =
        (moat_redis_source *)g_source_new(&source_funcs, sizeof(moat_redis_source));
    source->context = context;
    source->poll_fd.fd = context->c.fd;
    g_source_add_poll(&source->source, &source->poll_fd);
    context->ev.addRead = add_read;
    context->ev.delRead = del_read;
    context->ev.addWrite = add_write;
    context->ev.delWrite = del_write;
    context->ev.cleanup = cleanup;
    context->ev.data = source;
    g_source_attach(&source->source, g_main_context_get_thread_default());
    return source;
}

void moat_redis_source_drop(moat_redis_source *source)
{
    if (!source)
        return;
    source->context = NULL;
    g_source_destroy(&source->source);
    g_source_unref(&source->source);
}

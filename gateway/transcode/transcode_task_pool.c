/* Owns a transcoding pipeline's streaming thread: a GstTaskPool whose one
 * thread is made up front and runs the appsrc task's function when
 * GStreamer pushes it (transcode_task_pool.h). */
#include "transcode/transcode_task_pool.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct {
    GstTaskPool parent;
    GThread *thread;
    GMutex lock;
    GCond cond;
    GstTaskPoolFunction function; /* pushed, not yet taken by the thread */
    gpointer data;
    bool pending, running, quit;
} MoatTaskPool;

typedef struct {
    GstTaskPoolClass parent_class;
} MoatTaskPoolClass;

G_DEFINE_TYPE(MoatTaskPool, moat_task_pool, GST_TYPE_TASK_POOL)

static gpointer pool_thread(gpointer data)
{
    MoatTaskPool *pool = data;
    g_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->pending && !pool->quit)
            g_cond_wait(&pool->cond, &pool->lock);
        if (!pool->pending)
            break;
        GstTaskPoolFunction function = pool->function;
        gpointer function_data = pool->data;
        pool->pending = false;
        pool->running = true;
        g_mutex_unlock(&pool->lock);
        function(function_data);
        g_mutex_lock(&pool->lock);
        pool->running = false;
        g_cond_broadcast(&pool->cond);
    }
    g_mutex_unlock(&pool->lock);
    return NULL;
}

static void pool_prepare(GstTaskPool *base, GError **error)
{
    (void)base;
    (void)error; /* the thread is made at new */
}

static void pool_cleanup(GstTaskPool *base)
{
    (void)base; /* the thread ends at finalize */
}

static gpointer pool_push(GstTaskPool *base, GstTaskPoolFunction function, gpointer data,
                          GError **error)
{
    MoatTaskPool *pool = (MoatTaskPool *)base;
    g_mutex_lock(&pool->lock);
    while ((pool->pending || pool->running) && !pool->quit)
        g_cond_wait(&pool->cond, &pool->lock);
    bool refused = pool->quit;
    if (!refused) {
        pool->function = function;
        pool->data = data;
        pool->pending = true;
        g_cond_broadcast(&pool->cond);
    }
    g_mutex_unlock(&pool->lock);
    if (refused) {
        g_set_error(error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED, "transcoder pool stopping");
        return NULL;
    }
    return pool; /* the id join gets back */
}

static void pool_join(GstTaskPool *base, gpointer id)
{
    (void)id;
    MoatTaskPool *pool = (MoatTaskPool *)base;
    g_mutex_lock(&pool->lock);
    while (pool->pending || pool->running)
        g_cond_wait(&pool->cond, &pool->lock);
    g_mutex_unlock(&pool->lock);
}

static void pool_finalize(GObject *object)
{
    MoatTaskPool *pool = (MoatTaskPool *)object;
    if (pool->thread) {
        g_mutex_lock(&pool->lock);
        pool->quit = true;
        g_cond_broadcast(&pool->cond);
        g_mutex_unlock(&pool->lock);
        g_thread_join(pool->thread);
    }
    g_mutex_clear(&pool->lock);
    g_cond_clear(&pool->cond);
    G_OBJECT_CLASS(moat_task_pool_parent_class)->finalize(object);
}

static void moat_task_pool_class_init(MoatTaskPoolClass *klass)
{
    GstTaskPoolClass *pool_class = GST_TASK_POOL_CLASS(klass);
    pool_class->prepare = pool_prepare;
    pool_class->cleanup = pool_cleanup;
    pool_class->push = pool_push;
    pool_class->join = pool_join;
    G_OBJECT_CLASS(klass)->finalize = pool_finalize;
}

static void moat_task_pool_init(MoatTaskPool *pool)
{
    g_mutex_init(&pool->lock);
    g_cond_init(&pool->cond);
}

GstTaskPool *moat_transcode_task_pool_new(char *error, size_t error_size)
{
    MoatTaskPool *pool = g_object_new(moat_task_pool_get_type(), NULL);
    if (g_object_is_floating(pool))
        gst_object_ref_sink(pool);
    GError *thread_error = NULL;
    pool->thread = g_thread_try_new("moat-transcode-src", pool_thread, pool, &thread_error);
    if (!pool->thread) {
        snprintf(error, error_size, "transcoder: no thread: %s", thread_error->message);
        g_error_free(thread_error);
        gst_object_unref(pool);
        return NULL;
    }
    return &pool->parent;
}

void moat_transcode_task_pool_adopt(GstTaskPool *pool, GstMessage *message, const GstElement *owner)
{
    if (GST_MESSAGE_TYPE(message) != GST_MESSAGE_STREAM_STATUS)
        return;
    GstStreamStatusType type;
    GstElement *from = NULL;
    gst_message_parse_stream_status(message, &type, &from);
    const GValue *value = gst_message_get_stream_status_object(message);
    if (type != GST_STREAM_STATUS_TYPE_CREATE || from != owner || !value ||
        !G_VALUE_HOLDS(value, GST_TYPE_TASK))
        return;
    gst_task_set_pool(GST_TASK(g_value_get_object(value)), pool);
}

/* Owns a transcoded stream's two transcoders, their output sockets and the
 * destinations the worker publishes to them (call_transcode.h). */
#include "call/call_transcode.h"

#include <errno.h>
#include <glib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    moat_call_transcode *owner;
    int side; /* the leg whose packets this direction reads */
    moat_transcoder *transcoder;
    /* Where the output goes: the other party. */
    int fd;
    GMutex lock;
    struct sockaddr_in6 to;        /* under lock */
    struct sockaddr_in6 worker_to; /* the worker's last published copy */
} direction;

struct moat_call_transcode {
    direction directions[2];
    atomic_uint_fast64_t send_failed, no_destination;
};

/* ---- output: GStreamer's threads ---- */

static void send_output(void *context, const uint8_t *packet, size_t length)
{
    direction *d = context;
    g_mutex_lock(&d->lock);
    struct sockaddr_in6 to = d->to;
    g_mutex_unlock(&d->lock);
    if (to.sin6_family != AF_INET6) {
        atomic_fetch_add_explicit(&d->owner->no_destination, 1, memory_order_relaxed);
        return;
    }
    if (sendto(d->fd, packet, length, MSG_DONTWAIT, (const struct sockaddr *)&to, sizeof to) < 0)
        atomic_fetch_add_explicit(&d->owner->send_failed, 1, memory_order_relaxed);
}

/* ---- the worker ---- */

void moat_call_transcode_push(moat_call_transcode *transcode, int side, const uint8_t *packet,
                              size_t length, const struct sockaddr_in6 *to)
{
    direction *d = &transcode->directions[side & 1];
    if (memcmp(&d->worker_to, to, sizeof *to) != 0) {
        d->worker_to = *to;
        g_mutex_lock(&d->lock);
        d->to = *to;
        g_mutex_unlock(&d->lock);
    }
    moat_transcoder_push(d->transcoder, packet, length);
}

/* ---- control thread ---- */

static void transcode_free(moat_call_transcode *transcode)
{
    for (int side = 0; side < 2; side++) {
        direction *d = &transcode->directions[side];
        moat_transcoder_free(d->transcoder); /* no output after this */
        if (d->fd >= 0)
            close(d->fd);
        g_mutex_clear(&d->lock);
    }
    g_free(transcode);
}

moat_call_transcode *moat_call_transcode_new(const moat_transcoder_codec codecs[2],
                                             const int rtp_fds[2], char *error, size_t error_size)
{
    moat_call_transcode *transcode = g_new0(moat_call_transcode, 1);
    for (int side = 0; side < 2; side++) {
        direction *d = &transcode->directions[side];
        d->owner = transcode;
        d->side = side;
        g_mutex_init(&d->lock);
        d->fd = dup(rtp_fds[1 - side]);
    }
    for (int side = 0; side < 2; side++) {
        direction *d = &transcode->directions[side];
        if (d->fd < 0) {
            snprintf(error, error_size, "transcoder socket: %s", g_strerror(errno));
            transcode_free(transcode);
            return NULL;
        }
        d->transcoder = moat_transcoder_new(&codecs[side], &codecs[1 - side], g_random_int(),
                                            send_output, d, error, error_size);
        if (!d->transcoder) {
            transcode_free(transcode);
            return NULL;
        }
    }
    return transcode;
}

void moat_call_transcode_get_stats(moat_call_transcode *transcode, moat_call_transcode_stats *stats)
{
    for (int side = 0; side < 2; side++)
        moat_transcoder_get_stats(transcode->directions[side].transcoder, &stats->directions[side]);
    stats->send_failed = atomic_load_explicit(&transcode->send_failed, memory_order_relaxed);
    stats->no_destination = atomic_load_explicit(&transcode->no_destination, memory_order_relaxed);
}

static gboolean free_later(void *data)
{
    transcode_free(data);
    return G_SOURCE_REMOVE;
}

void moat_call_transcode_release(moat_call_transcode *transcode, bool on_worker)
{
    if (!transcode)
        return;
    if (on_worker)
        g_idle_add(free_later, transcode);
    else
        transcode_free(transcode);
}

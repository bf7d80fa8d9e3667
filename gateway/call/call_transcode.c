/* Owns a transcoded stream's two transcoders, the queues of their output
 * back to the worker and the eventfd that wakes it (call_transcode.h). */
#include "call/call_transcode.h"

#include "record/record_ring.h"

#include <errno.h>
#include <glib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define OUTPUT_SLOTS 64

typedef struct {
    moat_call_transcode *owner;
    moat_transcoder *transcoder;
    moat_record_ring *output; /* for the party behind the other leg */
} direction;

struct moat_call_transcode {
    direction directions[2];
    int wake_fd;
    atomic_uint_fast64_t output_dropped;
};

/* ---- output: a transcoder's thread (one at a time per direction) ---- */

static void queue_output(void *context, const uint8_t *packet, size_t length)
{
    direction *d = context;
    if (!moat_record_ring_push(d->output, packet, length, 0)) {
        atomic_fetch_add_explicit(&d->owner->output_dropped, 1, memory_order_relaxed);
        return;
    }
    uint64_t one = 1;
    if (write(d->owner->wake_fd, &one, sizeof one) < 0) {
        /* EAGAIN: the counter is saturated, the worker is woken anyway */
    }
}

/* ---- the worker ---- */

int moat_call_transcode_fd(const moat_call_transcode *transcode)
{
    return transcode->wake_fd;
}

void moat_call_transcode_push(moat_call_transcode *transcode, int side, const uint8_t *packet,
                              size_t length)
{
    moat_transcoder_push(transcode->directions[side & 1].transcoder, packet, length,
                         g_get_monotonic_time());
}

void moat_call_transcode_woken(moat_call_transcode *transcode)
{
    uint64_t count;
    if (read(transcode->wake_fd, &count, sizeof count) < 0) {
        /* EAGAIN: nothing was signalled */
    }
}

size_t moat_call_transcode_pop(moat_call_transcode *transcode, int to_side, uint8_t *buffer,
                               size_t size)
{
    moat_record_ring *ring = transcode->directions[1 - (to_side & 1)].output;
    const moat_record_slot *slot = moat_record_ring_peek(ring);
    if (!slot)
        return 0;
    size_t length = slot->length <= size ? slot->length : 0;
    memcpy(buffer, slot->data, length);
    moat_record_ring_release(ring);
    return length ? length : moat_call_transcode_pop(transcode, to_side, buffer, size);
}

/* ---- control thread ---- */

static void transcode_free(moat_call_transcode *transcode)
{
    for (int side = 0; side < 2; side++) {
        direction *d = &transcode->directions[side];
        moat_transcoder_free(d->transcoder); /* no output after this */
        moat_record_ring_free(d->output);
    }
    if (transcode->wake_fd >= 0)
        close(transcode->wake_fd);
    g_free(transcode);
}

moat_call_transcode *moat_call_transcode_new(const moat_transcoder_codec codecs[2], char *error,
                                             size_t error_size)
{
    moat_call_transcode *transcode = g_new0(moat_call_transcode, 1);
    transcode->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (transcode->wake_fd < 0) {
        snprintf(error, error_size, "transcoder wake-up: %s", g_strerror(errno));
        transcode_free(transcode);
        return NULL;
    }
    for (int side = 0; side < 2; side++) {
        direction *d = &transcode->directions[side];
        d->owner = transcode;
        d->output = moat_record_ring_new(OUTPUT_SLOTS);
    }
    for (int side = 0; side < 2; side++) {
        direction *d = &transcode->directions[side];
        d->transcoder = moat_transcoder_new(&codecs[side], &codecs[1 - side], g_random_int(),
                                            queue_output, d, error, error_size);
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
    stats->output_dropped = atomic_load_explicit(&transcode->output_dropped, memory_order_relaxed);
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

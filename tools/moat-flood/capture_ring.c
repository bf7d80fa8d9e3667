/* The ring of a session's last legitimate SRTP packets for the replay attack:
 * the media loop stores, the attack thread copies out packets old enough,
 * under a mutex. */
#include "capture_ring.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t captured_us;
    uint16_t length; /* 0: empty */
    uint8_t data[CAPTURE_MAX_PACKET];
} capture_slot;

struct capture_ring {
    pthread_mutex_t lock;
    capture_slot slots[CAPTURE_SLOTS];
    unsigned next;
};

capture_ring *capture_ring_new(void)
{
    capture_ring *r = calloc(1, sizeof *r);
    if (r != NULL)
        pthread_mutex_init(&r->lock, NULL);
    return r;
}

void capture_ring_free(capture_ring *r)
{
    if (r == NULL)
        return;
    pthread_mutex_destroy(&r->lock);
    free(r);
}

void capture_ring_store(capture_ring *r, const uint8_t *packet, size_t length, uint64_t now_us)
{
    if (length == 0 || length > CAPTURE_MAX_PACKET)
        return;
    pthread_mutex_lock(&r->lock);
    capture_slot *slot = &r->slots[r->next];
    memcpy(slot->data, packet, length);
    slot->length = (uint16_t)length;
    slot->captured_us = now_us;
    r->next = (r->next + 1) % CAPTURE_SLOTS;
    pthread_mutex_unlock(&r->lock);
}

size_t capture_ring_pick(capture_ring *r, uint64_t now_us, uint64_t min_age_us, unsigned *cursor,
                         uint8_t *out, size_t capacity)
{
    size_t length = 0;
    pthread_mutex_lock(&r->lock);
    for (unsigned tried = 0; tried < CAPTURE_SLOTS && length == 0; tried++) {
        capture_slot *slot = &r->slots[*cursor % CAPTURE_SLOTS];
        *cursor = (*cursor + 1) % CAPTURE_SLOTS;
        if (slot->length == 0 || slot->length > capacity || slot->captured_us + min_age_us > now_us)
            continue;
        memcpy(out, slot->data, slot->length);
        length = slot->length;
    }
    pthread_mutex_unlock(&r->lock);
    return length;
}

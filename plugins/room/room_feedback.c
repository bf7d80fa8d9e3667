/* Congestion feedback to publishers (REMB, draft-alvestrand-rmcat-remb):
 * each publisher is told what its subscribers' own estimates (their REMB,
 * fresh within ROOM_ESTIMATE_AGE_US) add up to (room_feedback_aggregate:
 * the slowest viewer's, outliers left out, never below [room]
 * remb_floor_bps), capped by the room's max_bitrate and the publisher's
 * own (room_message.c), so its encoder sends what its viewers can take. A simulcast publisher is
 * capped only by those maxima: each viewer picks the layer it can take, and a low viewer's estimate
 * would make the encoder turn its upper layers off. Sent from the publisher's timer, on its worker,
 * when the value changes or every ROOM_REMB_INTERVAL_US. A subscriber's
 * keyframe requests are bounded here too: one per
 * ROOM_KEYFRAME_REQUEST_INTERVAL_US reaches its publisher
 * (room_feedback_keyframe_allowed). */
#include "room.h"

#include "rtp/rtcp_packet.h"

#include <stdlib.h>
#include <string.h>

void room_feedback_note_remb(room_peer *subscriber, const moat_rtcp_fb *fb, uint64_t now_us)
{
    moat_rtcp_remb remb;
    if (moat_rtcp_parse_remb(fb, &remb) != MOAT_RTP_OK || remb.bitrate == 0)
        return;
    /* Past any cap the API takes (REMB reaches 2^64): as told to the
     * publisher and shown by the API, the largest rate Moat knows. */
    uint64_t bps = remb.bitrate < ROOM_MAX_BITRATE ? remb.bitrate : ROOM_MAX_BITRATE;
    atomic_store_explicit(&subscriber->estimate_bps, bps, memory_order_relaxed);
    atomic_store_explicit(&subscriber->estimate_us, now_us, memory_order_relaxed);
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Any REMB a subscriber sends is taken as it comes, so one viewer (broken,
 * on a bad link, or hostile: REMB of 1 bit/s) could throttle the publisher
 * for everyone. Two rules bound what one viewer can do:
 *  - With three or more estimates, those below a quarter of the median are
 *    outliers and left out: following them would cut every other viewer's
 *    picture by more than 4x for one viewer, which keeps what it can take
 *    (loss and NACK; in simulcast rooms it picks a lower layer). The median
 *    needs more than half of the viewers to move, so a minority cannot
 *    drag it down. With one or two estimates there is no majority to tell
 *    an outlier by: the lowest counts.
 *  - The result never goes below `floor_bps` (the [room] remb_floor_bps,
 *    100 kbit/s by default): below that no encoder makes usable video, and
 *    even a majority of hostile viewers cannot stall the publisher.
 * Then the lowest remaining estimate: the slowest ordinary viewer. Sorts
 * `estimates`; 0 when n is 0. */
uint64_t room_feedback_aggregate(uint64_t *estimates, size_t n, uint64_t floor_bps)
{
    if (n == 0)
        return 0;
    qsort(estimates, n, sizeof *estimates, compare_u64);
    size_t first = 0;
    if (n >= 3) {
        uint64_t median = estimates[n / 2];
        while (first < n && estimates[first] < median / 4)
            first++;
    }
    uint64_t target = estimates[first];
    return target < floor_bps ? floor_bps : target;
}

static uint64_t lower(uint64_t a, uint64_t b)
{
    if (a == 0)
        return b;
    return b != 0 && b < a ? b : a;
}

/* The publisher's target: 0 when nothing limits it. */
static uint64_t target_bps(room_peer *publisher, uint64_t now_us)
{
    room *r = publisher->room;
    uint64_t target = lower((uint64_t)r->max_bitrate, atomic_load(&publisher->max_bitrate));
    if (publisher->n_layers > 1)
        return target;
    uint64_t estimates[ROOM_MAX_SUBSCRIBERS];
    size_t n = 0;
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->n_subscribers && n < ROOM_MAX_SUBSCRIBERS; i++) {
        room_peer *s = r->subscribers[i];
        uint64_t at = atomic_load_explicit(&s->estimate_us, memory_order_relaxed);
        if (s->source != publisher || at == 0 || now_us - at > ROOM_ESTIMATE_AGE_US)
            continue;
        estimates[n++] = atomic_load_explicit(&s->estimate_bps, memory_order_relaxed);
    }
    pthread_mutex_unlock(&r->lock);
    return lower(target, room_feedback_aggregate(estimates, n, room_config.remb_floor_bps));
}

static uint32_t sender_ssrc(const room_peer *publisher)
{
    for (size_t i = 0; i < publisher->n_media; i++) {
        if (publisher->media[i].local_ssrc)
            return publisher->media[i].local_ssrc;
    }
    return 1;
}

/* Does the publisher want REMB at all (goog-remb on one of its codecs)? */
static bool negotiated_remb(const room_peer *publisher)
{
    for (size_t i = 0; i < publisher->n_media; i++) {
        const moat_media_info *m = &publisher->media[i];
        for (size_t c = 0; c < m->n_codecs; c++) {
            if (m->codecs[c].rtcp_fb & MOAT_RTCP_FB_REMB)
                return true;
        }
    }
    return false;
}

void room_feedback_tick(room_peer *publisher, uint64_t now_us)
{
    if (!publisher->publisher || !negotiated_remb(publisher))
        return;
    uint64_t target = target_bps(publisher, now_us);
    uint64_t last = atomic_load_explicit(&publisher->remb_bps, memory_order_relaxed);
    bool due = now_us - publisher->remb_last_us >= ROOM_REMB_INTERVAL_US;
    if (target == 0 || (target == last && !due))
        return;
    uint32_t ssrcs[2];
    size_t n = 0;
    for (int k = 0; k < 2; k++) {
        uint32_t ssrc = atomic_load(&publisher->ssrcs[k]);
        if (ssrc)
            ssrcs[n++] = ssrc;
    }
    if (n == 0)
        return; /* nothing received yet: nobody to tell */
    uint8_t buffer[64];
    moat_rtcp_writer writer;
    moat_rtcp_writer_init(&writer, buffer, sizeof buffer);
    if (moat_rtcp_build_remb(&writer, sender_ssrc(publisher), target, ssrcs, n) != MOAT_RTP_OK ||
        publisher->gateway->send_rtcp(publisher->handle, buffer, writer.length) != 0) {
        atomic_fetch_add_explicit(&publisher->remb_failed, 1, memory_order_relaxed);
        return;
    }
    publisher->remb_last_us = now_us;
    atomic_store_explicit(&publisher->remb_bps, target, memory_order_relaxed);
    atomic_fetch_add_explicit(&publisher->remb_sent, 1, memory_order_relaxed);
}

bool room_feedback_keyframe_allowed(room_peer *subscriber, uint64_t now_us)
{
    if (subscriber->relay)
        return true;
    uint64_t last = subscriber->keyframe_passed_us;
    if (last != 0 && now_us - last < ROOM_KEYFRAME_REQUEST_INTERVAL_US) {
        atomic_fetch_add_explicit(&subscriber->keyframe_requests_dropped, 1, memory_order_relaxed);
        subscriber->keyframe_owed = true;
        return false;
    }
    subscriber->keyframe_passed_us = now_us != 0 ? now_us : 1;
    subscriber->keyframe_owed = false;
    return true;
}

bool room_feedback_keyframe_owed(room_peer *subscriber, uint64_t now_us)
{
    if (!subscriber->keyframe_owed ||
        now_us - subscriber->keyframe_passed_us < ROOM_KEYFRAME_REQUEST_INTERVAL_US)
        return false;
    subscriber->keyframe_owed = false;
    subscriber->keyframe_passed_us = now_us != 0 ? now_us : 1;
    return true;
}

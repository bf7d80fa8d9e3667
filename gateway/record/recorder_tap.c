/* A recorder's media tap: what the session's worker calls for each RTP
 * packet (one copy into the recorder's queue, or a counted drop), and the
 * attach and detach that bracket it. Media worker only; never GStreamer. */
#include "record/recorder_private.h"

#include <glib.h>

/* Video SSRCs (simulcast layers) compared before one is recorded. */
#define VIDEO_CHOOSE_US 500000

int moat_recorder_stream_of(moat_recorder *recorder, uint8_t payload_type)
{
    for (int i = 0; i < STREAM_COUNT; i++) {
        if (recorder->streams[i].used && recorder->streams[i].codec.payload_type == payload_type)
            return i;
    }
    return -1;
}

static void tap_attach(void *user, const moat_tap_codec *codecs, size_t n_codecs)
{
    moat_recorder *recorder = user;
    for (size_t i = 0; i < n_codecs; i++) {
        int slot = codecs[i].kind == MOAT_MEDIA_KIND_AUDIO ? STREAM_AUDIO : STREAM_VIDEO;
        if (recorder->streams[slot].used || moat_recorder_known_codec(codecs[i].codec) < 0)
            continue;
        recorder->streams[slot].used = true;
        recorder->streams[slot].codec = codecs[i];
    }
    atomic_store_explicit(&recorder->attached, true, memory_order_release);
}

static uint32_t ssrc_of(const uint8_t *packet)
{
    return (uint32_t)packet[8] << 24 | (uint32_t)packet[9] << 16 | (uint32_t)packet[10] << 8 |
           packet[11];
}

static bool tap_rtp(void *user, const uint8_t *packet, size_t length, uint64_t arrival_us)
{
    moat_recorder *recorder = user;
    if (length < 12 || atomic_load_explicit(&recorder->finished, memory_order_relaxed))
        return false;
    int stream = moat_recorder_stream_of(recorder, packet[1] & 0x7f);
    if (stream < 0)
        return false; /* RTX, FEC or a codec we do not record */
    /* One SSRC per track: of simulcast layers, the largest. */
    moat_record_ssrc_verdict verdict =
        moat_record_ssrc_choose(&recorder->streams[stream].ssrc, ssrc_of(packet), length,
                                arrival_us, stream == STREAM_VIDEO ? VIDEO_CHOOSE_US : 0);
    if (verdict == MOAT_RECORD_SSRC_SKIP)
        return false;
    moat_record_drop drop = MOAT_RECORD_DROP_COUNT;
    if (length > MOAT_RECORD_RING_PACKET_MAX)
        drop = MOAT_RECORD_DROP_TOO_BIG;
    else if (!moat_record_ring_push(recorder->ring, packet, length, arrival_us))
        drop = MOAT_RECORD_DROP_QUEUE_FULL;
    if (drop != MOAT_RECORD_DROP_COUNT)
        atomic_fetch_add_explicit(&recorder->dropped[drop], 1, memory_order_relaxed);
    /* A keyframe to start the video from, on the SSRC it records. */
    return stream == STREAM_VIDEO && verdict == MOAT_RECORD_SSRC_RECORD_FIRST;
}

static void tap_detach(void *user)
{
    moat_recorder *recorder = user;
    atomic_store_explicit(&recorder->detached, true, memory_order_release);
}

static const moat_media_tap_ops recorder_tap_ops = {
    .on_attach = tap_attach,
    .on_rtp = tap_rtp,
    .on_detach = tap_detach,
};

moat_media_tap moat_recorder_tap(moat_recorder *recorder)
{
    return (moat_media_tap){.ops = &recorder_tap_ops, .user = recorder};
}

/* libFuzzer target for the temporal layer renumbering (room_temporal.h):
 * the input is a stream of packets as a publisher could send them
 * (sequence number, picture id and descriptor bits: TID, layer sync,
 * frame start, reordering and repeats included) with the subscriber's
 * target changing between them. Invariants: what is forwarded never
 * repeats an output sequence number for another input, and outputs that
 * arrive in order go up by one (no gap closed up wrongly or left open)
 * while the input itself had no gap and nothing came late. */
#include <stdlib.h>
#include <string.h>

#include "room_temporal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    room_gap_map sequences, pictures;
    room_gap_init(&sequences, 0xffff);
    room_gap_init(&pictures, 0x7fff);
    room_temporal_state t;
    room_temporal_init(&t);
    /* Output -> input of what was forwarded, over the last 2^16 outputs. */
    static int32_t owner[65536];
    memset(owner, -1, sizeof owner);
    uint16_t sequence = 0, picture = 0, last_out = 0;
    bool in_order = true, any = false;
    for (size_t at = 0; at + 3 <= size; at += 3) {
        uint8_t op = data[at];
        t.target = op & 0x03;
        /* Mostly the next packet; sometimes a jump back (late or repeated). */
        if (op & 0x80) {
            sequence = (uint16_t)(sequence - (data[at + 1] & 0x3f));
            in_order = false;
        } else {
            sequence++;
        }
        if (op & 0x40)
            picture = (uint16_t)((picture + 1) & 0x7fff);
        moat_video_descriptor d = {0};
        d.has_tid = true;
        d.tid = data[at + 2] & 0x03;
        d.layer_sync = (data[at + 2] & 0x04) != 0;
        d.begins_frame = (op & 0x40) != 0;
        d.picture_id_bits = 15;
        d.picture_id = picture;
        if (!room_temporal_packet(&t, &d, (data[at + 2] & 0x08) != 0)) {
            room_gap_drop(&sequences, sequence);
            room_gap_drop(&pictures, picture);
            continue;
        }
        uint16_t out, out_picture;
        if (!room_gap_forward(&sequences, sequence, &out))
            continue;
        (void)room_gap_forward(&pictures, picture, &out_picture);
        if (owner[out] >= 0 && owner[out] != sequence)
            abort(); /* two inputs sent under one number */
        owner[out] = sequence;
        if (in_order && any && out != (uint16_t)(last_out + 1))
            abort();
        last_out = out;
        any = true;
    }
    return 0;
}

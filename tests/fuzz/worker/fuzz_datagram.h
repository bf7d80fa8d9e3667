/* What the worker-level fuzz targets share: their input is a run of records
 * (target byte, flags byte, big-endian 16-bit length, bytes), and a record
 * becomes a datagram as a worker's receive buffer would hold it, optionally
 * sized at one of the buffers' limits. Header-only (each target is one
 * binary); fuzzer thread. */
#ifndef MOAT_FUZZ_DATAGRAM_H
#define MOAT_FUZZ_DATAGRAM_H

#include "engine/worker.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A receive buffer's room for a datagram (the worker keeps 64 bytes of
 * headroom); longer datagrams arrive truncated (MSG_TRUNC). */
#define FUZZ_RECEIVE_CAPACITY (MOAT_DATAGRAM_CAPACITY - 64)
/* Flags bit 3: the datagram's length is one of these. */
#define FUZZ_FLAG_AT_LIMIT 0x08

/* A target's buffer limits (n > 0), for FUZZ_FLAG_AT_LIMIT. */
typedef struct {
    const size_t *sizes;
    size_t n;
} fuzz_limits;

/* Fills `datagram` (MOAT_DATAGRAM_CAPACITY bytes) from a record's `length`
 * bytes and returns the datagram's real length; *held: the bytes a receive
 * buffer holds of it. With FUZZ_FLAG_AT_LIMIT the length is
 * limits.sizes[declared % limits.n], the record's bytes repeated to fill it. */
static inline size_t fuzz_datagram_fill(uint8_t *datagram, uint8_t flags, const uint8_t *bytes,
                                        size_t length, size_t declared, fuzz_limits limits,
                                        size_t *held)
{
    if (flags & FUZZ_FLAG_AT_LIMIT) {
        size_t limit = limits.sizes[declared % limits.n];
        size_t fill = limit < FUZZ_RECEIVE_CAPACITY ? limit : FUZZ_RECEIVE_CAPACITY;
        for (size_t i = 0; i < fill; i++)
            datagram[i] = length ? bytes[i % length] : 0;
        length = limit;
    } else {
        memcpy(datagram, bytes, length < FUZZ_RECEIVE_CAPACITY ? length : FUZZ_RECEIVE_CAPACITY);
    }
    *held = length < FUZZ_RECEIVE_CAPACITY ? length : FUZZ_RECEIVE_CAPACITY;
    return length;
}

typedef void (*fuzz_record_feed)(uint8_t target, uint8_t flags, const uint8_t *bytes, size_t length,
                                 size_t declared);

/* Calls `feed` for each record of the input; a record whose length runs
 * past the input gets what is left (declared: the length field). */
static inline void fuzz_records_each(const uint8_t *data, size_t size, fuzz_record_feed feed)
{
    size_t offset = 0;
    while (offset + 4 <= size) {
        uint8_t target = data[offset], flags = data[offset + 1];
        size_t declared = (size_t)data[offset + 2] << 8 | data[offset + 3];
        offset += 4;
        size_t available = size - offset;
        size_t taken = declared < available ? declared : available;
        feed(target, flags, data + offset, taken, declared);
        offset += taken;
    }
}

#endif

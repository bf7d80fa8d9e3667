/* Chain tags T[m] keyed by packet index (SRTPPLUS.md section 4): the receiver's table of
 * tags learned from authenticated packets. Learned indexes are sparse (losses,
 * reordering), so each slot of the ring remembers which index it holds, and a slot last
 * written for an index a ring-length away never answers for another. */
#ifndef SRTPPLUS_CHAIN_TABLE_H
#define SRTPPLUS_CHAIN_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct srtpplus_chain_slot {
    uint32_t tag;
    /* (index >> shift) + 1, so 0 means "never written". Truncated to 32 bits: two
     * indexes share a key only 2^(32 + shift) packets apart, far beyond any session;
     * the one index range whose key wraps to 0 merely reads as unknown. */
    uint32_t key;
};

struct srtpplus_chain_table {
    struct srtpplus_chain_slot *slots;
    uint64_t mask;
    unsigned shift;
};

/* Allocates at least min_entries slots (rounded up to a power of two). */
int srtpplus_chain_table_init(struct srtpplus_chain_table *table, size_t min_entries);
void srtpplus_chain_table_release(struct srtpplus_chain_table *table);

static inline uint32_t srtpplus_chain_table_key(const struct srtpplus_chain_table *table,
                                                uint64_t index)
{
    return (uint32_t)(index >> table->shift) + 1;
}

static inline void srtpplus_chain_table_put(struct srtpplus_chain_table *table, uint64_t index,
                                            uint32_t tag)
{
    struct srtpplus_chain_slot *slot = &table->slots[index & table->mask];
    slot->tag = tag;
    slot->key = srtpplus_chain_table_key(table, index);
}

static inline bool srtpplus_chain_table_get(const struct srtpplus_chain_table *table,
                                            uint64_t index, uint32_t *tag)
{
    const struct srtpplus_chain_slot *slot = &table->slots[index & table->mask];
    if (slot->key != srtpplus_chain_table_key(table, index))
        return false;
    *tag = slot->tag;
    return true;
}

#endif

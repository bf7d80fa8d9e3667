/* The receiver's table of chain tags T[m] (SRTPPLUS.md section 4): allocates and
 * frees the ring whose slots remember which packet index they hold. */
#include "srtpplus_chain_table.h"
#include "srtpplus_status.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

int srtpplus_chain_table_init(struct srtpplus_chain_table *table, size_t min_entries)
{
    if (!table || min_entries == 0 || min_entries > ((size_t)1 << 24))
        return SRTPPLUS_ERR_PARAM;
    memset(table, 0, sizeof(*table));
    size_t size = 1;
    unsigned shift = 0;
    while (size < min_entries) {
        size <<= 1;
        shift++;
    }
    table->slots = calloc(size, sizeof(*table->slots));
    if (!table->slots)
        return SRTPPLUS_ERR_NOMEM;
    table->mask = size - 1;
    table->shift = shift;
    return SRTPPLUS_OK;
}

void srtpplus_chain_table_release(struct srtpplus_chain_table *table)
{
    if (!table)
        return;
    if (table->slots) {
        /* Unused future tags are what stops an on-path attacker; do not leave them. */
        OPENSSL_cleanse(table->slots, (table->mask + 1) * sizeof(*table->slots));
        free(table->slots);
    }
    memset(table, 0, sizeof(*table));
}

/* The control thread's table of sessions and their WHIP state (session_registry.h). */
#include "session/session_registry.h"

#include "session/session_handle.h"

#include <glib.h>
#include <openssl/rand.h>
#include <stdio.h>

struct moat_session_registry {
    GHashTable *by_id;  /* id -> record (owned) */
    GHashTable *ending; /* ids (owned) hung up, their end not yet reported */
};

static void record_free(gpointer data)
{
    moat_session_record *record = data;
    if (record->handle)
        moat_session_handle_unref(record->handle);
    g_free(record);
}

moat_session_registry *moat_session_registry_new(void)
{
    moat_session_registry *registry = g_new0(moat_session_registry, 1);
    registry->by_id = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, record_free);
    registry->ending = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return registry;
}

void moat_session_registry_free(moat_session_registry *registry)
{
    if (!registry)
        return;
    g_hash_table_destroy(registry->by_id);
    g_hash_table_destroy(registry->ending);
    g_free(registry);
}

void moat_session_registry_add(moat_session_registry *registry, moat_session_record *record)
{
    g_hash_table_replace(registry->by_id, record->id, record);
}

moat_session_record *moat_session_registry_find(moat_session_registry *registry, const char *id)
{
    return g_hash_table_lookup(registry->by_id, id);
}

bool moat_session_registry_remove(moat_session_registry *registry, const char *id)
{
    bool ending = g_hash_table_remove(registry->ending, id);
    return g_hash_table_remove(registry->by_id, id) || ending;
}

bool moat_session_registry_hang_up(moat_session_registry *registry, const char *id)
{
    if (!g_hash_table_contains(registry->by_id, id))
        return false;
    g_hash_table_add(registry->ending, g_strdup(id));
    g_hash_table_remove(registry->by_id, id);
    return true;
}

size_t moat_session_registry_count(const moat_session_registry *registry)
{
    return g_hash_table_size(registry->by_id);
}

size_t moat_session_registry_count_ending(const moat_session_registry *registry)
{
    return g_hash_table_size(registry->ending);
}

void moat_session_registry_foreach(moat_session_registry *registry,
                                   void (*fn)(moat_session_record *record, void *user), void *user)
{
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, registry->by_id);
    while (g_hash_table_iter_next(&it, &key, &value))
        fn(value, user);
}

void moat_session_registry_new_id(char out[33])
{
    unsigned char bytes[16];
    if (RAND_bytes(bytes, sizeof bytes) != 1) {
        for (size_t i = 0; i < sizeof bytes; i++)
            bytes[i] = (unsigned char)g_random_int();
    }
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

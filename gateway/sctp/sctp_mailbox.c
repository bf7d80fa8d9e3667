/* The mailboxes between usrsctp's callbacks and the associations: conn_output
 * and upcalls only copy packets and raise flags under one mutex; the owner
 * thread takes them later. Found by AF_CONN id, so stale packets drop. */
#include "sctp/sctp_mailbox.h"

#include <pthread.h>
#include <string.h>

#include "sctp/sctp_crc32c.h"

/* A peer that keeps an association busy while its owner stalls must not grow
 * a mailbox without bound; past this, packets are dropped as a congested link
 * would drop them and SCTP retransmits. */
#define MAILBOX_MAX_BYTES (4u * 1024u * 1024u)

/* One mutex for all mailboxes: it is held only to copy a packet or flip a
 * flag, never while calling into usrsctp or a session, so it cannot take part
 * in a lock-order cycle with usrsctp's own locks. */
/* A pthread mutex rather than a GMutex (futex-based): ThreadSanitizer (make
 * tsan) sees the ordering it gives. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static GHashTable *by_id; /* id -> moat_sctp_mailbox */
static GPtrArray *dirty;  /* mailboxes with work their owner has not taken */
static uintptr_t next_id = 1;

static void mark_dirty_locked(moat_sctp_mailbox *mb)
{
    if (mb->in_dirty_list)
        return;
    g_ptr_array_add(dirty, mb);
    mb->in_dirty_list = true;
}

static void unmark_dirty_locked(moat_sctp_mailbox *mb)
{
    if (!mb->in_dirty_list)
        return;
    g_ptr_array_remove_fast(dirty, mb);
    mb->in_dirty_list = false;
}

void moat_sctp_mailbox_register(moat_sctp_mailbox *mb, void *context)
{
    pthread_mutex_lock(&lock);
    if (by_id == NULL) {
        by_id = g_hash_table_new(g_direct_hash, g_direct_equal);
        dirty = g_ptr_array_new();
    }
    /* Ids are never reused, so a late callback for a freed association
     * cannot reach a newer one. Zero is skipped: usrsctp treats a NULL
     * AF_CONN address as unset. */
    mb->id = next_id++;
    mb->context = context;
    mb->packets = g_byte_array_new();
    mb->events = false;
    mb->in_dirty_list = false;
    mb->owner = pthread_self();
    g_hash_table_insert(by_id, (gpointer)mb->id, mb);
    pthread_mutex_unlock(&lock);
}

void moat_sctp_mailbox_unregister(moat_sctp_mailbox *mb)
{
    pthread_mutex_lock(&lock);
    if (by_id != NULL && g_hash_table_lookup(by_id, (gpointer)mb->id) == mb) {
        g_hash_table_remove(by_id, (gpointer)mb->id);
        unmark_dirty_locked(mb);
    }
    if (mb->packets != NULL)
        g_byte_array_unref(mb->packets);
    mb->packets = NULL;
    mb->context = NULL;
    pthread_mutex_unlock(&lock);
}

void moat_sctp_mailbox_claim(moat_sctp_mailbox *mb)
{
    pthread_mutex_lock(&lock);
    mb->owner = pthread_self();
    pthread_mutex_unlock(&lock);
}

bool moat_sctp_mailbox_take(moat_sctp_mailbox *mb, GByteArray **packets, bool *events)
{
    pthread_mutex_lock(&lock);
    bool work = mb->packets->len > 0 || mb->events;
    GByteArray *full = mb->packets;
    mb->packets = *packets;
    *packets = full;
    *events = mb->events;
    mb->events = false;
    unmark_dirty_locked(mb);
    pthread_mutex_unlock(&lock);
    return work;
}

bool moat_sctp_mailbox_next_packet(const GByteArray *packets, size_t *offset,
                                   const uint8_t **packet, size_t *length)
{
    uint32_t record;
    if (*offset + sizeof record > packets->len)
        return false;
    memcpy(&record, packets->data + *offset, sizeof record);
    *packet = packets->data + *offset + sizeof record;
    *length = record;
    *offset += sizeof record + record;
    return true;
}

size_t moat_sctp_mailbox_collect_owned(uintptr_t *ids, size_t capacity)
{
    size_t n = 0;
    pthread_t self = pthread_self();
    pthread_mutex_lock(&lock);
    if (dirty != NULL) {
        for (guint i = dirty->len; i > 0 && n < capacity; i--) {
            moat_sctp_mailbox *mb = g_ptr_array_index(dirty, i - 1);
            if (!pthread_equal(mb->owner, self))
                continue;
            ids[n++] = mb->id;
            g_ptr_array_remove_index_fast(dirty, i - 1);
            mb->in_dirty_list = false;
        }
    }
    pthread_mutex_unlock(&lock);
    return n;
}

void *moat_sctp_mailbox_find_owned(uintptr_t id)
{
    void *context = NULL;
    pthread_mutex_lock(&lock);
    if (by_id != NULL) {
        moat_sctp_mailbox *mb = g_hash_table_lookup(by_id, (gpointer)id);
        if (mb != NULL && pthread_equal(mb->owner, pthread_self()))
            context = mb->context;
    }
    pthread_mutex_unlock(&lock);
    return context;
}

int moat_sctp_mailbox_conn_output(void *address, void *buffer, size_t length, uint8_t tos,
                                  uint8_t set_df)
{
    uint32_t record = (uint32_t)length;
    if (length > UINT32_MAX || length < MOAT_SCTP_COMMON_HEADER_SIZE)
        return -1;
    /* usrsctp runs with checksum offload: the checksum is ours to fill in,
     * before the lock. */
    moat_sctp_packet_set_checksum(buffer, length);
    pthread_mutex_lock(&lock);
    moat_sctp_mailbox *mb = by_id != NULL ? g_hash_table_lookup(by_id, address) : NULL;
    if (mb != NULL && mb->packets->len + sizeof record + length <= MAILBOX_MAX_BYTES) {
        g_byte_array_append(mb->packets, (const guint8 *)&record, sizeof record);
        g_byte_array_append(mb->packets, buffer, (guint)length);
        mark_dirty_locked(mb);
    }
    pthread_mutex_unlock(&lock);
    /* A drop is reported as success: to SCTP it is a loss on the path, which
     * it recovers from; an error would count against the path instead. */
    return 0;
}

void moat_sctp_mailbox_upcall(struct socket *sock, void *arg, int flags)
{
    pthread_mutex_lock(&lock);
    moat_sctp_mailbox *mb = by_id != NULL ? g_hash_table_lookup(by_id, arg) : NULL;
    if (mb != NULL) {
        mb->events = true;
        mark_dirty_locked(mb);
    }
    pthread_mutex_unlock(&lock);
}

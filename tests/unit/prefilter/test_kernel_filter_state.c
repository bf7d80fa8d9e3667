/* What the worker publishes to the kernel filter, on plain memory standing in
 * for the maps the BPF program reads: slots, allowed SSRCs, tag rings filled
 * from a real SRTP+ receiver's precomputed window, and drop counts taken back. */
#include "prefilter/kernel_filter_state.h"
#include "prefilter/stream_guard.h"
#include "srtpplus.h"
#include "srtpplus_kdf.h"
#include "srtpplus_prn.h"

#include <glib.h>
#include <string.h>

typedef struct {
    struct moat_kf_control control;
    struct moat_kf_session sessions[MOAT_KF_MAX_SESSIONS];
    struct moat_kf_ring rings[MOAT_KF_MAX_RINGS];
    moat_kf_state state;
} fixture;

static fixture *fixture_new(void)
{
    fixture *f = g_new0(fixture, 1);
    moat_kf_shared shared = {.control = &f->control, .sessions = f->sessions, .rings = f->rings};
    moat_kf_state_init(&f->state, shared);
    return f;
}

static void fixture_free(fixture *f)
{
    moat_kf_state_clear(&f->state);
    g_free(f);
}

static const int owner_a = 1, owner_b = 2;

static void test_slots(void)
{
    fixture *f = fixture_new();
    g_assert_cmpuint(f->control.strict_tuples, ==, 1);
    g_assert_cmpint(moat_kf_state_slot(&f->state, &owner_a, false), ==, -1);
    int a = moat_kf_state_slot(&f->state, &owner_a, true);
    int b = moat_kf_state_slot(&f->state, &owner_b, true);
    g_assert_cmpint(a, >=, 0);
    g_assert_cmpint(b, !=, a);
    g_assert_cmpint(moat_kf_state_slot(&f->state, &owner_a, true), ==, a);
    /* Active but not enforcing until published so. */
    g_assert_cmpuint(f->sessions[a].flags, ==, MOAT_KF_SESSION_ACTIVE);
    moat_kf_session_view view = {.enforcing = true,
                                 .scheme = MOAT_KF_SCHEME_NONE,
                                 .behind = 1024,
                                 .ahead = 4096,
                                 .min_rtp_len = 12};
    moat_kf_state_publish(&f->state, a, &view);
    g_assert_cmpuint(f->sessions[a].flags, ==, MOAT_KF_SESSION_ACTIVE | MOAT_KF_SESSION_ENFORCING);
    g_assert_cmpuint(f->sessions[a].ahead, ==, 4096);
    /* Released: the program passes everything for it; the slot is reused. */
    f->sessions[a].dropped[MOAT_KF_DROP_TAG] = 7;
    moat_kf_state_release(&f->state, a);
    g_assert_cmpuint(f->sessions[a].flags, ==, 0);
    g_assert_cmpint(moat_kf_state_slot(&f->state, &owner_a, false), ==, -1);
    int again = moat_kf_state_slot(&f->state, &owner_b + 1, true);
    g_assert_cmpint(again, ==, a);
    g_assert_cmpuint(f->sessions[a].dropped[MOAT_KF_DROP_TAG], ==, 0);
    fixture_free(f);
}

static void test_ssrcs_and_rings(void)
{
    fixture *f = fixture_new();
    int a = moat_kf_state_slot(&f->state, &owner_a, true);
    moat_kf_session_view view = {.scheme = MOAT_KF_SCHEME_PRN, .behind = 1024, .ahead = 4096};
    moat_kf_state_publish(&f->state, a, &view);
    for (uint32_t i = 0; i < MOAT_KF_SESSION_SSRCS; i++)
        g_assert_cmpint(moat_kf_state_ssrc(&f->state, a, 0x1000 + i), ==, (int)i);
    g_assert_cmpint(moat_kf_state_ssrc(&f->state, a, 0x2000), ==, -1); /* full */
    g_assert_cmpint(moat_kf_state_ssrc(&f->state, a, 0x1003), ==, 3);  /* known */
    g_assert_cmpuint(f->sessions[a].n_ssrcs, ==, MOAT_KF_SESSION_SSRCS);
    g_assert_cmpuint(f->sessions[a].ssrcs[3].ring, <, MOAT_KF_MAX_RINGS);
    g_assert_cmpuint(f->sessions[a].ssrcs[3].flags, ==, 0);
    g_assert_true(moat_kf_state_set_highest(&f->state, a, 3, 70000));
    g_assert_false(moat_kf_state_set_highest(&f->state, a, 3, 70000));
    g_assert_cmpuint(f->sessions[a].ssrcs[3].flags, ==, MOAT_KF_SSRC_HAS_HIGHEST);
    g_assert_cmpuint(f->sessions[a].ssrcs[3].highest, ==, 70000);

    /* Tags answer only for the index they were written for. */
    uint32_t tag;
    moat_kf_state_put_tag(&f->state, a, 3, 70001, 0xabcdef01u);
    g_assert_true(moat_kf_state_get_tag(&f->state, a, 3, 70001, &tag));
    g_assert_cmphex(tag, ==, 0xabcdef01u);
    g_assert_false(moat_kf_state_get_tag(&f->state, a, 3, 70001 + MOAT_KF_RING_SIZE, &tag));
    g_assert_false(moat_kf_state_get_tag(&f->state, a, 3, 70002, &tag));
    g_assert_false(moat_kf_state_get_tag(&f->state, a, 4, 70001, &tag)); /* another ring */

    /* A stream without SRTP+ gets no ring; rings come back on release. */
    int b = moat_kf_state_slot(&f->state, &owner_b, true);
    moat_kf_session_view legacy = {.scheme = MOAT_KF_SCHEME_NONE};
    moat_kf_state_publish(&f->state, b, &legacy);
    int entry = moat_kf_state_ssrc(&f->state, b, 0x42);
    g_assert_cmpuint(f->sessions[b].ssrcs[entry].ring, ==, MOAT_KF_NO_RING);
    moat_kf_state_release(&f->state, a);
    for (int r = 0; r < MOAT_KF_MAX_RINGS; r++)
        g_assert_false(f->state.ring_used[r]);
    fixture_free(f);
}

/* The receiver's precomputed prn window, exported, holds exactly tag_prn of
 * each index; later exports copy only what the window gained. */
static void test_prn_window_export(void)
{
    uint8_t key[16], salt[14];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)(i * 7 + 1);
    for (int i = 0; i < 14; i++)
        salt[i] = (uint8_t)(i * 3 + 2);
    const uint32_t ssrc = 0x5eed0001u;
    struct srtpplus_receiver_config config;
    srtpplus_receiver_config_init(&config, SRTPPLUS_SCHEME_PRN, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    struct srtpplus_receiver *rx;
    g_assert_cmpint(srtpplus_receiver_new(&config, key, 16, salt, 14, &rx), ==, 0);
    g_assert_cmpint(srtpplus_receiver_add_ssrc(rx, ssrc, 0), ==, 0);
    /* Authenticate indexes 1000..1009 while enforcing, then refill. */
    uint8_t packet[64] = {0x80, 0};
    for (uint64_t index = 1000; index < 1010; index++) {
        packet[2] = (uint8_t)(index >> 8);
        packet[3] = (uint8_t)index;
        packet[8] = ssrc >> 24, packet[9] = ssrc >> 16 & 0xff, packet[10] = ssrc >> 8 & 0xff,
        packet[11] = ssrc & 0xff;
        struct srtpplus_check check;
        srtpplus_receiver_check_rtp(rx, packet, sizeof packet, true, 0, &check);
        size_t length = 40;
        srtpplus_receiver_confirm_rtp(rx, packet, &length, index);
    }
    g_assert_cmpint(srtpplus_receiver_maintain(rx), ==, 0);
    struct srtpplus_window_view window;
    g_assert_true(srtpplus_receiver_rtp_window(rx, ssrc, &window));
    g_assert_cmpuint(window.hi, >, 1009 + 4096);

    fixture *f = fixture_new();
    int slot = moat_kf_state_slot(&f->state, &owner_a, true);
    moat_kf_session_view view = {.scheme = MOAT_KF_SCHEME_PRN, .generation = rx};
    moat_kf_state_publish(&f->state, slot, &view);
    int entry = moat_kf_state_ssrc(&f->state, slot, ssrc);
    size_t written = moat_kf_state_export_window(&f->state, slot, entry, window.tags, window.mask,
                                                 window.lo, window.hi);
    g_assert_cmpuint(written, ==, window.hi - window.lo);
    g_assert_cmpuint(moat_kf_state_export_window(&f->state, slot, entry, window.tags, window.mask,
                                                 window.lo, window.hi),
                     ==, 0);

    uint8_t prn_key[SRTPPLUS_PRN_KEY_LEN];
    struct srtpplus_prn *prn;
    g_assert_cmpint(srtpplus_derive_prn_key(key, 16, salt, 14, prn_key), ==, 0);
    g_assert_cmpint(srtpplus_prn_new(prn_key, &prn), ==, 0);
    for (uint64_t index = window.lo; index < window.hi; index += 97) {
        uint32_t exported, expected;
        g_assert_true(moat_kf_state_get_tag(&f->state, slot, entry, index, &exported));
        g_assert_cmpint(srtpplus_prn_tag(prn, SRTPPLUS_KIND_RTP, ssrc, index, &expected), ==, 0);
        g_assert_cmphex(exported, ==, expected);
    }
    uint32_t tag;
    g_assert_false(moat_kf_state_get_tag(&f->state, slot, entry, window.hi, &tag));

    /* New keys (another receiver): every exported tag is gone. */
    view.generation = prn;
    moat_kf_state_publish(&f->state, slot, &view);
    g_assert_false(moat_kf_state_get_tag(&f->state, slot, entry, window.lo, &tag));

    srtpplus_prn_free(prn);
    srtpplus_receiver_free(rx);
    fixture_free(f);
}

static void test_drops_taken_once(void)
{
    fixture *f = fixture_new();
    int a = moat_kf_state_slot(&f->state, &owner_a, true);
    uint64_t delta[MOAT_KF_REASON_COUNT];
    f->sessions[a].dropped[MOAT_KF_DROP_TAG] = 500;
    f->sessions[a].dropped[MOAT_KF_DROP_INDEX] = 3;
    moat_kf_state_take_drops(&f->state, a, delta);
    g_assert_cmpuint(delta[MOAT_KF_DROP_TAG], ==, 500);
    g_assert_cmpuint(delta[MOAT_KF_DROP_INDEX], ==, 3);
    f->sessions[a].dropped[MOAT_KF_DROP_TAG] = 650;
    moat_kf_state_take_drops(&f->state, a, delta);
    g_assert_cmpuint(delta[MOAT_KF_DROP_TAG], ==, 150);
    g_assert_cmpuint(delta[MOAT_KF_DROP_INDEX], ==, 0);
    f->control.unowned[MOAT_KF_DROP_UNKNOWN_TUPLE] = 9;
    moat_kf_state_take_unowned(&f->state, delta);
    g_assert_cmpuint(delta[MOAT_KF_DROP_UNKNOWN_TUPLE], ==, 9);
    moat_kf_state_take_unowned(&f->state, delta);
    g_assert_cmpuint(delta[MOAT_KF_DROP_UNKNOWN_TUPLE], ==, 0);
    fixture_free(f);
}

/* The program's index estimate is the stream guard's (RFC 3711 App. A). */
static void test_index_estimate_matches_user_space(void)
{
    GRand *rand = g_rand_new_with_seed(14);
    for (int i = 0; i < 100000; i++) {
        uint64_t highest = (uint64_t)g_rand_int_range(rand, 0, 1 << 20);
        uint16_t sequence = (uint16_t)g_rand_int(rand);
        g_assert_cmpuint(moat_kf_estimate_index(highest, sequence), ==,
                         moat_estimate_index(highest, sequence));
    }
    g_rand_free(rand);
}

/* A tuple map of fixed capacity, as the kernel's hash map behaves. */
typedef struct {
    GHashTable *entries; /* tuple bytes -> value */
    guint capacity;
} fake_map;

static guint fake_hash(gconstpointer key)
{
    const struct moat_kf_tuple *t = key;
    return g_int_hash(&t->port) ^ t->address[15];
}

static gboolean fake_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(struct moat_kf_tuple)) == 0;
}

static bool fake_update(void *context, const struct moat_kf_tuple *key, uint32_t value)
{
    fake_map *map = context;
    if (!g_hash_table_contains(map->entries, key) &&
        g_hash_table_size(map->entries) >= map->capacity)
        return false;
    g_hash_table_insert(map->entries, g_memdup2(key, sizeof *key), GUINT_TO_POINTER(value + 1));
    return true;
}

static void fake_remove(void *context, const struct moat_kf_tuple *key)
{
    fake_map *map = context;
    g_hash_table_remove(map->entries, key);
}

static struct moat_kf_tuple tuple(uint16_t port)
{
    struct moat_kf_tuple t;
    memset(&t, 0, sizeof t);
    t.address[10] = t.address[11] = 0xff;
    t.address[12] = 192;
    t.address[15] = (uint8_t)port;
    t.port = g_htons(port);
    return t;
}

/* Once the map overflowed, strict dropping came back only with a restart:
 * now it comes back when room is made, and a session's tuples (however
 * many) leave the map when it ends. */
static void test_tuple_map_recovers(void)
{
    fixture *f = fixture_new();
    fake_map map = {g_hash_table_new_full(fake_hash, fake_equal, g_free, NULL), 4};
    moat_kf_state_set_tuple_ops(&f->state, (moat_kf_tuple_ops){fake_update, fake_remove, &map});
    static const int owner_c = 3;
    /* A has 3 tuples, B 1: the map is full, strict. */
    for (uint16_t p = 1; p <= 3; p++) {
        struct moat_kf_tuple t = tuple(p);
        g_assert_true(moat_kf_state_bind_tuple(&f->state, &owner_a, &t));
    }
    struct moat_kf_tuple b1 = tuple(10);
    g_assert_true(moat_kf_state_bind_tuple(&f->state, &owner_b, &b1));
    g_assert_cmpuint(f->control.strict_tuples, ==, 1);
    /* C's tuple does not fit: unknown tuples pass while it waits. */
    struct moat_kf_tuple c1 = tuple(20);
    g_assert_false(moat_kf_state_bind_tuple(&f->state, &owner_c, &c1));
    g_assert_cmpuint(f->control.strict_tuples, ==, 0);
    size_t waiting = 0;
    g_assert_cmpuint(moat_kf_state_tuples(&f->state, &waiting), ==, 5);
    g_assert_cmpuint(waiting, ==, 1);
    /* Rebinding a tuple that is in the map works while full. */
    g_assert_true(moat_kf_state_bind_tuple(&f->state, &owner_b, &b1));
    /* B unbinds its tuple: C's goes in, strict comes back. */
    moat_kf_state_unbind_tuple(&f->state, &b1);
    g_assert_cmpuint(f->control.strict_tuples, ==, 1);
    g_assert_true(g_hash_table_contains(map.entries, &c1));
    g_assert_cmpuint(g_hash_table_size(map.entries), ==, 4);
    /* Overflow again, then A ends: all three of its tuples leave the map
     * and the waiting ones go in. */
    struct moat_kf_tuple c2 = tuple(21), c3 = tuple(22);
    g_assert_false(moat_kf_state_bind_tuple(&f->state, &owner_c, &c2));
    g_assert_false(moat_kf_state_bind_tuple(&f->state, &owner_c, &c3));
    g_assert_cmpuint(f->control.strict_tuples, ==, 0);
    int slot_a = moat_kf_state_slot(&f->state, &owner_a, false);
    g_assert_cmpint(slot_a, >=, 0);
    moat_kf_state_forget(&f->state, &owner_a);
    g_assert_cmpint(moat_kf_state_slot(&f->state, &owner_a, false), ==, -1);
    for (uint16_t p = 1; p <= 3; p++) {
        struct moat_kf_tuple t = tuple(p);
        g_assert_false(g_hash_table_contains(map.entries, &t));
    }
    g_assert_true(g_hash_table_contains(map.entries, &c2));
    g_assert_true(g_hash_table_contains(map.entries, &c3));
    g_assert_cmpuint(f->control.strict_tuples, ==, 1);
    /* The value is the owner's slot. */
    int slot_c = moat_kf_state_slot(&f->state, &owner_c, false);
    g_assert_cmpuint(GPOINTER_TO_UINT(g_hash_table_lookup(map.entries, &c2)), ==,
                     (guint)slot_c + 1);
    /* C ends: its waiting and mapped tuples all go; nothing is left. */
    struct moat_kf_tuple c4 = tuple(23), c5 = tuple(24);
    g_assert_true(moat_kf_state_bind_tuple(&f->state, &owner_c, &c4));
    g_assert_false(moat_kf_state_bind_tuple(&f->state, &owner_c, &c5));
    moat_kf_state_forget(&f->state, &owner_c);
    g_assert_cmpuint(g_hash_table_size(map.entries), ==, 0);
    g_assert_cmpuint(moat_kf_state_tuples(&f->state, &waiting), ==, 0);
    g_assert_cmpuint(waiting, ==, 0);
    g_assert_cmpuint(f->control.strict_tuples, ==, 1);
    g_hash_table_destroy(map.entries);
    fixture_free(f);
}

/* A tuple several sessions share (cascade legs) is known, so strict
 * dropping keeps it, but passed unchecked: no slot, the untracked value. */
static void test_shared_tuple_passes(void)
{
    fixture *f = fixture_new();
    fake_map map = {g_hash_table_new_full(fake_hash, fake_equal, g_free, NULL), 4};
    moat_kf_state_set_tuple_ops(&f->state, (moat_kf_tuple_ops){fake_update, fake_remove, &map});
    static const int routes = 5;
    struct moat_kf_tuple t = tuple(30);
    g_assert_true(moat_kf_state_pass_tuple(&f->state, &routes, &t));
    g_assert_cmpint(moat_kf_state_slot(&f->state, &routes, false), ==, -1);
    g_assert_cmpuint(GPOINTER_TO_UINT(g_hash_table_lookup(map.entries, &t)), ==,
                     (guint)MOAT_KF_UNTRACKED + 1);
    g_assert_cmpuint(f->control.strict_tuples, ==, 1);
    moat_kf_state_forget(&f->state, &routes);
    g_assert_false(g_hash_table_contains(map.entries, &t));
    g_hash_table_destroy(map.entries);
    fixture_free(f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/kernel-filter/slots", test_slots);
    g_test_add_func("/kernel-filter/tuple-map-recovers", test_tuple_map_recovers);
    g_test_add_func("/kernel-filter/shared-tuple-passes", test_shared_tuple_passes);
    g_test_add_func("/kernel-filter/ssrcs-and-rings", test_ssrcs_and_rings);
    g_test_add_func("/kernel-filter/prn-window-export", test_prn_window_export);
    g_test_add_func("/kernel-filter/drops-taken-once", test_drops_taken_once);
    g_test_add_func("/kernel-filter/index-estimate", test_index_estimate_matches_user_space);
    return g_test_run();
}

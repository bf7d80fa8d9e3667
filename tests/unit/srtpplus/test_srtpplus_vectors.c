/* Reproduces every vector of tests/srtpplus-v1.json: the KDF, prn tags, and the wire
 * bytes of whole packets built with this library's sender around libsrtp. */
#include "srtpplus_test_srtp.h"

#include <glib.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static json_t *vectors;

static const char *str_field(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    g_assert_nonnull(s);
    return s;
}

static uint64_t int_field(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    g_assert_true(json_is_integer(v));
    return (uint64_t)json_integer_value(v);
}

static uint32_t hex_tag(const char *hex)
{
    uint8_t b[4];
    g_assert_cmpuint(test_hex_decode(hex, b, sizeof(b)), ==, 4);
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void test_kdf(void)
{
    json_t *list = json_object_get(vectors, "kdf");
    g_assert_cmpuint(json_array_size(list), >, 0);
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        uint8_t key[32], salt[32], expected[16], out[16];
        size_t key_len = test_hex_decode(str_field(v, "master_key"), key, sizeof(key));
        size_t salt_len = test_hex_decode(str_field(v, "master_salt"), salt, sizeof(salt));
        g_assert_cmpuint(test_hex_decode(str_field(v, "k_prn"), expected, sizeof(expected)), ==,
                         16);
        g_assert_cmpint(srtpplus_derive_prn_key(key, key_len, salt, salt_len, out), ==,
                        SRTPPLUS_OK);
        g_assert_cmpmem(out, 16, expected, 16);
    }
    uint8_t out[16];
    g_assert_cmpint(srtpplus_derive_prn_key(NULL, 16, out, 14, out), ==, SRTPPLUS_ERR_PARAM);
}

static void test_prn(void)
{
    json_t *list = json_object_get(vectors, "prn");
    g_assert_cmpuint(json_array_size(list), >, 0);
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        uint8_t key[16];
        g_assert_cmpuint(test_hex_decode(str_field(v, "k_prn"), key, sizeof(key)), ==, 16);
        struct srtpplus_prn *prn;
        g_assert_cmpint(srtpplus_prn_new(key, &prn), ==, SRTPPLUS_OK);
        uint8_t kind = (uint8_t)int_field(v, "kind");
        uint32_t ssrc = (uint32_t)int_field(v, "ssrc");
        uint64_t index = int_field(v, "index");
        uint32_t tag;
        g_assert_cmpint(srtpplus_prn_tag(prn, kind, ssrc, index, &tag), ==, SRTPPLUS_OK);
        g_assert_cmphex(tag, ==, hex_tag(str_field(v, "tag")));

        /* The batch path must give the same tag wherever the index falls in a batch. */
        uint64_t first = index >= 300 ? index - 300 : 0;
        uint32_t batch[600];
        g_assert_cmpint(srtpplus_prn_tags(prn, kind, ssrc, first, 600, batch), ==, SRTPPLUS_OK);
        if (index - first < 600)
            g_assert_cmphex(batch[index - first], ==, tag);
        uint32_t single;
        g_assert_cmpint(srtpplus_prn_tag(prn, kind, ssrc, first + 599, &single), ==, SRTPPLUS_OK);
        g_assert_cmphex(batch[599], ==, single);
        srtpplus_prn_free(prn);
    }
}

/* Replays the chain vectors' random tags (T[m] for m >= i0 + D) in index order, which
 * is the order the sender draws them in. */
struct replayed_random {
    uint8_t bytes[4096];
    size_t len, pos;
};

static int replay_random(void *arg, uint8_t *out, size_t len)
{
    struct replayed_random *r = arg;
    for (size_t i = 0; i < len; i++)
        out[i] = r->pos < r->len ? r->bytes[r->pos++] : 0;
    return 0;
}

static gint compare_index(gconstpointer a, gconstpointer b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Collects the carried tags of all chain vectors of this i0: random ones go to the
 * replayed source, bootstrap ones must be tag_prn. */
static void collect_carried(json_t *packets, uint64_t i0, uint8_t depth,
                            struct replayed_random *random, GHashTable *carried)
{
    size_t i;
    json_t *v;
    json_array_foreach(packets, i, v)
    {
        if (strcmp(str_field(v, "scheme"), "chain") != 0 || int_field(v, "i0") != i0)
            continue;
        const char *key;
        json_t *tag;
        json_object_foreach(json_object_get(v, "carried"), key, tag)
        {
            uint64_t *m = g_new(uint64_t, 1);
            *m = g_ascii_strtoull(key, NULL, 10);
            g_hash_table_insert(carried, m, GUINT_TO_POINTER(hex_tag(json_string_value(tag))));
        }
    }
    GList *keys = g_list_sort(g_hash_table_get_keys(carried), compare_index);
    for (GList *k = keys; k; k = k->next) {
        uint64_t m = *(uint64_t *)k->data;
        if (m < i0 + depth)
            continue;
        g_assert_cmpuint(random->len + 4, <=, sizeof(random->bytes));
        srtpplus_store_be32(random->bytes + random->len,
                            GPOINTER_TO_UINT(g_hash_table_lookup(carried, k->data)));
        random->len += 4;
    }
    g_list_free(keys);
}

struct packet_vector {
    enum srtpplus_profile profile;
    uint8_t key[32], salt[32];
    size_t key_len, salt_len;
    struct test_packet rtp, wire, original;
    uint32_t ssrc;
};

static void load_packet_vector(json_t *v, struct packet_vector *pv)
{
    g_assert_cmpint(srtpplus_profile_from_name(str_field(v, "profile"), &pv->profile), ==,
                    SRTPPLUS_OK);
    pv->key_len = test_hex_decode(str_field(v, "master_key"), pv->key, sizeof(pv->key));
    pv->salt_len = test_hex_decode(str_field(v, "master_salt"), pv->salt, sizeof(pv->salt));
    pv->rtp.len = test_hex_decode(str_field(v, "rtp"), pv->rtp.data, sizeof(pv->rtp.data));
    pv->wire.len = test_hex_decode(str_field(v, "wire"), pv->wire.data, sizeof(pv->wire.data));
    pv->ssrc = srtpplus_load_be32(pv->rtp.data + 8);
    pv->original = pv->rtp;
}

/* The vector's "rtp" is the plaintext handed to srtp_protect, so for chain it already
 * holds the block; the packet before SRTP+ is it without the block. */
static void remove_block(struct test_packet *p, uint8_t copies)
{
    size_t block_len = 4 * (size_t)copies + 4;
    uint8_t total = p->data[p->len - 1];
    g_assert_cmpuint(total, >=, block_len);
    p->len -= block_len;
    if (total == block_len)
        p->data[0] &= (uint8_t)~0x20;
}

static void check_receive(struct srtpplus_receiver *rx, const struct packet_vector *pv,
                          uint32_t roc)
{
    srtp_t srtp = test_srtp_session(pv->profile, pv->key, pv->salt, pv->ssrc, roc);
    struct test_packet plain;
    bool unprotected;
    enum srtpplus_confirm confirm = SRTPPLUS_CONFIRM_COUNT;
    enum srtpplus_verdict v =
        test_receive_rtp(rx, srtp, &pv->wire, true, 0, &plain, &unprotected, &confirm);
    g_assert_cmpstr(srtpplus_verdict_name(v), ==, "pass");
    g_assert_true(unprotected);
    g_assert_cmpint(confirm, ==, SRTPPLUS_CONFIRMED);
    g_assert_cmpmem(plain.data, plain.len, pv->original.data, pv->original.len);
    srtp_dealloc(srtp);
}

static void test_packets(void)
{
    json_t *packets = json_object_get(vectors, "packets");
    g_assert_cmpuint(json_array_size(packets), >, 0);
    struct srtpplus_sender *chain_tx = NULL;
    struct srtpplus_receiver *chain_rx = NULL;
    srtp_t chain_srtp = NULL;
    struct replayed_random random = {0};
    GHashTable *carried = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    uint64_t chain_i0 = 0;
    uint8_t chain_depth = 0;
    struct packet_vector chain_first;
    size_t i, chain_count = 0;
    json_t *v;
    json_array_foreach(packets, i, v)
    {
        struct packet_vector pv;
        load_packet_vector(v, &pv);
        uint32_t roc = (uint32_t)int_field(v, "roc");
        bool chain = strcmp(str_field(v, "scheme"), "chain") == 0;
        struct srtpplus_sender *tx = NULL;
        srtp_t srtp = NULL;
        struct srtpplus_sender_config cfg;
        struct srtpplus_receiver_config rcfg;
        if (!chain) {
            g_assert_cmpstr(str_field(v, "scheme"), ==, "prn");
            srtpplus_sender_config_init(&cfg, SRTPPLUS_SCHEME_PRN, pv.profile);
            g_assert_cmpint(
                srtpplus_sender_new(&cfg, pv.key, pv.key_len, pv.salt, pv.salt_len, &tx), ==,
                SRTPPLUS_OK);
            g_assert_cmpint(srtpplus_sender_add_ssrc(tx, pv.ssrc, roc), ==, SRTPPLUS_OK);
            srtp = test_srtp_session(pv.profile, pv.key, pv.salt, pv.ssrc, roc);
        } else {
            uint8_t depth = (uint8_t)int_field(v, "depth"),
                    copies = (uint8_t)int_field(v, "copies");
            remove_block(&pv.original, copies);
            if (!chain_tx || int_field(v, "i0") != chain_i0) {
                g_assert_null(chain_tx); /* one chain sequence in the file */
                chain_i0 = int_field(v, "i0");
                chain_depth = depth;
                chain_first = pv;
                collect_carried(packets, chain_i0, depth, &random, carried);
                srtpplus_sender_config_init(&cfg, SRTPPLUS_SCHEME_CHAIN, pv.profile);
                cfg.chain = (struct srtpplus_chain_params){.depth = depth, .copies = copies};
                cfg.random = replay_random;
                cfg.random_arg = &random;
                g_assert_cmpint(
                    srtpplus_sender_new(&cfg, pv.key, pv.key_len, pv.salt, pv.salt_len, &chain_tx),
                    ==, SRTPPLUS_OK);
                g_assert_cmpint(srtpplus_sender_add_ssrc(chain_tx, pv.ssrc, roc), ==, SRTPPLUS_OK);
                chain_srtp = test_srtp_session(pv.profile, pv.key, pv.salt, pv.ssrc, roc);
                srtpplus_receiver_config_init(&rcfg, SRTPPLUS_SCHEME_CHAIN, pv.profile);
                rcfg.chain = cfg.chain;
                g_assert_cmpint(srtpplus_receiver_new(&rcfg, pv.key, pv.key_len, pv.salt,
                                                      pv.salt_len, &chain_rx),
                                ==, SRTPPLUS_OK);
                g_assert_cmpint(srtpplus_receiver_add_ssrc(chain_rx, pv.ssrc, roc), ==,
                                SRTPPLUS_OK);
                /* The first packet of the sequence is i0. */
                g_assert_cmpuint(((uint64_t)roc << 16 | srtpplus_load_be16(pv.rtp.data + 2)), ==,
                                 chain_i0);
            }
            tx = chain_tx;
            srtp = chain_srtp;
            chain_count++;
        }

        /* Sender: prepare must produce the vector's plaintext, protect + tag its wire. */
        struct test_packet p = pv.original;
        g_assert_cmpint(srtpplus_sender_prepare_rtp(tx, p.data, &p.len, sizeof(p.data)), ==,
                        SRTPPLUS_OK);
        g_assert_cmpmem(p.data, p.len, pv.rtp.data, pv.rtp.len);
        int len = (int)p.len;
        g_assert_cmpint(srtp_protect(srtp, p.data, &len), ==, srtp_err_status_ok);
        p.len = (size_t)len;
        g_assert_cmpint(srtpplus_sender_append_tag_rtp(tx, p.data, &p.len, sizeof(p.data)), ==,
                        SRTPPLUS_OK);
        g_assert_cmpmem(p.data, p.len, pv.wire.data, pv.wire.len);
        if (json_object_get(v, "tag"))
            g_assert_cmphex(srtpplus_load_be32(p.data + p.len - 4), ==,
                            hex_tag(str_field(v, "tag")));

        /* Receiver: the wire passes an enforcing check and unprotects to the original. */
        if (!chain) {
            struct srtpplus_receiver *rx;
            srtpplus_receiver_config_init(&rcfg, SRTPPLUS_SCHEME_PRN, pv.profile);
            g_assert_cmpint(
                srtpplus_receiver_new(&rcfg, pv.key, pv.key_len, pv.salt, pv.salt_len, &rx), ==,
                SRTPPLUS_OK);
            g_assert_cmpint(srtpplus_receiver_add_ssrc(rx, pv.ssrc, roc), ==, SRTPPLUS_OK);
            check_receive(rx, &pv, roc);
            srtpplus_receiver_free(rx);
            srtpplus_sender_free(tx);
            srtp_dealloc(srtp);
        } else {
            struct srtpplus_check chk;
            g_assert_cmpint(
                srtpplus_receiver_check_rtp(chain_rx, pv.wire.data, pv.wire.len, true, 0, &chk), ==,
                SRTPPLUS_PASS);
            struct test_packet plain = pv.wire;
            plain.len = chk.len;
            srtp_t rx_srtp = test_srtp_session(pv.profile, pv.key, pv.salt, pv.ssrc, roc);
            /* A fresh receiving session per packet: libsrtp accepts any first index. */
            int plen = (int)plain.len;
            g_assert_cmpint(srtp_unprotect(rx_srtp, plain.data, &plen), ==, srtp_err_status_ok);
            srtp_dealloc(rx_srtp);
            plain.len = (size_t)plen;
            g_assert_cmpint(
                srtpplus_receiver_confirm_rtp(chain_rx, plain.data, &plain.len, chk.index), ==,
                SRTPPLUS_CONFIRMED);
            g_assert_cmpmem(plain.data, plain.len, pv.original.data, pv.original.len);
            const char *key;
            json_t *tag;
            json_object_foreach(json_object_get(v, "carried"), key, tag)
            {
                uint32_t learned;
                g_assert_true(srtpplus_receiver_learned_tag(
                    chain_rx, pv.ssrc, g_ascii_strtoull(key, NULL, 10), &learned));
                g_assert_cmphex(learned, ==, hex_tag(json_string_value(tag)));
            }
        }
    }
    g_assert_cmpuint(chain_count, >, 0);

    /* Bootstrap tags the vectors carry (m < i0 + D) are tag_prn of their index. */
    struct srtpplus_prn *prn;
    uint8_t k_prn[16];
    g_assert_cmpint(srtpplus_derive_prn_key(chain_first.key, chain_first.key_len, chain_first.salt,
                                            chain_first.salt_len, k_prn),
                    ==, SRTPPLUS_OK);
    g_assert_cmpint(srtpplus_prn_new(k_prn, &prn), ==, SRTPPLUS_OK);
    GHashTableIter it;
    gpointer key, value;
    size_t bootstrap = 0;
    g_hash_table_iter_init(&it, carried);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        uint64_t m = *(uint64_t *)key;
        if (m >= chain_i0 + chain_depth)
            continue;
        uint32_t tag;
        g_assert_cmpint(srtpplus_prn_tag(prn, SRTPPLUS_KIND_RTP, chain_first.ssrc, m, &tag), ==,
                        SRTPPLUS_OK);
        g_assert_cmphex(tag, ==, GPOINTER_TO_UINT(value));
        bootstrap++;
    }
    g_assert_cmpuint(bootstrap, >, 0);
    srtpplus_prn_free(prn);
    g_hash_table_destroy(carried);
    srtpplus_receiver_free(chain_rx);
    srtpplus_sender_free(chain_tx);
    srtp_dealloc(chain_srtp);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    const char *path = getenv("MOAT_TESTVECTORS");
    g_assert_nonnull(path);
    json_error_t error;
    vectors = json_load_file(path, 0, &error);
    if (!vectors)
        g_error("%s: %s", path, error.text);
    g_assert_cmpint(srtp_init(), ==, srtp_err_status_ok);
    g_test_add_func("/srtpplus/vectors/kdf", test_kdf);
    g_test_add_func("/srtpplus/vectors/prn", test_prn);
    g_test_add_func("/srtpplus/vectors/packets", test_packets);
    int rc = g_test_run();
    json_decref(vectors);
    srtp_shutdown();
    return rc;
}

/* Host addresses from getifaddrs (and from interface lists built here:
 * what is skipped, the order, which are kept when not all fit) and RFC 8445
 * host priorities. */
#include "ice/ice_candidates.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#define MAX_ADDRESSES 64

static const moat_ice_gather_options every_address = {0, true, true};

static bool listed(const moat_ice_address *list, int count, const char *text)
{
    for (int i = 0; i < count; i++) {
        if (strcmp(list[i].text, text) == 0)
            return true;
    }
    return false;
}

static void assert_consistent(const moat_ice_address *a)
{
    char text[INET6_ADDRSTRLEN];
    g_assert_cmpint(a->address.ss_family, ==,
                    a->length == sizeof(struct sockaddr_in) ? AF_INET : AF_INET6);
    if (a->address.ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)&a->address;
        g_assert_cmpuint(v4->sin_port, ==, 0);
        g_assert_nonnull(inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text));
    } else {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&a->address;
        g_assert_cmpuint(a->length, ==, sizeof *v6);
        g_assert_cmpuint(v6->sin6_port, ==, 0);
        g_assert_false(IN6_IS_ADDR_LINKLOCAL(&v6->sin6_addr));
        g_assert_nonnull(inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text));
    }
    g_assert_cmpstr(a->text, ==, text);
}

static void test_loopback_included(void)
{
    moat_ice_address list[MAX_ADDRESSES];
    int count = moat_ice_host_addresses(list, MAX_ADDRESSES, &every_address);
    g_assert_cmpint(count, >=, 1);
    g_assert_true(listed(list, count, "127.0.0.1"));
    for (int i = 0; i < count; i++) {
        assert_consistent(&list[i]);
        for (int k = 0; k < i; k++)
            g_assert_cmpstr(list[k].text, !=, list[i].text);
    }
}

static void test_loopback_excluded(void)
{
    moat_ice_address list[MAX_ADDRESSES];
    moat_ice_gather_options options = {0, false, true};
    int count = moat_ice_host_addresses(list, MAX_ADDRESSES, &options);
    g_assert_cmpint(count, >=, 0);
    for (int i = 0; i < count; i++) {
        assert_consistent(&list[i]);
        g_assert_false(g_str_has_prefix(list[i].text, "127."));
        g_assert_cmpstr(list[i].text, !=, "::1");
    }
}

static void test_ipv4_only(void)
{
    moat_ice_address list[MAX_ADDRESSES];
    moat_ice_gather_options options = {0, true, false};
    int count = moat_ice_host_addresses(list, MAX_ADDRESSES, &options);
    g_assert_cmpint(count, >=, 1);
    for (int i = 0; i < count; i++)
        g_assert_cmpint(list[i].address.ss_family, ==, AF_INET);
}

/* The return value counts every wanted address; only capacity are written. */
static void test_capacity(void)
{
    moat_ice_address list[MAX_ADDRESSES];
    int all = moat_ice_host_addresses(list, MAX_ADDRESSES, &every_address);
    g_assert_cmpint(moat_ice_host_addresses(list, 0, &every_address), ==, all);
    moat_ice_address guarded[2];
    memset(&guarded[1], 0x77, sizeof guarded[1]);
    g_assert_cmpint(moat_ice_host_addresses(guarded, 1, &every_address), ==, all);
    const uint8_t *tail = (const uint8_t *)&guarded[1];
    for (size_t i = 0; i < sizeof guarded[1]; i++)
        g_assert_cmpuint(tail[i], ==, 0x77);
}

/* An interface list of the test's own, in getifaddrs' order. */
typedef struct {
    struct ifaddrs entries[40];
    struct sockaddr_storage addresses[40];
    char names[40][16];
    size_t n;
} fake_interfaces;

static void add_interface(fake_interfaces *f, const char *name, unsigned flags, const char *text)
{
    g_assert_cmpuint(f->n, <, G_N_ELEMENTS(f->entries));
    size_t i = f->n++;
    struct ifaddrs *entry = &f->entries[i];
    memset(entry, 0, sizeof *entry);
    memset(&f->addresses[i], 0, sizeof f->addresses[i]);
    g_strlcpy(f->names[i], name, sizeof f->names[i]);
    entry->ifa_name = f->names[i];
    entry->ifa_flags = flags;
    entry->ifa_addr = (struct sockaddr *)&f->addresses[i];
    struct sockaddr_in *v4 = (struct sockaddr_in *)&f->addresses[i];
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&f->addresses[i];
    if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
    } else {
        g_assert_cmpint(inet_pton(AF_INET6, text, &v6->sin6_addr), ==, 1);
        v6->sin6_family = AF_INET6;
    }
    if (i > 0)
        f->entries[i - 1].ifa_next = entry;
}

#define RUNNING  (IFF_UP | IFF_RUNNING)
#define LOOPBACK (IFF_UP | IFF_RUNNING | IFF_LOOPBACK)

static int select_texts(const fake_interfaces *f, size_t keep, const char **texts,
                        moat_ice_address *out, size_t capacity)
{
    moat_ice_gather_options options = {keep, true, true};
    int n = moat_ice_select_addresses(f->n ? &f->entries[0] : NULL, &options, out, capacity);
    for (int i = 0; i < n && (size_t)i < capacity; i++)
        texts[i] = out[i].text;
    return n;
}

/* Up without carrier (an idle docker0) is skipped: nothing reaches it. */
static void test_not_running_skipped(void)
{
    fake_interfaces f = {.n = 0};
    add_interface(&f, "lo", LOOPBACK, "127.0.0.1");
    add_interface(&f, "docker0", IFF_UP, "172.17.0.1");
    add_interface(&f, "eth0", RUNNING, "198.51.100.7");
    add_interface(&f, "eth1", 0, "198.51.100.8");
    add_interface(&f, "docker0", IFF_UP, "2001:db8:d::1");
    moat_ice_address out[8];
    const char *texts[8];
    g_assert_cmpint(select_texts(&f, 0, texts, out, 8), ==, 2);
    g_assert_cmpstr(texts[0], ==, "198.51.100.7");
    g_assert_cmpstr(texts[1], ==, "127.0.0.1");
}

/* Loopback (127/8 on any interface, ::1) after every other address. */
static void test_loopback_last(void)
{
    fake_interfaces f = {.n = 0};
    add_interface(&f, "lo", LOOPBACK, "127.0.0.1");
    add_interface(&f, "eth0", RUNNING, "198.51.100.7");
    add_interface(&f, "dummy0", RUNNING, "127.0.0.53");
    add_interface(&f, "eth1", RUNNING, "203.0.113.9");
    add_interface(&f, "lo", LOOPBACK, "::1");
    add_interface(&f, "eth0", RUNNING, "2001:db8::7");
    moat_ice_address out[8];
    const char *texts[8];
    g_assert_cmpint(select_texts(&f, 0, texts, out, 8), ==, 6);
    const char *expected[] = {"198.51.100.7", "203.0.113.9", "2001:db8::7",
                              "127.0.0.1",    "127.0.0.53",  "::1"};
    for (size_t i = 0; i < G_N_ELEMENTS(expected); i++)
        g_assert_cmpstr(texts[i], ==, expected[i]);
}

/* 20 bridges' IPv4 addresses listed before the host's IPv6 one (getifaddrs
 * lists IPv4 first): with room for 16, the first address of each kind is
 * kept (IPv6 and loopback too), the bridges fill the rest in order and the
 * ones left out come last. Before: the first 16 IPv4 addresses, no IPv6. */
static void test_each_kind_kept(void)
{
    fake_interfaces f = {.n = 0};
    add_interface(&f, "lo", LOOPBACK, "127.0.0.1");
    add_interface(&f, "eth0", RUNNING, "198.51.100.7");
    char bridge[20][32];
    for (int i = 0; i < 20; i++) {
        snprintf(bridge[i], sizeof bridge[i], "172.%d.0.1", 18 + i);
        add_interface(&f, "br", RUNNING, bridge[i]);
    }
    add_interface(&f, "lo", LOOPBACK, "::1");
    add_interface(&f, "eth0", RUNNING, "2001:db8::7");
    moat_ice_address out[32];
    const char *texts[32];
    g_assert_cmpint(select_texts(&f, 16, texts, out, 32), ==, 24);
    g_assert_cmpstr(texts[0], ==, "198.51.100.7");
    for (int i = 0; i < 12; i++)
        g_assert_cmpstr(texts[1 + i], ==, bridge[i]);
    g_assert_cmpstr(texts[13], ==, "2001:db8::7");
    g_assert_cmpstr(texts[14], ==, "127.0.0.1");
    g_assert_cmpstr(texts[15], ==, "::1");
    for (int i = 12; i < 20; i++)
        g_assert_cmpstr(texts[16 + i - 12], ==, bridge[i]);
    /* A smaller buffer gets the offered ones first; the count is the same. */
    g_assert_cmpint(select_texts(&f, 16, texts, out, 2), ==, 24);
    g_assert_cmpstr(texts[1], ==, bridge[0]);
    /* Room for two: the first IPv4 and the first IPv6 address. */
    g_assert_cmpint(select_texts(&f, 2, texts, out, 2), ==, 24);
    g_assert_cmpstr(texts[0], ==, "198.51.100.7");
    g_assert_cmpstr(texts[1], ==, "2001:db8::7");
    g_assert_cmpint(select_texts(&f, 0, texts, out, 0), ==, 24);
}

static void test_text_is_loopback(void)
{
    g_assert_true(moat_ice_text_is_loopback("127.0.0.1"));
    g_assert_true(moat_ice_text_is_loopback("127.255.0.9"));
    g_assert_true(moat_ice_text_is_loopback("::1"));
    g_assert_false(moat_ice_text_is_loopback("128.0.0.1"));
    g_assert_false(moat_ice_text_is_loopback("::ffff:127.0.0.1"));
    g_assert_false(moat_ice_text_is_loopback("2001:db8::1"));
    g_assert_false(moat_ice_text_is_loopback("localhost"));
    g_assert_false(moat_ice_text_is_loopback(""));
}

static void test_empty_list(void)
{
    fake_interfaces f = {.n = 0};
    moat_ice_address out[1];
    const char *texts[1];
    g_assert_cmpint(select_texts(&f, 16, texts, out, 1), ==, 0);
}

static void test_priority(void)
{
    /* (2^24)*126 + (2^8)*65535 + (256 - 1), the value RFC 8445 implementations
     * agree on for a host candidate's RTP component. */
    g_assert_cmpuint(moat_ice_host_priority(65535, 1), ==, 2130706431u);
    g_assert_cmpuint(moat_ice_host_priority(65535, 2), ==, 2130706430u);
    g_assert_cmpuint(moat_ice_host_priority(0, 1), ==, 126u << 24 | 255u);
    g_assert_cmpuint(moat_ice_host_priority(10, 1), ==, (126u << 24) + (10u << 8) + 255u);
    g_assert_cmpuint(moat_ice_host_priority(1u << 20, 1), ==, moat_ice_host_priority(65535, 1));
    g_assert_cmpuint(moat_ice_host_priority(100, 0), ==, moat_ice_host_priority(100, 1));
    g_assert_cmpuint(moat_ice_host_priority(100, 999), ==, moat_ice_host_priority(100, 256));
    g_assert_cmpuint(moat_ice_host_priority(65535, 256) >> 24, ==, 126);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ice/candidates/loopback-included", test_loopback_included);
    g_test_add_func("/ice/candidates/loopback-excluded", test_loopback_excluded);
    g_test_add_func("/ice/candidates/ipv4-only", test_ipv4_only);
    g_test_add_func("/ice/candidates/capacity", test_capacity);
    g_test_add_func("/ice/candidates/not-running-skipped", test_not_running_skipped);
    g_test_add_func("/ice/candidates/loopback-last", test_loopback_last);
    g_test_add_func("/ice/candidates/each-kind-kept", test_each_kind_kept);
    g_test_add_func("/ice/candidates/empty-list", test_empty_list);
    g_test_add_func("/ice/candidates/text-is-loopback", test_text_is_loopback);
    g_test_add_func("/ice/candidates/priority", test_priority);
    return g_test_run();
}

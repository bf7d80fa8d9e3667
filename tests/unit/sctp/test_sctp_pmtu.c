/* PLPMTUD on real usrsctp associations wired back to back (sctp_test_link):
 * the probes are answered by the peer's usrsctp, the answers are taken out
 * before our usrsctp, the association's packets grow to what the wire
 * carries (and no further), and data stays byte-exact. */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "sctp/sctp_association.h"
#include "sctp/sctp_tuning.h"
#include "sctp_test_link.h"

static bool received_at_least(sctp_test_link *link, void *arg)
{
    return link->server.messages->len >= GPOINTER_TO_UINT(arg);
}

/* Sends messages of many sizes client -> server and checks them. */
static void transfer_exact(sctp_test_link *link, guint count)
{
    uint16_t id = sctp_test_link_open(link, &link->client, "bulk", "", true, -1, -1);
    guint before = link->server.messages->len;
    GPtrArray *sent = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    for (guint i = 0; i < count; i++) {
        size_t size = 1 + (i * 7919u) % 60000u;
        uint8_t *data = g_malloc(size);
        for (size_t j = 0; j < size; j++)
            data[j] = (uint8_t)(i * 31 + j);
        g_assert_cmpint(
            sctp_test_link_send(link, &link->client, id, MOAT_SCTP_PPID_BINARY, data, size), ==, 0);
        g_ptr_array_add(sent, g_bytes_new_take(data, size));
    }
    g_assert_true(
        sctp_test_link_pump_until(link, received_at_least, GUINT_TO_POINTER(before + count), 5000));
    for (guint i = 0; i < count; i++) {
        const sctp_test_message *m = sctp_test_end_message(&link->server, before + i);
        g_assert_true(g_bytes_equal(m->data, g_ptr_array_index(sent, i)));
    }
    g_ptr_array_unref(sent);
}

static void test_enable_refused_late(void)
{
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    g_assert_cmpint(moat_sctp_association_enable_plpmtud(link.client.assoc, 1199), ==, -EINVAL);
    g_assert_cmpint(moat_sctp_association_enable_plpmtud(link.client.assoc, 16385), ==, -EINVAL);
    moat_sctp_plpmtud_status st;
    moat_sctp_association_plpmtud_status(link.client.assoc, &st);
    g_assert_false(st.enabled);
    g_assert_cmpuint(st.pmtu, ==, MOAT_SCTP_MTU);
    sctp_test_link_connect(&link);
    g_assert_cmpint(moat_sctp_association_enable_plpmtud(link.client.assoc, 16384), ==, -EALREADY);
    sctp_test_link_clear(&link);
}

/* An unlimited wire (loopback): 16384 is confirmed in one round trip, and
 * the data packets grow to it. */
/* A connected pair whose client probed an unlimited wire up to 16384. */
static void connect_probed_to_16384(sctp_test_link *link, moat_sctp_plpmtud_status *st)
{
    sctp_test_link_init(link, 0);
    g_assert_cmpint(moat_sctp_association_enable_plpmtud(link->client.assoc, 16384), ==, 0);
    sctp_test_link_connect(link);
    sctp_test_link_pump(link, 2);
    moat_sctp_association_plpmtud_status(link->client.assoc, st);
    g_assert_true(st->enabled);
    g_assert_cmpuint(st->pmtu, ==, 16384);
}

static void test_unlimited_wire(void)
{
    sctp_test_link link;
    moat_sctp_plpmtud_status st;
    connect_probed_to_16384(&link, &st);
    g_assert_cmpstr(st.state, ==, "search_complete");
    g_assert_cmpuint(st.probes_acked, >=, 1);
    link.client.largest_packet = 0;
    transfer_exact(&link, 40);
    g_assert_cmpuint(link.client.largest_packet, >, 8000);
    g_assert_cmpuint(link.client.largest_packet, <=, 16384);
    /* The server did not probe: its packets stay at the base. */
    g_assert_cmpuint(link.server.largest_packet, <=, MOAT_SCTP_MTU);
    sctp_test_link_clear(&link);
}

static bool search_done(sctp_test_link *link, void *arg)
{
    moat_sctp_association_tick(link->client.assoc);
    moat_sctp_plpmtud_status st;
    moat_sctp_association_plpmtud_status(link->client.assoc, &st);
    return strcmp(st.state, "search_complete") == 0;
}

/* A wire that drops packets over 1452 bytes (probes included): the PMTU
 * found is at most that, above the base, and data fits it. Real time: the
 * probe timer is 1 s. */
static void test_limited_wire(void)
{
    const size_t wire = 1452;
    sctp_test_link link;
    sctp_test_link_init(&link, 0);
    link.client.max_wire_packet = wire;
    link.server.max_wire_packet = wire;
    link.tick_sleep_us = 5000;
    g_assert_cmpint(moat_sctp_association_enable_plpmtud(link.client.assoc, 16384), ==, 0);
    sctp_test_link_connect(&link);
    g_assert_true(sctp_test_link_pump_until(&link, search_done, NULL, 8000));
    moat_sctp_plpmtud_status st;
    moat_sctp_association_plpmtud_status(link.client.assoc, &st);
    g_assert_cmpuint(st.pmtu, <=, wire);
    g_assert_cmpuint(st.pmtu, >, wire - 20);
    g_assert_cmpuint(st.probes_lost, >, 0);
    link.tick_sleep_us = 0;
    size_t dropped = link.client.packets_dropped;
    link.client.largest_packet = 0;
    transfer_exact(&link, 40);
    g_assert_cmpuint(link.client.largest_packet, <=, st.pmtu);
    g_assert_cmpuint(link.client.largest_packet, >, MOAT_SCTP_MTU);
    /* Only probes were too big: no data packet was dropped. */
    g_assert_cmpuint(link.client.packets_dropped, ==, dropped);
    sctp_test_link_clear(&link);
}

/* The wire shrinks under a running transfer: retransmission timeouts make
 * the association confirm its PMTU, the confirmation is lost, and the PMTU
 * falls back to the base; the data still arrives whole. */
static void test_black_hole_fallback(void)
{
    sctp_test_link link;
    moat_sctp_plpmtud_status st;
    connect_probed_to_16384(&link, &st);
    link.client.max_wire_packet = 1300;
    link.tick_sleep_us = 2000;
    transfer_exact(&link, 60);
    moat_sctp_association_plpmtud_status(link.client.assoc, &st);
    g_assert_cmpuint(st.black_holes, >=, 1);
    g_assert_cmpuint(st.pmtu, <=, 1300);
    sctp_test_link_clear(&link);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sctp/pmtu/enable_refused_late", test_enable_refused_late);
    g_test_add_func("/sctp/pmtu/unlimited_wire", test_unlimited_wire);
    g_test_add_func("/sctp/pmtu/limited_wire", test_limited_wire);
    g_test_add_func("/sctp/pmtu/black_hole_fallback", test_black_hole_fallback);
    return g_test_run();
}

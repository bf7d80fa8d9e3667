/* The association's side of PLPMTUD: drives the state machine
 * (sctp_plpmtud.c) with the clock and the association's packets, sends its
 * probes (sctp_probe.c) through send_packet like any SCTP packet, takes the
 * peer's acknowledgements of them out of the inbound path before usrsctp,
 * applies the PLPMTU found to usrsctp (SCTP_PEER_ADDR_PARAMS) and watches
 * for retransmission timeouts that may mean a black hole. Hooks called from
 * sctp_association.c; the association's thread only. */
#include <errno.h>
#include <string.h>

#include <usrsctp.h>

#include "sctp/sctp_association_private.h"
#include "sctp/sctp_socket.h"

/* How often the congestion window is looked at for signs of a
 * retransmission timeout while the PLPMTU is above the base. */
#define LOSS_CHECK_INTERVAL_US 200000

/* Gives usrsctp the PLPMTU as the path's MTU. usrsctp (0.9.5) never raises
 * an association's fragmentation point (asoc.smallest_mtu) after it was
 * created at MOAT_SCTP_MTU, so messages stay cut into chunks that fit 1200
 * bytes and larger packets bundle several of them. That is what makes the
 * fall back to the base safe: chunks in flight (whose TSNs are assigned and
 * cannot be cut again) still fit. A usrsctp patched to raise
 * smallest_mtu as well (sctp_usrreq.c, SPP_PMTUD_DISABLE: "<" becomes
 * "!=") makes 16 KiB messages about as fast as a forced 16384, but then
 * test_sctp_pmtu's black_hole_fallback stalls: 16 KiB chunks no longer
 * pass the shrunken path. */
static void apply(moat_sctp_association *a)
{
    uint32_t want = moat_plpmtud_pmtu(&a->pmtu.machine);
    if (want == a->pmtu.applied)
        return;
    if (moat_sctp_socket_set_mtu(a->sock, want) == 0)
        a->pmtu.applied = want;
}

int moat_sctp_association_enable_plpmtud(moat_sctp_association *a, size_t max_packet)
{
    if (a == NULL || max_packet < MOAT_SCTP_MTU || max_packet > MOAT_SCTP_MAX_MTU)
        return -EINVAL;
    if (a->free_requested)
        return -ESHUTDOWN;
    if (a->connect_started)
        return -EALREADY;
    moat_plpmtud_init(&a->pmtu.machine, (uint32_t)max_packet);
    a->pmtu.enabled = true;
    a->pmtu.applied = MOAT_SCTP_MTU;
    return moat_sctp_socket_set_mtu(a->sock, MOAT_SCTP_MTU);
}

void moat_sctp_association_plpmtud_status(const moat_sctp_association *a,
                                          moat_sctp_plpmtud_status *out)
{
    memset(out, 0, sizeof *out);
    out->state = "off";
    out->pmtu = MOAT_SCTP_MTU;
    if (a == NULL || !a->pmtu.enabled)
        return;
    out->enabled = true;
    out->pmtu = moat_plpmtud_pmtu(&a->pmtu.machine);
    out->max = a->pmtu.machine.max;
    out->state = moat_plpmtud_state_name(a->pmtu.machine.state);
    out->probes_sent = a->pmtu.machine.counters.probes_sent;
    out->probes_acked = a->pmtu.machine.counters.probes_acked;
    out->probes_lost = a->pmtu.machine.counters.probes_lost;
    out->searches = a->pmtu.machine.counters.searches;
    out->black_holes = a->pmtu.machine.counters.black_holes;
    out->probes_unsent = a->pmtu.probes_unsent;
}

void moat_sctp_pmtu_outgoing(moat_sctp_association *a, const uint8_t *packet, size_t length)
{
    /* Every packet, not just the first: a restarted association (RFC 9260
     * §5.2.4) changes the peer's tag. A few bytes read per packet. */
    if (a->pmtu.enabled)
        moat_sctp_probe_learn(&a->pmtu.header, packet, length);
}

bool moat_sctp_pmtu_incoming(moat_sctp_association *a, const uint8_t **packet, size_t *length)
{
    moat_sctp_probe_ack ack;
    if (!a->pmtu.enabled || !moat_sctp_probe_find_ack(*packet, *length, &ack))
        return false;
    if (moat_plpmtud_on_ack(&a->pmtu.machine, ack.seq, ack.size, g_get_monotonic_time()))
        apply(a);
    if (!moat_sctp_probe_has_other_chunks(*length, &ack))
        return true;
    /* Bundled with other chunks: usrsctp gets them without ours. */
    g_byte_array_set_size(a->pmtu.stripped, (guint)*length);
    *length = moat_sctp_probe_strip_ack(*packet, *length, &ack, a->pmtu.stripped->data);
    *packet = a->pmtu.stripped->data;
    return false;
}

/* A retransmission timeout leaves the congestion window at one packet
 * (RFC 9260 §7.2.3): with data outstanding, that is the loss a black hole
 * causes. */
static void check_loss(moat_sctp_association *a, int64_t now)
{
    if (now < a->pmtu.next_loss_check_us || moat_plpmtud_pmtu(&a->pmtu.machine) <= MOAT_SCTP_MTU)
        return;
    a->pmtu.next_loss_check_us = now + LOSS_CHECK_INTERVAL_US;
    uint32_t srtt_ms = 0, cwnd = 0;
    if (moat_sctp_socket_path_status(a->sock, &srtt_ms, &cwnd) != 0)
        return;
    if (cwnd <= a->pmtu.applied && moat_sctp_socket_buffered_amount(a->sock) > 0)
        moat_plpmtud_suspect(&a->pmtu.machine, now);
}

void moat_sctp_pmtu_run(moat_sctp_association *a)
{
    if (!a->pmtu.enabled || !a->up || !a->pmtu.header.known || a->cb.send_packet == NULL)
        return;
    int64_t now = g_get_monotonic_time();
    moat_plpmtud_start(&a->pmtu.machine, now);
    check_loss(a, now);
    if (now < moat_plpmtud_deadline(&a->pmtu.machine))
        return;
    moat_plpmtud_probe probe;
    while (moat_sctp_association_live(a) && moat_plpmtud_poll(&a->pmtu.machine, now, &probe)) {
        if (a->pmtu.buffer == NULL)
            a->pmtu.buffer = g_malloc(MOAT_SCTP_MAX_MTU);
        size_t n = moat_sctp_probe_build(&a->pmtu.header, probe.seq, probe.size, a->pmtu.buffer,
                                         MOAT_SCTP_MAX_MTU);
        if (n == 0) {
            a->pmtu.probes_unsent++;
            continue;
        }
        a->cb.send_packet(a->user, a->pmtu.buffer, n);
    }
    /* A fallback to the base, or a larger size confirmed. */
    apply(a);
}

void moat_sctp_pmtu_init(moat_sctp_association *a)
{
    moat_plpmtud_init(&a->pmtu.machine, MOAT_SCTP_MTU);
    a->pmtu.applied = MOAT_SCTP_MTU;
    a->pmtu.stripped = g_byte_array_new();
}

void moat_sctp_pmtu_release(moat_sctp_association *a)
{
    g_free(a->pmtu.buffer);
    a->pmtu.buffer = NULL;
    if (a->pmtu.stripped != NULL)
        g_byte_array_unref(a->pmtu.stripped);
    a->pmtu.stripped = NULL;
}

/* The tunnel over WebRTC data channels through the gateway: DTLS
 * (dtls/dtls_transport.h) and SCTP (sctp/sctp_association.h), the gateway's
 * own modules, over the WHIP sessions and ICE paths of tunnel_whip.c. Each
 * lane (--lanes: one WHIP session, one association, its own congestion
 * window) has one channel in the chosen mode that carries each IP packet as
 * one binary message; a packet's lane is its flow's (tunnel_lane.h). This
 * file owns the tunnel's poll loop: datagrams in, packets from the TUN
 * device out, timers, and each lane's recovery (an ICE restart) when its
 * path stops answering. Any lane ending ends the tunnel. */
#include "tunnel_lane_url.h"
#include "tunnel_sctp_link.h"

#include "sctp/sctp_stack.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <usrsctp.h>

#define DATAGRAM_SIZE   (16384 + 256)
#define READS_PER_TURN  64
#define HTTP_TIMEOUT_S  5
#define RESTART_RETRY_S 1.0

void tunnel_link_fail(sctp_link *l, const char *what)
{
    tunnel_run_end(l->run, "%s", what);
    l->failed = true;
    l->state = LINK_ENDED;
}

/* ---- DTLS and SCTP ---- */

static bool send_ip_packet(sctp_link *l, const uint8_t *packet, size_t length);

static void sctp_send_packet(void *user, const uint8_t *packet, size_t length)
{
    sctp_link *l = user;
    if (l->dtls)
        moat_dtls_transport_send(l->dtls, packet, length);
}

static void sctp_channel_open(void *user, const moat_data_channel_info *info)
{
    (void)user;
    (void)info; /* the gateway opens none; ours is the one we send on */
}

static void sctp_message(void *user, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                         size_t length)
{
    sctp_link *l = user;
    (void)stream_id;
    if (ppid != MOAT_SCTP_PPID_BINARY) {
        l->run->figures.lost[TUNNEL_LOSS_BAD_MESSAGE]++;
        return;
    }
    uint64_t before = l->run->figures.packets_in;
    tunnel_run_deliver(l->run, data, length);
    l->run->figures.lane_packets_in[l->lane] += l->run->figures.packets_in - before;
}

static void sctp_channel_closed(void *user, uint16_t stream_id)
{
    sctp_link *l = user;
    if (stream_id == l->stream_id) {
        tunnel_run_end(l->run, "the gateway closed the channel");
        l->state = LINK_ENDED;
    }
}

static void sctp_association_state(void *user, bool up)
{
    sctp_link *l = user;
    if (up && l->state != LINK_UP) {
        l->state = LINK_UP;
        /* The tunnel is up when all its lanes are. */
        if (++l->tunnel->n_up < l->tunnel->n_lanes)
            return;
        l->run->connected_s = tunnel_now_s();
        fprintf(stderr, "moat-tunnel: connected (%s, %u lane%s, device %s, mtu %u)\n",
                tunnel_mode_name(l->run->options->mode), l->tunnel->n_lanes,
                l->tunnel->n_lanes == 1 ? "" : "s", l->run->tun_name, l->run->options->mtu);
    } else if (!up) {
        tunnel_run_end(l->run, "the session ended (the gateway closed it: the other peer left)");
        l->state = LINK_ENDED;
    }
}

static void sctp_sender_dry(void *user)
{
    sctp_link *l = user;
    l->blocked = false;
}

static void sctp_writable(void *user)
{
    sctp_link *l = user;
    l->blocked = false;
    if (l->pending_length && l->state == LINK_UP)
        send_ip_packet(l, l->pending, l->pending_length);
}

static const moat_sctp_callbacks sctp_callbacks = {
    .send_packet = sctp_send_packet,
    .channel_open = sctp_channel_open,
    .message = sctp_message,
    .channel_closed = sctp_channel_closed,
    .association_state = sctp_association_state,
    .sender_dry = sctp_sender_dry,
    .writable = sctp_writable,
};

static void open_channel(sctp_link *l)
{
    moat_data_channel_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.label, sizeof info.label, "tunnel-%u", l->lane);
    tunnel_mode mode = l->run->options->mode;
    info.ordered = mode == TUNNEL_MODE_ORDERED;
    info.max_retransmits = mode == TUNNEL_MODE_UNRELIABLE ? 0 : -1;
    info.max_lifetime_ms = -1;
    if (moat_sctp_association_open_channel(l->sctp, &info, &l->stream_id) != 0)
        tunnel_link_fail(l, "cannot open the data channel");
}

static void dtls_send(void *user, const uint8_t *datagram, size_t length)
{
    sctp_link *l = user;
    if (l->selected >= 0)
        tunnel_link_send_to(l, datagram, length, &l->remotes[l->selected]);
}

static void dtls_connected(void *user, const moat_srtp_keying *keys)
{
    sctp_link *l = user;
    (void)keys;
    char error[256];
    l->sctp =
        moat_sctp_association_new(l->role == MOAT_DTLS_ROLE_CLIENT, 5000, l->sctp_port,
                                  l->max_message_size, &sctp_callbacks, l, error, sizeof error);
    if (!l->sctp) {
        tunnel_link_fail(l, error);
        return;
    }
    open_channel(l);
    moat_sctp_association_connect(l->sctp);
}

static void dtls_application_data(void *user, const uint8_t *data, size_t length)
{
    sctp_link *l = user;
    if (l->sctp)
        moat_sctp_association_receive(l->sctp, data, length);
}

static void dtls_closed(void *user, moat_dtls_state state, const char *reason)
{
    sctp_link *l = user;
    if (state == MOAT_DTLS_CLOSED) {
        tunnel_run_end(l->run, "the session ended (the gateway closed it: the other peer left)");
        l->state = LINK_ENDED;
    } else {
        char text[256];
        snprintf(text, sizeof text, "DTLS failed: %s", reason);
        tunnel_link_fail(l, text);
    }
}

static const moat_dtls_callbacks dtls_callbacks = {
    .send = dtls_send,
    .connected = dtls_connected,
    .application_data = dtls_application_data,
    .closed = dtls_closed,
};

void tunnel_link_start_dtls(sctp_link *l)
{
    char error[256];
    l->dtls = moat_dtls_transport_new(l->dtls_context, l->role, l->fingerprint_alg, l->fingerprint,
                                      &dtls_callbacks, l, error, sizeof error);
    if (!l->dtls || moat_dtls_transport_start(l->dtls) != MOAT_DTLS_OK)
        tunnel_link_fail(l, l->dtls ? "cannot start the DTLS handshake" : error);
}

/* ---- the loop ---- */

static void receive_datagrams(sctp_link *l, double now)
{
    unsigned max = l->batch ? TUNNEL_UDP_READ_BATCH : 1;
    for (unsigned read = 0; read < READS_PER_TURN && l->state != LINK_ENDED; read += max) {
        unsigned n = tunnel_udp_read(l->fd, l->reads, max);
        for (unsigned i = 0; i < n && l->state != LINK_ENDED; i++) {
            const uint8_t *buffer = l->reads->data[i];
            size_t length = l->reads->headers[i].msg_len;
            const struct sockaddr_in6 *from = &l->reads->from[i];
            int index = length ? tunnel_ice_remote_index(l, from) : -1;
            if (index < 0)
                continue; /* only the gateway's candidates speak to us */
            uint8_t first = buffer[0];
            if (first <= 3)
                tunnel_ice_on_stun(l, buffer, length, from, now);
            else if (first >= 20 && first <= 63 && l->dtls && index == l->selected)
                moat_dtls_transport_receive(l->dtls, buffer, length);
        }
        if (n < max)
            return;
    }
}

/* Hands one packet to its lane's SCTP. false when it must wait (the send
 * buffer is full: it stays in l->pending until writable). */
static bool send_ip_packet(sctp_link *l, const uint8_t *packet, size_t length)
{
    int rc =
        moat_sctp_association_send(l->sctp, l->stream_id, MOAT_SCTP_PPID_BINARY, packet, length);
    if (rc == -EAGAIN) {
        if (packet != l->pending)
            memcpy(l->pending, packet, length);
        l->pending_length = length;
        l->blocked = true;
        return false;
    }
    l->pending_length = 0;
    if (rc != 0) {
        l->run->figures.lost[TUNNEL_LOSS_SEND_FAILED]++;
        return true;
    }
    l->run->figures.packets_out++;
    l->run->figures.bytes_out += (uint64_t)length;
    l->run->figures.lane_packets_out[l->lane]++;
    return true;
}

static bool tunnel_up(const sctp_tunnel *t)
{
    for (unsigned i = 0; i < t->n_lanes; i++) {
        if (t->lanes[i].state != LINK_UP)
            return false;
    }
    return true;
}

/* Every lane's send buffer is full: the TUN device is not read. */
static bool all_blocked(const sctp_tunnel *t)
{
    for (unsigned i = 0; i < t->n_lanes; i++) {
        if (!t->lanes[i].blocked)
            return false;
    }
    return true;
}

/* Packets from the TUN device into their lanes' associations. A packet a
 * lane's send buffer cannot take waits in the lane for writable; while
 * every lane has one waiting the TUN device is not read (its own queue
 * holds what comes), so one lane loses nothing read for lack of room. With
 * several lanes, a packet for a lane that already has one waiting is
 * dropped (lane_full) rather than stall the other lanes' flows: the full
 * queue of a router on that lane's path. */
static void forward_tun(sctp_tunnel *t, double now)
{
    static uint8_t packet[TUNNEL_MAX_MTU + 64];
    for (unsigned i = 0; i < t->n_lanes; i++) {
        sctp_link *l = &t->lanes[i];
        if (l->pending_length && !l->blocked)
            send_ip_packet(l, l->pending, l->pending_length);
    }
    for (int i = 0; i < READS_PER_TURN && tunnel_up(t) && !all_blocked(t); i++) {
        long n = tunnel_run_read_tun(t->run, packet, sizeof packet);
        if (n <= 0)
            return;
        sctp_link *l = &t->lanes[tunnel_flows_lane(&t->flows, packet, (size_t)n, t->n_lanes, now)];
        if (l->pending_length) {
            t->run->figures.lost[TUNNEL_LOSS_LANE_FULL]++;
            continue;
        }
        send_ip_packet(l, packet, (size_t)n);
    }
}

/* Packets that arrive at the TUN device before every lane is up are lost. */
static void drain_tun(sctp_tunnel *t)
{
    uint8_t packet[TUNNEL_MAX_MTU + 64];
    while (tunnel_run_read_tun(t->run, packet, sizeof packet) > 0)
        t->run->figures.lost[TUNNEL_LOSS_NOT_CONNECTED]++;
}

/* The path stopped answering: ICE restarts, up to --reconnects tries in a
 * row (a try whose PATCH cannot reach the gateway, the network being down,
 * is tried again after RESTART_RETRY_S). */
static void recover(sctp_link *l, double now)
{
    const tunnel_options *o = l->run->options;
    if (l->restarts_tried >= o->reconnects) {
        tunnel_link_fail(l, "the path to the gateway is lost (no answer to keepalives)");
        return;
    }
    l->restarts_tried++;
    l->recovering = true;
    l->next_restart_s = now + RESTART_RETRY_S;
    fprintf(stderr, "moat-tunnel: lane %u: no answer for %.1f s: ICE restart (try %u of %u)\n",
            l->lane, now - l->last_answer_s, l->restarts_tried, o->reconnects);
    if (tunnel_ice_restart(l, now) != 0)
        fprintf(stderr, "moat-tunnel: ICE restart failed; trying again in %.0f s\n",
                RESTART_RETRY_S);
}

/* One lane's timers: DTLS, ICE checks and consent, setup and recovery.
 * true when it found its path lost (a recovery began). */
static bool lane_timers(sctp_link *l, double now)
{
    if (!l->opened)
        return false;
    if (l->dtls && l->state == LINK_DTLS && moat_dtls_transport_timeout_ms(l->dtls) == 0)
        moat_dtls_transport_handle_timeout(l->dtls);
    tunnel_ice_tick(l, now);
    const tunnel_options *o = l->run->options;
    if (l->state != LINK_UP && l->state != LINK_ENDED && now > l->setup_deadline_s &&
        !l->migrating) {
        tunnel_link_fail(l, l->state == LINK_CHECKING ? "no ICE answer from the gateway"
                                                      : "the DTLS/SCTP setup did not complete");
    } else if (l->state == LINK_UP && now >= l->next_restart_s &&
               ((l->recovering && !l->migrating) || now - l->last_answer_s > o->dead_s)) {
        /* Once the path was lost, the network may have changed under us
         * (a new address): keepalives the gateway answers from the old
         * socket do not end the recovery, a completed restart does. */
        bool began = !l->recovering;
        recover(l, now);
        return began;
    }
    return false;
}

/* One lane found the path lost: the lanes share the network, so every
 * other lane restarts too (one whose keepalive happened to be answered
 * from a new address would otherwise keep a path the gateway does not
 * send on). */
static void recover_all(sctp_tunnel *t, double now)
{
    for (unsigned i = 0; i < t->n_lanes; i++) {
        sctp_link *l = &t->lanes[i];
        if (l->state == LINK_UP && !l->recovering && !l->migrating)
            recover(l, now);
    }
}

/* The SCTP stack's timers (one stack for every lane), then each lane's. */
static void timers(sctp_tunnel *t, double now)
{
    bool any_sctp = false;
    for (unsigned i = 0; i < t->n_lanes; i++)
        any_sctp = any_sctp || t->lanes[i].sctp;
    uint32_t elapsed_ms = (uint32_t)((now - t->last_tick_s) * 1000);
    if (!any_sctp) {
        t->last_tick_s = now;
    } else if (elapsed_ms >= MOAT_SCTP_TIMER_INTERVAL_MS) {
        moat_sctp_stack_handle_timers(elapsed_ms);
        t->last_tick_s += elapsed_ms / 1000.0;
        for (unsigned i = 0; i < t->n_lanes; i++) {
            if (t->lanes[i].sctp)
                moat_sctp_association_tick(t->lanes[i].sctp);
        }
    }
    for (unsigned i = 0; i < t->n_lanes; i++)
        if (lane_timers(&t->lanes[i], now))
            recover_all(t, now);
}

static double lane_next_s(const sctp_link *l, double now)
{
    if (!l->opened)
        return now + 0.2;
    double next = l->next_check_s;
    if (l->dtls && l->state == LINK_DTLS) {
        int64_t due = moat_dtls_transport_timeout_ms(l->dtls);
        if (due >= 0 && now + due / 1000.0 < next)
            next = now + due / 1000.0;
    }
    return next;
}

static int poll_timeout_ms(const sctp_tunnel *t, double now)
{
    double next = now + 0.2;
    bool any_sctp = false;
    for (unsigned i = 0; i < t->n_lanes; i++) {
        double lane = lane_next_s(&t->lanes[i], now);
        next = lane < next ? lane : next;
        any_sctp = any_sctp || t->lanes[i].sctp;
    }
    if (any_sctp && t->last_tick_s + MOAT_SCTP_TIMER_INTERVAL_MS / 1000.0 < next)
        next = t->last_tick_s + MOAT_SCTP_TIMER_INTERVAL_MS / 1000.0;
    int ms = (int)((next - now) * 1000) + 1;
    return ms < 0 ? 0 : ms > 200 ? 200 : ms;
}

/* MOAT_TUNNEL_TRACE=1: each lane's path state every 100 ms on stderr. */
static void trace_path(sctp_link *l, double now, double *next_s)
{
    if (!l->trace || !l->sctp || l->state != LINK_UP || now < *next_s)
        return;
    *next_s = now + 0.1;
    uint32_t srtt_ms = 0, cwnd = 0;
    moat_sctp_association_path_status(l->sctp, &srtt_ms, &cwnd);
    size_t send = 0, receive = 0;
    moat_sctp_association_buffer_sizes(l->sctp, &send, &receive);
    struct sctpstat stat;
    memset(&stat, 0, sizeof stat);
    usrsctp_get_stat(&stat);
    fprintf(stderr,
            "trace t=%.2f lane=%u srtt_ms=%u cwnd=%u sndbuf=%zu rcvbuf=%zu buffered=%zu out=%llu "
            "in=%llu t3=%u fr=%u rtx=%u maxburst=%u blocked=%d\n",
            now, l->lane, srtt_ms, cwnd, send, receive,
            moat_sctp_association_buffered_amount(l->sctp),
            (unsigned long long)l->run->figures.lane_packets_out[l->lane],
            (unsigned long long)l->run->figures.lane_packets_in[l->lane], stat.sctps_timodata,
            stat.sctps_sendfastretrans, stat.sctps_sendretransdata, stat.sctps_maxburstqueued,
            l->blocked);
}

static bool any_ended(const sctp_tunnel *t)
{
    for (unsigned i = 0; i < t->n_lanes; i++) {
        if (t->lanes[i].state == LINK_ENDED)
            return true;
    }
    return false;
}

static const char *tunnel_state_name(const sctp_tunnel *t)
{
    for (unsigned i = 0; i < t->n_lanes; i++) {
        if (t->lanes[i].migrating)
            return "restarting";
    }
    return tunnel_up(t) ? "up" : "connecting";
}

/* POSTs lane l's offer: 0, or -1 after tunnel_link_fail. */
static int open_lane(sctp_link *l)
{
    double now = tunnel_now_s();
    l->opened = true;
    l->setup_deadline_s = now + l->run->options->setup_timeout_s;
    l->last_answer_s = now;
    if (tunnel_whip_open(l) != 0)
        return -1;
    if (!getenv("MOAT_TUNNEL_NO_BATCH"))
        l->batch = tunnel_udp_batch_new(l->fd);
    l->tunnel->n_opened++;
    return 0;
}

/* The next lane is POSTed once the one before has passed its ICE checks:
 * the gateway holds a session that has not as pending (a few per source
 * address, and for its pending timeout), and the checks of lanes already
 * POSTed go on meanwhile. */
static void open_next_lane(sctp_tunnel *t)
{
    if (t->n_opened == 0 || t->n_opened >= t->n_lanes ||
        t->lanes[t->n_opened - 1].state == LINK_CHECKING)
        return;
    open_lane(&t->lanes[t->n_opened]);
}

static void loop(sctp_tunnel *t)
{
    double next_trace[TUNNEL_MAX_LANES] = {0};
    double now = tunnel_now_s();
    bool trace = getenv("MOAT_TUNNEL_TRACE") != NULL; /* once, not per wake-up */
    for (unsigned i = 0; i < t->n_lanes; i++)
        t->lanes[i].trace = trace;
    t->last_tick_s = now;
    tunnel_flows_init(&t->flows, now);
    while (!tunnel_stop_requested && !any_ended(t)) {
        open_next_lane(t);
        if (any_ended(t))
            break;
        struct pollfd pfd[TUNNEL_MAX_LANES + 1];
        unsigned n = t->n_lanes;
        for (unsigned i = 0; i < n; i++)
            pfd[i] = (struct pollfd){.fd = t->lanes[i].fd, .events = POLLIN};
        pfd[n] = (struct pollfd){.fd = t->run->tun_fd, .events = all_blocked(t) ? 0 : POLLIN};
        int ready = poll(pfd, n + 1, poll_timeout_ms(t, now));
        now = tunnel_now_s();
        for (unsigned i = 0; i < n; i++)
            t->lanes[i].batching = t->lanes[i].batch != NULL;
        for (unsigned i = 0; ready > 0 && i < n; i++) {
            if (pfd[i].revents & POLLIN)
                receive_datagrams(&t->lanes[i], now);
        }
        if (ready > 0 && (pfd[n].revents & POLLIN)) {
            if (tunnel_up(t))
                forward_tun(t, now);
            else
                drain_tun(t);
        }
        timers(t, now);
        for (unsigned i = 0; i < n; i++) {
            sctp_link *l = &t->lanes[i];
            l->batching = false;
            if (l->batch)
                tunnel_udp_batch_flush(l->batch);
            trace_path(l, now, &next_trace[i]);
        }
        tunnel_run_progress(t->run, tunnel_state_name(t));
    }
}

static void lane_free(sctp_link *l, bool report_delete)
{
    char error[256];
    if (l->resource_url) {
        /* Hang up: the gateway ends this session and every other lane's
         * (ours and the other peer's). */
        if (whip_client_delete(l->http, l->resource_url, error, sizeof error) != 0 &&
            report_delete && l->state != LINK_ENDED)
            fprintf(stderr, "moat-tunnel: WHIP DELETE: %s\n", error);
    }
    if (l->sctp)
        moat_sctp_association_free(l->sctp);
    moat_dtls_transport_free(l->dtls);
    moat_ice_client_free(l->ice);
    if (l->fd >= 0)
        close(l->fd);
    g_free(l->batch);
    g_free(l->resource_url);
    g_free(l->url);
}

int tunnel_sctp_run(tunnel_run *run)
{
    sctp_tunnel *t = g_new0(sctp_tunnel, 1);
    t->run = run;
    t->n_lanes = run->options->lanes ? run->options->lanes : 1;
    run->figures.lanes = t->n_lanes;
    char error[256];
    /* The stack is this process's alone: its default congestion control is
     * the tunnel's choice (--sctp-congestion). */
    if (moat_sctp_stack_init() != 0 ||
        usrsctp_sysctl_set_sctp_default_cc_module((uint32_t)run->options->sctp_cc) != 0) {
        tunnel_run_end(run, "cannot start the SCTP stack");
        g_free(t);
        return -1;
    }
    moat_dtls_context *dtls_context = moat_dtls_context_new(run->certificate, error, sizeof error);
    /* Each WHIP request's deadline: --setup-timeout when shorter. */
    double setup_s = ceil(run->options->setup_timeout_s);
    unsigned http_s = setup_s < HTTP_TIMEOUT_S ? (unsigned)setup_s : HTTP_TIMEOUT_S;
    whip_client *http = whip_client_new(run->options->token, http_s, &tunnel_stop_requested);
    tunnel_udp_reads *reads = g_malloc(sizeof *reads);
    char *urls[TUNNEL_MAX_LANES];
    tunnel_lane_urls(urls, t->n_lanes, run->options->whip_url);
    for (unsigned i = 0; i < t->n_lanes; i++) {
        sctp_link *l = &t->lanes[i];
        l->url = urls[i];
        l->run = run;
        l->tunnel = t;
        l->lane = i;
        l->http = http;
        l->dtls_context = dtls_context;
        l->reads = reads;
        l->fd = -1;
        l->selected = -1;
        l->nominee = -1;
    }
    bool opened = dtls_context && http;
    if (!opened)
        tunnel_link_fail(&t->lanes[0], dtls_context ? "cannot make the HTTP client" : error);
    /* Lane 0 first: it names this peer's side; the loop opens the others
     * one after another (open_next_lane). */
    if (opened && open_lane(&t->lanes[0]) == 0)
        loop(t);
    bool failed = false;
    for (unsigned i = 0; i < t->n_lanes; i++)
        failed = failed || t->lanes[i].failed;
    /* The first DELETE ends the tunnel at the gateway: the later ones may
     * find their sessions already gone. */
    for (unsigned i = 0; i < t->n_lanes; i++)
        lane_free(&t->lanes[i], i == 0);
    g_free(reads);
    if (http)
        whip_client_free(http);
    moat_dtls_context_free(dtls_context);
    g_free(t);
    return failed ? -1 : 0;
}

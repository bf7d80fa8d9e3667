/* The tunnel over a WebRTC data channel through the gateway: DTLS
 * (dtls/dtls_transport.h) and SCTP (sctp/sctp_association.h), the gateway's
 * own modules, over the WHIP session and ICE path of tunnel_whip.c. One
 * channel in the chosen mode carries each IP packet as one binary message.
 * This file owns the link's poll loop: datagrams in, packets from the TUN
 * device out, timers, and recovery (an ICE restart) when the path stops
 * answering. */
#include "tunnel_sctp_link.h"

#include "sctp/sctp_stack.h"

#include <errno.h>
#include <glib.h>
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
    tunnel_run_deliver(l->run, data, length);
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
    if (up) {
        l->state = LINK_UP;
        l->run->connected_s = tunnel_now_s();
        fprintf(stderr, "moat-tunnel: connected (%s, device %s, mtu %u)\n",
                tunnel_mode_name(l->run->options->mode), l->run->tun_name, l->run->options->mtu);
    } else {
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
    snprintf(info.label, sizeof info.label, "tunnel");
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

/* Hands one packet to SCTP. false when it must wait (the send buffer is
 * full: it stays in l->pending until writable). */
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
    return true;
}

/* Packets from the TUN device into the association. One the send buffer
 * cannot take waits for writable, and the TUN device is not read meanwhile
 * (its own queue holds what comes): nothing read is dropped for lack of
 * room. */
static void forward_tun(sctp_link *l)
{
    static uint8_t packet[TUNNEL_MAX_MTU + 64];
    if (l->pending_length && !send_ip_packet(l, l->pending, l->pending_length))
        return;
    for (int i = 0; i < READS_PER_TURN && l->state == LINK_UP && !l->blocked; i++) {
        long n = tunnel_run_read_tun(l->run, packet, sizeof packet);
        if (n <= 0)
            return;
        send_ip_packet(l, packet, (size_t)n);
    }
}

/* Packets that arrive at the TUN device before the link is up are lost. */
static void drain_tun(sctp_link *l)
{
    uint8_t packet[TUNNEL_MAX_MTU + 64];
    while (tunnel_run_read_tun(l->run, packet, sizeof packet) > 0)
        l->run->figures.lost[TUNNEL_LOSS_NOT_CONNECTED]++;
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
    fprintf(stderr, "moat-tunnel: no answer for %.1f s: ICE restart (try %u of %u)\n",
            now - l->last_answer_s, l->restarts_tried, o->reconnects);
    if (tunnel_ice_restart(l, now) != 0)
        fprintf(stderr, "moat-tunnel: ICE restart failed; trying again in %.0f s\n",
                RESTART_RETRY_S);
}

static void timers(sctp_link *l, double now)
{
    if (l->sctp) {
        uint32_t elapsed_ms = (uint32_t)((now - l->last_tick_s) * 1000);
        if (elapsed_ms >= MOAT_SCTP_TIMER_INTERVAL_MS) {
            moat_sctp_stack_handle_timers(elapsed_ms);
            l->last_tick_s += elapsed_ms / 1000.0;
            moat_sctp_association_tick(l->sctp);
        }
    } else {
        l->last_tick_s = now;
    }
    if (l->dtls && l->state == LINK_DTLS && moat_dtls_transport_timeout_ms(l->dtls) == 0)
        moat_dtls_transport_handle_timeout(l->dtls);
    tunnel_ice_tick(l, now);
    const tunnel_options *o = l->run->options;
    if (l->state != LINK_UP && now > l->setup_deadline_s && !l->migrating) {
        tunnel_link_fail(l, l->state == LINK_CHECKING ? "no ICE answer from the gateway"
                                                      : "the DTLS/SCTP setup did not complete");
    } else if (l->state == LINK_UP && now >= l->next_restart_s &&
               ((l->recovering && !l->migrating) || now - l->last_answer_s > o->dead_s)) {
        /* Once the path was lost, the network may have changed under us
         * (a new address): keepalives the gateway answers from the old
         * socket do not end the recovery, a completed restart does. */
        recover(l, now);
    }
}

static int poll_timeout_ms(const sctp_link *l, double now)
{
    double next = l->next_check_s;
    if (l->sctp && l->last_tick_s + MOAT_SCTP_TIMER_INTERVAL_MS / 1000.0 < next)
        next = l->last_tick_s + MOAT_SCTP_TIMER_INTERVAL_MS / 1000.0;
    if (l->dtls && l->state == LINK_DTLS) {
        int64_t due = moat_dtls_transport_timeout_ms(l->dtls);
        if (due >= 0 && now + due / 1000.0 < next)
            next = now + due / 1000.0;
    }
    int ms = (int)((next - now) * 1000) + 1;
    return ms < 0 ? 0 : ms > 200 ? 200 : ms;
}

/* MOAT_TUNNEL_TRACE=1: the path's state every 100 ms on stderr. */
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
            "trace t=%.2f srtt_ms=%u cwnd=%u sndbuf=%zu rcvbuf=%zu buffered=%zu out=%llu in=%llu "
            "t3=%u fr=%u rtx=%u maxburst=%u blocked=%d\n",
            now, srtt_ms, cwnd, send, receive, moat_sctp_association_buffered_amount(l->sctp),
            (unsigned long long)l->run->figures.packets_out,
            (unsigned long long)l->run->figures.packets_in, stat.sctps_timodata,
            stat.sctps_sendfastretrans, stat.sctps_sendretransdata, stat.sctps_maxburstqueued,
            l->blocked);
}

static void loop(sctp_link *l)
{
    double next_trace = 0;
    double now = tunnel_now_s();
    l->trace = getenv("MOAT_TUNNEL_TRACE") != NULL; /* once, not per wake-up */
    l->setup_deadline_s = now + l->run->options->setup_timeout_s;
    l->last_answer_s = now;
    l->last_tick_s = now;
    while (!tunnel_stop_requested && l->state != LINK_ENDED) {
        struct pollfd pfd[2] = {
            {.fd = l->fd, .events = POLLIN},
            {.fd = l->run->tun_fd, .events = l->blocked ? 0 : POLLIN},
        };
        int ready = poll(pfd, 2, poll_timeout_ms(l, now));
        now = tunnel_now_s();
        l->batching = l->batch != NULL;
        if (ready > 0 && (pfd[0].revents & POLLIN))
            receive_datagrams(l, now);
        if (ready > 0 && (pfd[1].revents & POLLIN)) {
            if (l->state == LINK_UP)
                forward_tun(l);
            else
                drain_tun(l);
        }
        timers(l, now);
        l->batching = false;
        if (l->batch)
            tunnel_udp_batch_flush(l->batch);
        trace_path(l, now, &next_trace);
        tunnel_run_progress(l->run, l->state == LINK_UP ? "up"
                                    : l->migrating      ? "restarting"
                                                        : "connecting");
    }
}

int tunnel_sctp_run(tunnel_run *run)
{
    sctp_link l;
    memset(&l, 0, sizeof l);
    l.run = run;
    l.fd = -1;
    l.selected = -1;
    l.nominee = -1;
    char error[256];
    /* The stack is this process's alone: its default congestion control is
     * the tunnel's choice (--sctp-congestion). */
    if (moat_sctp_stack_init() != 0 ||
        usrsctp_sysctl_set_sctp_default_cc_module((uint32_t)run->options->sctp_cc) != 0) {
        tunnel_run_end(run, "cannot start the SCTP stack");
        return -1;
    }
    l.dtls_context = moat_dtls_context_new(run->certificate, error, sizeof error);
    l.http = whip_client_new(run->options->token, HTTP_TIMEOUT_S);
    if (!l.dtls_context || !l.http)
        tunnel_link_fail(&l, l.dtls_context ? "cannot make the HTTP client" : error);
    else if (tunnel_whip_open(&l) == 0) {
        if (!getenv("MOAT_TUNNEL_NO_BATCH")) {
            l.batch = tunnel_udp_batch_new(l.fd);
        }
        l.reads = g_malloc(sizeof *l.reads);
        loop(&l);
    }
    bool failed = l.failed;
    if (l.resource_url) {
        /* Hang up: the gateway ends our session and the other peer's. */
        if (whip_client_delete(l.http, l.resource_url, error, sizeof error) != 0 &&
            l.state != LINK_ENDED)
            fprintf(stderr, "moat-tunnel: WHIP DELETE: %s\n", error);
    }
    if (l.sctp)
        moat_sctp_association_free(l.sctp);
    moat_dtls_transport_free(l.dtls);
    moat_ice_client_free(l.ice);
    if (l.fd >= 0)
        close(l.fd);
    g_free(l.batch);
    g_free(l.reads);
    g_free(l.resource_url);
    if (l.http)
        whip_client_free(l.http);
    moat_dtls_context_free(l.dtls_context);
    return failed ? -1 : 0;
}

/* One side of the data-channel benchmark's transfer: the gateway's DTLS
 * transport carrying its SCTP association over a connected UDP socket, driven
 * by a poll loop with the workers' 10 ms SCTP tick; sends or measures. */
#include "dc_transfer.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>

#include <usrsctp.h>

#include "engine/udp_gso.h"
#include "dtls/dtls_transport.h"
#include "sctp/sctp_association.h"
#include "sctp/sctp_stack.h"

#define SCTP_PORT     5000
#define RECEIVE_BATCH 64
#define SEND_BATCH    64
/* A DTLS record of 2^14 bytes of SCTP, with its header, nonce and tag. */
#define DATAGRAM_SIZE   (16384 + 64)
#define SENDS_PER_TURN  64
#define SOCKET_BUFFER   (8 * 1024 * 1024)
#define ERROR_TEXT_SIZE 256

typedef struct {
    const dc_side *side;
    moat_dtls_transport *dtls;
    moat_sctp_association *sctp;
    bool dtls_connected;
    bool sctp_up;
    bool blocked; /* the last send found the SCTP send buffer full */
    bool done;    /* the receiver's window is over */
    bool failed;
    uint16_t stream_id;
    transfer_window window;
    uint8_t *message;
    char detail[96];
    /* Datagrams waiting for the next sendmmsg, as the gateway's workers
     * batch them (moat_worker_send, moat_worker_flush). */
    struct mmsghdr out_headers[SEND_BATCH];
    struct iovec out_vectors[SEND_BATCH];
    unsigned out_count;
    moat_udp_gso_plan plan;
    bool gso;
    uint64_t send_drops; /* datagrams a full socket buffer refused */
    /* Payload bytes sent or received, and this process's CPU time, from the
     * first message on (MOAT_BENCH_CPU). */
    uint64_t payload_bytes;
    double first_cpu_s;
    uint64_t too_big; /* datagrams over the interface MTU (EMSGSIZE): probes */
} dc_endpoint;

static uint8_t out_buffers[SEND_BATCH][DATAGRAM_SIZE];
_Static_assert(SEND_BATCH <= MOAT_UDP_GSO_MAX_BATCH, "a plan covers the whole batch");

/* Set by SIGTERM under MOAT_BENCH_CPU: the sender, which runs until the
 * parent stops it, leaves its loop and reports. */
static volatile sig_atomic_t stop_requested;

static void request_stop(int signal_number)
{
    (void)signal_number;
    stop_requested = 1;
}

static double cpu_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Payload seen by this side; the CPU clock starts with the first of it. */
static void count_payload(dc_endpoint *e, size_t length)
{
    if (e->payload_bytes == 0)
        e->first_cpu_s = cpu_now_s();
    e->payload_bytes += length;
}

/* With MOAT_BENCH_CPU set, each side prints the CPU time it spent per MB of
 * payload (stderr): what a change saves shows even when the machine's load
 * moves the throughput. */
static void report_cpu(const dc_endpoint *e)
{
    if (!getenv("MOAT_BENCH_CPU") || e->payload_bytes == 0)
        return;
    double cpu_s = cpu_now_s() - e->first_cpu_s;
    fprintf(stderr, "cpu %s ms_per_MB=%.3f MB=%.1f cpu_s=%.3f\n",
            e->side->is_sender ? "sender" : "receiver", cpu_s * 1e3 / (e->payload_bytes / 1e6),
            e->payload_bytes / 1e6, cpu_s);
}

/* As moat_worker_flush: runs of equal datagrams leave as UDP GSO messages
 * while the kernel takes them. */
static void flush_datagrams(dc_endpoint *e)
{
    unsigned next = 0;
    bool gso = e->gso;
    while (next < e->out_count) {
        moat_udp_gso_plan_batch(&e->plan, e->out_headers, next, e->out_count, gso);
        unsigned m = 0;
        while (m < e->plan.length) {
            int n =
                sendmmsg(e->side->udp_fd, &e->plan.headers[m], e->plan.length - m, MSG_DONTWAIT);
            if (n > 0) {
                m += (unsigned)n;
                continue;
            }
            break;
        }
        if (m == e->plan.length) {
            next = e->out_count;
        } else if (e->plan.count[m] > 1 && errno != EAGAIN && errno != ENOBUFS) {
            e->gso = gso = false; /* the socket cannot segment: one by one */
            next = e->plan.first[m];
        } else if (errno == EMSGSIZE) {
            /* Over the interface's MTU (the socket does not fragment): that
             * datagram alone is lost, as a path MTU discovery probe may be. */
            e->too_big++;
            next = e->plan.first[m] + 1;
        } else {
            /* a full socket buffer drops the rest, as a congested link would */
            e->send_drops += e->out_count - e->plan.first[m];
            next = e->out_count;
        }
    }
    e->out_count = 0;
}

/* Keeps the first reason, cut to fit. */
static void fail(dc_endpoint *e, const char *what)
{
    if (!e->failed) {
        size_t length = strnlen(what, sizeof e->detail - 1);
        memcpy(e->detail, what, length);
        e->detail[length] = '\0';
    }
    e->failed = true;
}

static void sctp_send_packet(void *user, const uint8_t *packet, size_t length)
{
    dc_endpoint *e = user;
    if (e->dtls_connected)
        moat_dtls_transport_send(e->dtls, packet, length);
}

static void sctp_channel_open(void *user, const moat_data_channel_info *info) {}

static void sctp_message(void *user, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                         size_t length)
{
    dc_endpoint *e = user;
    if (e->side->is_sender)
        return;
    count_payload(e, length);
    if (transfer_window_add(&e->window, transfer_now_s(), length))
        e->done = true;
}

static void sctp_channel_closed(void *user, uint16_t stream_id)
{
    fail(user, "the channel closed");
}

static void sctp_association_state(void *user, bool up)
{
    dc_endpoint *e = user;
    e->sctp_up = up;
    if (!up)
        fail(e, "the SCTP association ended");
}

static void sctp_sender_dry(void *user) {}

static void sctp_writable(void *user)
{
    dc_endpoint *e = user;
    e->blocked = false;
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

/* DTLS is up: SCTP starts, and the sender opens its channel (DCEP OPEN goes
 * out once the association is up). */
static void start_sctp(dc_endpoint *e)
{
    char error[ERROR_TEXT_SIZE];
    e->sctp = moat_sctp_association_new(e->side->is_sender, SCTP_PORT, SCTP_PORT, 0,
                                        &sctp_callbacks, e, error, sizeof error);
    if (e->sctp == NULL) {
        fail(e, error);
        return;
    }
    if (e->side->is_sender) {
        moat_data_channel_info info;
        memset(&info, 0, sizeof info);
        snprintf(info.label, sizeof info.label, "bench");
        info.ordered = e->side->params.ordered;
        info.max_retransmits = -1;
        info.max_lifetime_ms = -1;
        if (moat_sctp_association_open_channel(e->sctp, &info, &e->stream_id) != 0)
            fail(e, "cannot open the channel");
    }
    if (e->side->params.plpmtud_max != 0) {
        if (moat_sctp_association_enable_plpmtud(e->sctp, e->side->params.plpmtud_max) != 0)
            fail(e, "cannot enable path MTU discovery");
    } else if (e->side->params.sctp_mtu != 0 &&
               moat_sctp_association_set_mtu(e->sctp, e->side->params.sctp_mtu) != 0) {
        fail(e, "cannot set the SCTP packet size");
    }
    moat_sctp_association_connect(e->sctp);
}

static void dtls_send(void *user, const uint8_t *datagram, size_t length)
{
    dc_endpoint *e = user;
    if (length > DATAGRAM_SIZE)
        return;
    if (e->out_count == SEND_BATCH)
        flush_datagrams(e);
    unsigned i = e->out_count++;
    memcpy(out_buffers[i], datagram, length);
    e->out_vectors[i] = (struct iovec){.iov_base = out_buffers[i], .iov_len = length};
    e->out_headers[i] =
        (struct mmsghdr){.msg_hdr = {.msg_iov = &e->out_vectors[i], .msg_iovlen = 1}};
}

static void dtls_connected(void *user, const moat_srtp_keying *keys)
{
    dc_endpoint *e = user;
    e->dtls_connected = true;
    start_sctp(e);
}

static void dtls_application_data(void *user, const uint8_t *data, size_t length)
{
    dc_endpoint *e = user;
    if (e->sctp != NULL)
        moat_sctp_association_receive(e->sctp, data, length);
}

static void dtls_closed(void *user, moat_dtls_state state, const char *reason)
{
    dc_endpoint *e = user;
    char text[ERROR_TEXT_SIZE];
    snprintf(text, sizeof text, "DTLS %s: %s", moat_dtls_state_name(state), reason);
    fail(e, text);
}

static const moat_dtls_callbacks dtls_callbacks = {
    .send = dtls_send,
    .connected = dtls_connected,
    .application_data = dtls_application_data,
    .closed = dtls_closed,
};

static void receive_datagrams(dc_endpoint *e)
{
    static uint8_t buffers[RECEIVE_BATCH][DATAGRAM_SIZE];
    struct mmsghdr messages[RECEIVE_BATCH];
    struct iovec vectors[RECEIVE_BATCH];
    for (int i = 0; i < RECEIVE_BATCH; i++) {
        vectors[i] = (struct iovec){.iov_base = buffers[i], .iov_len = DATAGRAM_SIZE};
        messages[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &vectors[i], .msg_iovlen = 1}};
    }
    for (;;) {
        int n = recvmmsg(e->side->udp_fd, messages, RECEIVE_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0)
            return;
        for (int i = 0; i < n && !e->failed; i++)
            moat_dtls_transport_receive(e->dtls, buffers[i], messages[i].msg_len);
        if (n < RECEIVE_BATCH)
            return;
    }
}

static bool can_send(const dc_endpoint *e)
{
    return e->side->is_sender && e->sctp_up && !e->blocked && !e->failed;
}

static void send_messages(dc_endpoint *e)
{
    for (int i = 0; i < SENDS_PER_TURN && can_send(e); i++) {
        int rc = moat_sctp_association_send(e->sctp, e->stream_id, MOAT_SCTP_PPID_BINARY,
                                            e->message, e->side->params.message_size);
        if (rc == 0)
            count_payload(e, e->side->params.message_size);
        else if (rc == -EAGAIN)
            e->blocked = true;
        else
            fail(e, "a send failed");
    }
}

/* How long poll may sleep: until the next SCTP tick or DTLS retransmission,
 * not at all while the sender has room to send. */
static int poll_timeout_ms(dc_endpoint *e, double last_tick_s)
{
    if (can_send(e))
        return 0;
    int timeout = MOAT_SCTP_TIMER_INTERVAL_MS - (int)((transfer_now_s() - last_tick_s) * 1000);
    if (!e->dtls_connected) {
        int64_t due = moat_dtls_transport_timeout_ms(e->dtls);
        if (due >= 0 && due < timeout)
            timeout = (int)due;
    }
    return timeout > 0 ? timeout : 0;
}

/* With MOAT_BENCH_TRACE set in the environment, the sender prints its
 * path's state every 100 ms, and each side its UDP socket's drops at the end
 * (stderr), to see what limits a transfer. */
static void trace_path(dc_endpoint *e, double *next_s)
{
    double now = transfer_now_s();
    if (!e->side->is_sender || e->sctp == NULL || now < *next_s || !getenv("MOAT_BENCH_TRACE"))
        return;
    *next_s = now + 0.1;
    uint32_t srtt_ms = 0, cwnd = 0;
    size_t send = 0, receive = 0;
    moat_sctp_association_path_status(e->sctp, &srtt_ms, &cwnd);
    moat_sctp_association_buffer_sizes(e->sctp, &send, &receive);
    struct sctpstat stat;
    memset(&stat, 0, sizeof stat);
    usrsctp_get_stat(&stat);
    fprintf(stderr,
            "trace t=%.2f srtt_ms=%u cwnd=%u sndbuf=%zu buffered=%zu send_drops=%llu t3=%u "
            "fr=%u rtx=%u maxburst=%u\n",
            now, srtt_ms, cwnd, send, moat_sctp_association_buffered_amount(e->sctp),
            (unsigned long long)e->send_drops, stat.sctps_timodata, stat.sctps_sendfastretrans,
            stat.sctps_sendretransdata, stat.sctps_maxburstqueued);
}

static void trace_drops(const dc_endpoint *e)
{
    uint32_t info[SK_MEMINFO_VARS];
    socklen_t length = sizeof info;
    if (!getenv("MOAT_BENCH_TRACE") ||
        getsockopt(e->side->udp_fd, SOL_SOCKET, SO_MEMINFO, info, &length) != 0)
        return;
    fprintf(stderr, "trace %s udp_drops=%u send_drops=%llu too_big=%llu\n",
            e->side->is_sender ? "sender" : "receiver", info[SK_MEMINFO_DROPS],
            (unsigned long long)e->send_drops, (unsigned long long)e->too_big);
}

static void run(dc_endpoint *e)
{
    double next_trace = 0;
    const transfer_params *params = &e->side->params;
    double deadline = transfer_now_s() + params->timeout_s;
    double last_tick = transfer_now_s();
    moat_dtls_transport_start(e->dtls);
    struct pollfd pfd = {.fd = e->side->udp_fd, .events = POLLIN};
    while (!e->failed && !e->done && !stop_requested && transfer_now_s() < deadline) {
        if (poll(&pfd, 1, poll_timeout_ms(e, last_tick)) > 0)
            receive_datagrams(e);
        uint32_t elapsed_ms = (uint32_t)((transfer_now_s() - last_tick) * 1000);
        if (elapsed_ms >= MOAT_SCTP_TIMER_INTERVAL_MS) {
            moat_sctp_stack_handle_timers(elapsed_ms);
            last_tick += elapsed_ms / 1000.0;
            /* The gateway's periodic tick: path MTU discovery's timers. */
            moat_sctp_association_tick(e->sctp);
        }
        if (!e->dtls_connected && moat_dtls_transport_timeout_ms(e->dtls) == 0)
            moat_dtls_transport_handle_timeout(e->dtls);
        send_messages(e);
        flush_datagrams(e);
        trace_path(e, &next_trace);
    }
    trace_drops(e);
    report_cpu(e);
    if (!e->failed && !e->done && !e->side->is_sender)
        fail(e, "timed out");
}

static void set_socket_buffers(int fd)
{
    int size = SOCKET_BUFFER;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
}

void dc_transfer_side(void *arg, transfer_result *result)
{
    const dc_side *side = arg;
    dc_endpoint e;
    memset(&e, 0, sizeof e);
    e.side = side;
    transfer_window_init(&e.window, &side->params);
    e.message = calloc(1, side->params.message_size);
    set_socket_buffers(side->udp_fd);
    /* MOAT_BENCH_NO_GSO: one message per datagram, as before GSO. */
    e.gso = moat_udp_gso_supported(side->udp_fd) && !getenv("MOAT_BENCH_NO_GSO");
    if (getenv("MOAT_BENCH_CPU"))
        signal(SIGTERM, request_stop);
    char error[ERROR_TEXT_SIZE];
    e.dtls = moat_dtls_transport_new(
        side->context, side->is_sender ? MOAT_DTLS_ROLE_CLIENT : MOAT_DTLS_ROLE_SERVER, "sha-256",
        side->peer_fingerprint, &dtls_callbacks, &e, error, sizeof error);
    if (e.dtls == NULL || e.message == NULL)
        fail(&e, e.dtls == NULL ? error : "out of memory");
    else
        run(&e);
    if (e.done) {
        transfer_window_result(&e.window, result);
        moat_sctp_plpmtud_status pmtu;
        moat_sctp_association_plpmtud_status(e.sctp, &pmtu);
        result->sctp_packet = side->params.plpmtud_max != 0 ? pmtu.pmtu
                              : side->params.sctp_mtu != 0  ? (uint32_t)side->params.sctp_mtu
                                                            : pmtu.pmtu;
    } else
        snprintf(result->detail, sizeof result->detail, "%s", e.detail);
    moat_sctp_association_free(e.sctp);
    moat_dtls_transport_free(e.dtls);
    free(e.message);
}

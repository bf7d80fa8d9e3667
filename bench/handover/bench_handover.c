/* Handover benchmark: how long media stops when a client changes address.
 * A gateway (build/gateway/moat) runs in one network namespace, the client
 * (moat-flood's session code: its ICE client, DTLS, SRTP and media) in
 * another, joined by a link with a fixed RTT (bench/datachannel's netns link:
 * tc netem, or the TUN link emulator). At each RTT the client, in a call,
 * moves to a second address and the time from that change to the first
 * echoed packet is measured two ways:
 *   (a) resume: the same session re-nominates its pair from the new address
 *       (ICE address migration; DTLS and SRTP continue);
 *   (b) reconnect: a full new WHIP session from the new address (HTTP POST,
 *       ICE, DTLS handshake, SRTP);
 * and, for reference, (c) restart: the same session moves through an ICE
 * restart (WHIP PATCH on a new HTTP connection, then checks with the new
 * credentials; DTLS and SRTP continue).
 * Media is audio at 50 packets/s, so each figure includes the wait for the
 * next 20 ms frame. Each is repeated and the median printed. Needs root. */
#include "flood_clock.h"
#include "bench_quick.h"
#include "flood_options.h"
#include "legit_media.h"
#include "netns_link.h"
#include "whip_session.h"

#include "dtls/certificate.h"
#include "dtls/dtls_context.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define HTTP_PORT       8088
#define MEDIA_PORT      20000
#define SECOND_ADDRESS  "198.18.9.1" /* the client's address after the handover */
#define REPEATS         5
#define CALL_WARMUP_US  500000u
#define STEP_TIMEOUT_US (10u * 1000000u)

static const unsigned rtts_ms[] = {5, 30, 100};

typedef struct {
    double resume_ms, reconnect_ms, restart_ms;
} handover_figures;

typedef struct {
    netns_link *link;
    pid_t gateway;
    int home_ns; /* the bench's own namespace, to come back to */
    char url[128];
    flood_options options;
    moat_certificate *certificate;
    flood_session_env env;
    struct sockaddr_in6 first, second; /* the client's two addresses */
} bench;

#define RUN(...) netns_link_run_quiet((const char *const[]){__VA_ARGS__, NULL})

static int enter_namespace(const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "/var/run/netns/%s", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int result = setns(fd, CLONE_NEWNET);
    close(fd);
    return result;
}

static void v4_mapped(const char *text, struct sockaddr_in6 *out)
{
    struct in_addr v4;
    memset(out, 0, sizeof *out);
    out->sin6_family = AF_INET6;
    inet_pton(AF_INET, text, &v4);
    out->sin6_addr.s6_addr[10] = 0xff;
    out->sin6_addr.s6_addr[11] = 0xff;
    memcpy(&out->sin6_addr.s6_addr[12], &v4, 4);
}

/* The client's second address, routed back to it from the gateway side. */
static int add_second_address(const netns_link *link)
{
    const char *client_ns = netns_link_namespace(link, NETNS_LINK_SENDER);
    const char *gateway_ns = netns_link_namespace(link, NETNS_LINK_RECEIVER);
    return RUN("ip", "-n", client_ns, "addr", "add", SECOND_ADDRESS "/32", "dev",
               netns_link_device(link, NETNS_LINK_SENDER)) == 0 &&
                   RUN("ip", "-n", gateway_ns, "route", "add", SECOND_ADDRESS "/32", "dev",
                       netns_link_device(link, NETNS_LINK_RECEIVER)) == 0
               ? 0
               : -1;
}

static pid_t start_gateway(const netns_link *link, const char *moat)
{
    pid_t pid = fork();
    if (pid == 0) {
        int null_fd = open("/dev/null", O_WRONLY);
        if (null_fd >= 0) {
            dup2(null_fd, STDOUT_FILENO);
            dup2(null_fd, STDERR_FILENO);
        }
        char port[16], media[16];
        snprintf(port, sizeof port, "%d", HTTP_PORT);
        snprintf(media, sizeof media, "%d", MEDIA_PORT);
        execlp("ip", "ip", "netns", "exec", netns_link_namespace(link, NETNS_LINK_RECEIVER), moat,
               "--http-bind", NETNS_LINK_RECEIVER_ADDRESS, "--http-port", port, "--media-port",
               media, "--workers", "1", "--candidate-addresses", NETNS_LINK_RECEIVER_ADDRESS,
               "--log-level", "warn", (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* From the client's namespace: the gateway's HTTP port accepts. */
static bool gateway_up(void)
{
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(HTTP_PORT)};
    inet_pton(AF_INET, NETNS_LINK_RECEIVER_ADDRESS, &to.sin_addr);
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&to, sizeof to) == 0;
        if (fd >= 0)
            close(fd);
        if (ok)
            return true;
        usleep(100000);
    }
    return false;
}

/* One step of a session's I/O: waits for its socket or its next timer (at
 * most until deadline), then receives, ticks and sends due media. */
static void pump(flood_session *s, uint64_t deadline_us)
{
    uint64_t now = flood_now_us();
    uint64_t next = flood_session_next_timer_us(s, now);
    uint64_t media = legit_media_next_due_us(s);
    if (media < next)
        next = media;
    if (deadline_us < next)
        next = deadline_us;
    int timeout_ms = next > now ? (int)((next - now + 999) / 1000) : 0;
    struct pollfd p = {.fd = s->fd, .events = POLLIN};
    poll(&p, 1, timeout_ms);
    now = flood_now_us();
    flood_session_receive(s, now);
    flood_session_tick(s, now);
    legit_media_send_due(s, now);
}

/* Opens a session and runs it until connected and echoing; 0 or -1. */
static int connect_session(flood_session *s, const flood_session_env *env)
{
    flood_session_init(s); /* s is on the caller's stack: no fan-out role */
    uint64_t start = flood_now_us();
    if (flood_session_open(s, 0, env, start) != 0)
        return -1;
    while (s->state != FLOOD_SESSION_CONNECTED && s->state != FLOOD_SESSION_FAILED &&
           flood_now_us() - start < STEP_TIMEOUT_US)
        pump(s, flood_now_us() + 10000);
    if (s->state != FLOOD_SESSION_CONNECTED)
        return -1;
    legit_media_start(s, flood_now_us());
    while (s->echo.received == 0 && flood_now_us() - start < STEP_TIMEOUT_US)
        pump(s, flood_now_us() + 10000);
    return s->echo.received > 0 ? 0 : -1;
}

static void run_for(flood_session *s, uint64_t duration_us)
{
    uint64_t end = flood_now_us() + duration_us;
    while (flood_now_us() < end)
        pump(s, end);
}

/* (a) The session moves its socket to `to`: ms until the first echo. */
static double measure_resume(flood_session *s, const struct sockaddr_in6 *to)
{
    uint64_t start = flood_now_us();
    uint64_t received = s->echo.received;
    if (flood_session_migrate(s, to, start) != 0)
        return -1;
    while (s->echo.received == received && flood_now_us() - start < STEP_TIMEOUT_US)
        pump(s, flood_now_us() + 10000);
    return s->echo.received > received ? (double)(flood_now_us() - start) / 1000.0 : -1;
}

/* (c) The session moves to `to` through an ICE restart, its PATCH on a new
 * HTTP connection: ms until the first echo. */
static double measure_restart(flood_session *s, bench *b, const struct sockaddr_in6 *to)
{
    uint64_t start = flood_now_us();
    uint64_t received = s->echo.received;
    whip_client *old = b->env.http;
    b->env.http = whip_client_new(NULL, 10, NULL);
    int moved = flood_session_restart_ice(s, to, start);
    whip_client_free(b->env.http);
    b->env.http = old;
    if (moved != 0)
        return -1;
    while (s->echo.received == received && flood_now_us() - start < STEP_TIMEOUT_US)
        pump(s, flood_now_us() + 10000);
    return s->echo.received > received ? (double)(flood_now_us() - start) / 1000.0 : -1;
}

/* (b) A new WHIP session from `from` (with a fresh HTTP connection, as the
 * old one left with the old address): ms until its first echo. */
static double measure_reconnect(bench *b, const struct sockaddr_in6 *from)
{
    uint64_t start = flood_now_us();
    whip_client *http = whip_client_new(NULL, 10, NULL);
    flood_session_env env = b->env;
    env.http = http;
    env.bind_local = from;
    flood_session s;
    double result = -1;
    if (connect_session(&s, &env) == 0)
        result = (double)(flood_now_us() - start) / 1000.0;
    char error[256];
    flood_session_close(&s, true, error, sizeof error);
    whip_client_free(http);
    return result;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, size_t n)
{
    qsort(values, n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

static int measure(bench *b, handover_figures *out)
{
    double resume[REPEATS], reconnect[REPEATS], restart[REPEATS];
    const int repeats = BENCH_SCALE(REPEATS, 1);
    flood_session s;
    if (connect_session(&s, &b->env) != 0) {
        fprintf(stderr, "handover: the call did not connect (%s)\n", s.error);
        char error[256];
        flood_session_close(&s, false, error, sizeof error);
        return -1;
    }
    run_for(&s, CALL_WARMUP_US);
    int status = 0;
    for (int i = 0; i < repeats && status == 0; i++) {
        /* Back and forth between the two addresses: a new tuple every time. */
        resume[i] = measure_resume(&s, i % 2 ? &b->first : &b->second);
        status = resume[i] < 0 ? -1 : 0;
        run_for(&s, CALL_WARMUP_US);
    }
    for (int i = 0; i < repeats && status == 0; i++) {
        restart[i] = measure_restart(&s, b, i % 2 ? &b->second : &b->first);
        status = restart[i] < 0 ? -1 : 0;
        run_for(&s, CALL_WARMUP_US);
    }
    char error[256];
    flood_session_close(&s, true, error, sizeof error);
    for (int i = 0; i < repeats && status == 0; i++) {
        reconnect[i] = measure_reconnect(b, &b->second);
        status = reconnect[i] < 0 ? -1 : 0;
    }
    if (status != 0) {
        fprintf(stderr, "handover: a handover did not complete\n");
        return -1;
    }
    out->resume_ms = median(resume, (size_t)repeats);
    out->reconnect_ms = median(reconnect, (size_t)repeats);
    out->restart_ms = median(restart, (size_t)repeats);
    return 0;
}

static void moat_path(char *out, size_t size)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char *dir = g_path_get_dirname(self);
    snprintf(out, size, "%s/../gateway/moat", dir);
    g_free(dir);
}

/* Link, gateway and client namespace for one RTT; then the measurements. */
static int bench_rtt(bench *b, unsigned rtt_ms, const char *moat, handover_figures *out)
{
    char error[256];
    b->link = netns_link_create(rtt_ms, error, sizeof error);
    if (b->link == NULL) {
        fprintf(stderr, "handover: %s\n", error);
        return -1;
    }
    int status = -1;
    if (add_second_address(b->link) != 0) {
        fprintf(stderr, "handover: cannot add the second client address\n");
    } else if ((b->gateway = start_gateway(b->link, moat)) > 0) {
        if (enter_namespace(netns_link_namespace(b->link, NETNS_LINK_SENDER)) == 0 &&
            gateway_up()) {
            b->env.http = whip_client_new(NULL, 10, NULL);
            status = measure(b, out);
            whip_client_free(b->env.http);
            b->env.http = NULL;
        } else {
            fprintf(stderr, "handover: the gateway did not come up\n");
        }
        setns(b->home_ns, CLONE_NEWNET);
        kill(b->gateway, SIGTERM);
        waitpid(b->gateway, NULL, 0);
    }
    char method[32];
    snprintf(method, sizeof method, "%s", netns_link_method(b->link));
    netns_link_destroy(b->link);
    b->link = NULL;
    printf("rtt_ms=%u link=\"%s\" resume_ms=%.1f reconnect_ms=%.1f ratio=%.1f restart_ms=%.1f\n",
           rtt_ms, method, status == 0 ? out->resume_ms : -1, status == 0 ? out->reconnect_ms : -1,
           status == 0 ? out->reconnect_ms / out->resume_ms : 0,
           status == 0 ? out->restart_ms : -1);
    fflush(stdout);
    return status;
}

static int setup_client(bench *b)
{
    snprintf(b->url, sizeof b->url, "http://%s:%d/whip/echo", NETNS_LINK_RECEIVER_ADDRESS,
             HTTP_PORT);
    /* 198.18.0.0/15 is the benchmarking range, not a private network. */
    char *argv[] = {"handover", "--whip",  b->url,           "--sessions",
                    "1",        "--quiet", "--allow-remote", NULL};
    char error[256];
    if (flood_options_parse(7, argv, &b->options, error, sizeof error) != FLOOD_OPTIONS_RUN) {
        fprintf(stderr, "handover: %s\n", error);
        return -1;
    }
    b->certificate = moat_certificate_generate(error, sizeof error);
    if (b->certificate == NULL)
        return -1;
    b->env.options = &b->options;
    b->env.fingerprint = moat_certificate_fingerprint(b->certificate);
    b->env.dtls_context = moat_dtls_context_new(b->certificate, error, sizeof error);
    if (b->env.dtls_context == NULL)
        return -1;
    v4_mapped(NETNS_LINK_SENDER_ADDRESS, &b->first);
    v4_mapped(SECOND_ADDRESS, &b->second);
    return 0;
}

int main(void)
{
    if (geteuid() != 0) {
        printf("handover: skipped (needs root for network namespaces)\n");
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    static bench b;
    b.home_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    char moat[PATH_MAX + 32];
    moat_path(moat, sizeof moat);
    if (b.home_ns < 0 || access(moat, X_OK) != 0 || setup_client(&b) != 0) {
        fprintf(stderr, "handover: cannot set up (gateway at %s)\n", moat);
        return 1;
    }
    handover_figures at30 = {0};
    int status = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(rtts_ms); i++) {
        handover_figures f;
        if (bench_rtt(&b, rtts_ms[i], moat, &f) != 0)
            status = 1;
        else if (rtts_ms[i] == 30)
            at30 = f;
    }
    moat_dtls_context_free(b.env.dtls_context);
    moat_certificate_free(b.certificate);
    close(b.home_ns);
    if (status != 0 || at30.resume_ms <= 0)
        return 1;
    printf("handover resume_ms=%.1f reconnect_ms=%.1f ratio=%.1f\n", at30.resume_ms,
           at30.reconnect_ms, at30.reconnect_ms / at30.resume_ms);
    return 0;
}

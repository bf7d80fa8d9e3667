/* The flood bench's fixture: one media worker with one session whose handshake
 * is bypassed, in a network namespace, per prefilter mode (off, legacy, SRTP+,
 * kernel filter), and the CPU accounting of a run (ksoftirqd included). */
#include "flood_fixture.h"

#include "session/session.h"
#include "engine/worker.h"
#include "flood_generator.h"
#include "sdp/sdp.h"
#include "srtp/srtp_session.h"
#include "srtpplus.h"

#include <arpa/inet.h>
#include <glib.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define LEGIT_SSRC 0x5eed0001u

const char *flood_mode_name(flood_mode mode)
{
    static const char *const names[] = {"off",  "legacy",        "prn",        "chain",
                                        "bare", "kernel_legacy", "kernel_prn", "kernel_chain"};
    return mode < FLOOD_MODE_COUNT ? names[mode] : "?";
}

/* The session's plugin: authenticated packets are counted, nothing is sent. */
static uint64_t plugin_rtp_received;

static void *discard_attach(moat_plugin_session *session, const moat_session_info *info,
                            const char **error)
{
    return &plugin_rtp_received;
}

static void discard_detach(void *state) {}

static void discard_rtp(void *state, uint8_t *packet, size_t length, size_t capacity)
{
    __atomic_add_fetch((uint64_t *)state, 1, __ATOMIC_RELAXED);
}

static const moat_plugin discard_plugin = {
    .api_version = MOAT_PLUGIN_API_VERSION,
    .name = "discard",
    .attach = discard_attach,
    .detach = discard_detach,
    .on_rtp = discard_rtp,
};

typedef struct {
    moat_session *session;
    moat_path path;
    moat_srtp_keying keys;
} start_request;

static void start_task(moat_worker *worker, void *data)
{
    start_request *request = data;
    moat_session_start(request->session);
    moat_session_bypass_handshake(request->session, &request->path, &request->keys);
}

/* Holds the worker thread (blocked, using no CPU) while a backlog builds. */
typedef struct {
    GMutex lock;
    GCond cond;
    bool holding;
    bool released;
} worker_gate;

static void gate_task(moat_worker *worker, void *data)
{
    worker_gate *gate = data;
    g_mutex_lock(&gate->lock);
    gate->holding = true;
    g_cond_broadcast(&gate->cond);
    while (!gate->released)
        g_cond_wait(&gate->cond, &gate->lock);
    g_mutex_unlock(&gate->lock);
}

static void pin_to_cpu(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu % (int)sysconf(_SC_NPROCESSORS_ONLN), &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static bool is_kernel(flood_mode mode)
{
    return mode == FLOOD_MODE_KERNEL_LEGACY || mode == FLOOD_MODE_KERNEL_PRN ||
           mode == FLOOD_MODE_KERNEL_CHAIN;
}

/* The user-space mode a kernel mode adds its filter to. */
static flood_mode base_mode(flood_mode mode)
{
    switch (mode) {
    case FLOOD_MODE_KERNEL_LEGACY:
        return FLOOD_MODE_LEGACY;
    case FLOOD_MODE_KERNEL_PRN:
        return FLOOD_MODE_PRN;
    case FLOOD_MODE_KERNEL_CHAIN:
        return FLOOD_MODE_CHAIN;
    default:
        return mode;
    }
}

static uint64_t ticks_ns(unsigned long long ticks)
{
    return ticks * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* utime + stime of every ksoftirqd thread, in clock ticks. */
static unsigned long long ksoftirqd_ticks(void)
{
    unsigned long long total = 0;
    GDir *proc = g_dir_open("/proc", 0, NULL);
    const char *name;
    while (proc && (name = g_dir_read_name(proc))) {
        if (name[0] < '0' || name[0] > '9')
            continue;
        char path[64], line[512];
        snprintf(path, sizeof path, "/proc/%s/stat", name);
        FILE *file = fopen(path, "r");
        if (!file)
            continue;
        size_t n = fread(line, 1, sizeof line - 1, file);
        fclose(file);
        line[n] = '\0';
        const char *close = strrchr(line, ')');
        if (!strstr(line, "(ksoftirqd/") || !close)
            continue;
        unsigned long long utime = 0, stime = 0;
        /* After "comm)": state and 10 more fields, then utime and stime. */
        if (sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                   &stime) == 2)
            total += utime + stime;
    }
    if (proc)
        g_dir_close(proc);
    return total;
}

void flood_cpu_sample_take(flood_cpu_sample *sample)
{
    memset(sample, 0, sizeof *sample);
    FILE *file = fopen("/proc/stat", "r");
    if (file) {
        unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0,
                           softirq = 0, steal = 0;
        if (fscanf(file, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system,
                   &idle, &iowait, &irq, &softirq, &steal) >= 7) {
            sample->busy_ns = ticks_ns(user + nice + system + irq + softirq + steal);
            sample->idle_ns = ticks_ns(idle + iowait);
        }
        fclose(file);
    }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    sample->process_ns = (uint64_t)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000000ull +
                         (uint64_t)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000ull;
    sample->ksoftirqd_ns = ticks_ns(ksoftirqd_ticks());
}

void flood_cpu_account(const flood_cpu_sample *before, const flood_cpu_sample *after, uint64_t sent,
                       flood_result *result)
{
    uint64_t busy = after->busy_ns - before->busy_ns;
    uint64_t idle = after->idle_ns - before->idle_ns;
    uint64_t own =
        (after->process_ns - before->process_ns) + (after->ksoftirqd_ns - before->ksoftirqd_ns);
    result->paced_sent = sent;
    result->machine_ns_per_packet = sent ? (double)busy / sent : 0;
    result->own_ns_per_packet = sent ? (double)own / sent : 0;
    result->idle_share = busy + idle ? (double)idle / (busy + idle) : 0;
}

#define BLACKHOLE_ADDRESS "198.51.100.2"

int flood_enter_netns(void)
{
    if (geteuid() != 0 || unshare(CLONE_NEWNET) != 0)
        return -1;
    /* Loopback for the worker and the generator; a veth whose peer stays
     * down for the generator's baseline: its packets leave the generator and
     * are dropped at transmit, so nothing receives them. */
    return system("ip link set lo up && ip link add moatv0 type veth peer name moatv1 && "
                  "ip addr add 198.51.100.1/24 dev moatv0 && ip link set moatv0 up && "
                  "ip neigh replace " BLACKHOLE_ADDRESS " lladdr 02:00:00:00:00:02 dev moatv0 "
                  "nud permanent") == 0
               ? 0
               : -1;
}

int flood_paced_baseline(const flood_options *options, flood_result *result)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in blackhole = {.sin_family = AF_INET, .sin_port = htons(9)};
    inet_pton(AF_INET, BLACKHOLE_ADDRESS, &blackhole.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&blackhole, sizeof blackhole) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    pin_to_cpu(1);
    flood_generator generator = {.fd = fd, .forged_size = options->forged_size, .ssrc = LEGIT_SSRC};
    memset(result, 0, sizeof *result);
    flood_cpu_sample before, after;
    flood_cpu_sample_take(&before);
    flood_generator_paced(&generator, options->paced_pps, options->paced_seconds);
    flood_cpu_sample_take(&after);
    close(fd);
    flood_cpu_account(&before, &after, generator.forged_sent, result);
    return generator.forged_sent ? 0 : -1;
}

static moat_sdp_negotiation *negotiation_for(flood_mode mode)
{
    static moat_sdp_negotiation negotiation;
    memset(&negotiation, 0, sizeof negotiation);
    negotiation.n_media = 1;
    moat_sdp_negotiated_media *media = &negotiation.media[0];
    media->kind = MOAT_MEDIA_KIND_AUDIO;
    strcpy(media->mid, "0");
    media->accepted = true;
    media->peer_sends = true;
    media->payload_types[0] = 0;
    media->n_payload_types = 1;
    strcpy(media->codec_names[0], "PCMU");
    media->clock_rates[0] = 8000;
    media->remote_ssrc = LEGIT_SSRC;
    strcpy(negotiation.remote_fingerprint_alg, "sha-256");
    strcpy(negotiation.remote_fingerprint, "00");
    negotiation.local_setup = MOAT_SDP_SETUP_PASSIVE;
    if (mode == FLOOD_MODE_PRN || mode == FLOOD_MODE_CHAIN) {
        negotiation.srtpplus = true;
        strcpy(negotiation.srtpplus_scheme.scheme, mode == FLOOD_MODE_PRN ? "prn" : "chain");
        negotiation.srtpplus_scheme.depth = 32;
        negotiation.srtpplus_scheme.copies = 2;
    }
    return &negotiation;
}

static moat_prefilter_settings settings_for(flood_mode mode)
{
    moat_prefilter_settings settings = {
        .mode = mode == FLOOD_MODE_OFF ? MOAT_DETECTOR_MODE_OFF : MOAT_DETECTOR_MODE_ALWAYS,
        .hold_ms = 2000,
        .rate_factor = 4.0,
        .min_excess_pps = 200,
        .auth_failures_per_s = 50,
        .budget_percent = 10,
        .budget_min_pps = 20,
        .legacy_budget_factor = 2.0,
        .window_behind = 1024,
        .window_ahead = 4096,
        .worker_failures_per_s = 500,
        .worker_min_excess_pps = 5000,
    };
    return settings;
}

int flood_run(flood_mode full_mode, const flood_options *options, flood_result *result)
{
    memset(result, 0, sizeof *result);
    flood_mode mode = base_mode(full_mode);
    static moat_prefilter_settings settings;
    settings = settings_for(mode);
    char error[256];
    moat_worker *worker = moat_worker_new(0, "127.0.0.1", options->port, error, sizeof error);
    if (!worker) {
        fprintf(stderr, "bench/flood: %s\n", error);
        return -1;
    }
    moat_worker_set_prefilter(worker, &settings);
    if (is_kernel(full_mode) && moat_worker_attach_kernel_filter(worker, error, sizeof error)) {
        fprintf(stderr, "bench/flood: %s: %s\n", flood_mode_name(full_mode), error);
        result->unavailable = true;
        moat_worker_free(worker);
        return 0;
    }
    /* The worker inherits the affinity of the thread that starts it. */
    pin_to_cpu(0);
    if (moat_worker_start(worker, error, sizeof error) != 0) {
        fprintf(stderr, "bench/flood: %s\n", error);
        moat_worker_free(worker);
        return -1;
    }
    pin_to_cpu(1);

    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in local = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr_in gateway = {.sin_family = AF_INET,
                                  .sin_port = htons(options->port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof local;
    bind(fd, (struct sockaddr *)&local, sizeof local);
    getsockname(fd, (struct sockaddr *)&local, &length);
    connect(fd, (struct sockaddr *)&gateway, sizeof gateway);

    start_request request;
    memset(&request, 0, sizeof request);
    request.keys.profile = MOAT_SRTP_PROFILE_AES128_CM_SHA1_80;
    request.keys.key_length = 16;
    request.keys.salt_length = 14;
    RAND_bytes(request.keys.local_key, 16);
    RAND_bytes(request.keys.local_salt, 14);
    RAND_bytes(request.keys.remote_key, 16);
    RAND_bytes(request.keys.remote_salt, 14);
    struct srtpplus_sender *srtpplus = NULL;
    if (mode != FLOOD_MODE_BARE) {
        moat_sdp_negotiation *negotiation = negotiation_for(mode);
        moat_session_params params = {
            .id = "bench",
            .worker = worker,
            .dtls_context = NULL,
            .negotiation = negotiation,
            .local_ufrag = "benchufr",
            .local_pwd = "benchpasswordbenchpasswo",
            .plugin = &discard_plugin,
            .consent_timeout_s = 3600,
            .prefilter = &settings,
        };
        moat_session *session = moat_session_new(&params, error, sizeof error);
        if (!session) {
            fprintf(stderr, "bench/flood: %s\n", error);
            close(fd);
            moat_worker_free(worker);
            return -1;
        }
        request.session = session;
        request.path.remote.sin6_family = AF_INET6;
        request.path.remote.sin6_port = local.sin_port;
        request.path.remote.sin6_addr.s6_addr[10] = 0xff;
        request.path.remote.sin6_addr.s6_addr[11] = 0xff;
        memcpy(&request.path.remote.sin6_addr.s6_addr[12], &local.sin_addr, 4);
        request.path.local = request.path.remote.sin6_addr;
        moat_worker_post(worker, start_task, &request, NULL);
        if (negotiation->srtpplus) {
            struct srtpplus_sender_config config;
            srtpplus_sender_config_init(
                &config, mode == FLOOD_MODE_PRN ? SRTPPLUS_SCHEME_PRN : SRTPPLUS_SCHEME_CHAIN,
                SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
            config.chain.depth = 32;
            config.chain.copies = 2;
            srtpplus_sender_new(&config, request.keys.remote_key, 16, request.keys.remote_salt, 14,
                                &srtpplus);
        }
        usleep(100000);
    }
    const moat_counters *counters = moat_worker_counters(worker);
    flood_generator generator = {
        .fd = fd,
        .forged_size = options->forged_size,
        .seconds = options->seconds,
        .ssrc = LEGIT_SSRC,
        .keys = &request.keys,
        .srtpplus = srtpplus,
    };
    if (is_kernel(full_mode)) {
        flood_generator_warm(&generator, 0.3);
        usleep(50000); /* a few ticks: the filter has the window and tags */
    }
    /* Cost phase: queue a backlog while the worker is held, then let it
     * drain in full batches, as it would under a saturating flood. */
    moat_worker_force_receive_buffer(worker, 512 * 1024 * 1024);
    worker_gate gate;
    memset(&gate, 0, sizeof gate);
    g_mutex_init(&gate.lock);
    g_cond_init(&gate.cond);
    moat_worker_post(worker, gate_task, &gate, NULL);
    g_mutex_lock(&gate.lock);
    while (!gate.holding)
        g_cond_wait(&gate.cond, &gate.lock);
    g_mutex_unlock(&gate.lock);
    uint64_t datagrams_before = moat_counter_read(&counters->datagrams_received);
    flood_generator_burst(&generator, options->backlog);
    uint64_t cpu_before = moat_worker_cpu_ns(worker);
    g_mutex_lock(&gate.lock);
    gate.released = true;
    g_cond_broadcast(&gate.cond);
    g_mutex_unlock(&gate.lock);
    uint64_t seen = 0, last_seen = 0;
    for (int idle = 0; idle < 20;) {
        usleep(10000);
        seen = moat_counter_read(&counters->datagrams_received) - datagrams_before;
        idle = seen == last_seen ? idle + 1 : 0;
        last_seen = seen;
        if (seen >= generator.forged_sent)
            break;
    }
    result->worker_cpu_ns = moat_worker_cpu_ns(worker) - cpu_before;
    result->datagrams = seen;
    g_cond_clear(&gate.cond);
    g_mutex_clear(&gate.lock);

    /* Live phase: the generator's highest rate with a legitimate call, on the
     * daemon's own socket buffer size, so overload shows as loss. */
    moat_worker_force_receive_buffer(worker, 4 * 1024 * 1024);
    __atomic_store_n(&plugin_rtp_received, 0, __ATOMIC_RELAXED);
    uint64_t live_before = moat_counter_read(&counters->datagrams_received);
    generator.forged_sent = 0;
    generator.legit_sent = 0;
    flood_generator_run(&generator);
    usleep(200000); /* let the worker drain its socket */
    result->live_datagrams = moat_counter_read(&counters->datagrams_received) - live_before;
    result->forged_sent = generator.forged_sent;
    result->legit_sent = generator.legit_sent;
    result->legit_received = __atomic_load_n(&plugin_rtp_received, __ATOMIC_RELAXED);
    /* Per forged packet queued; with the kernel filter most never reach the
     * worker, so per forged packet sent. */
    uint64_t denominator = is_kernel(full_mode) ? options->backlog : result->datagrams;
    result->ns_per_packet = denominator ? (double)result->worker_cpu_ns / denominator : 0;
    if (options->paced_pps > 0) {
        uint64_t sent_before = generator.forged_sent;
        flood_cpu_sample before, after;
        flood_cpu_sample_take(&before);
        flood_generator_paced(&generator, options->paced_pps, options->paced_seconds);
        flood_cpu_sample_take(&after);
        flood_cpu_account(&before, &after, generator.forged_sent - sent_before, result);
        usleep(100000);
    }
    result->legit_loss = mode == FLOOD_MODE_BARE || !generator.legit_sent
                             ? 0
                             : 1.0 - (double)result->legit_received / generator.legit_sent;
    if (mode != FLOOD_MODE_BARE && getenv("MOAT_BENCH_VERBOSE")) {
        for (int r = 0; r < MOAT_DROP_REASON_COUNT; r++)
            fprintf(stderr, "  drop %s %llu\n", moat_drop_reason_name(r),
                    (unsigned long long)moat_counter_read(&counters->dropped[r]));
    }
    srtpplus_sender_free(srtpplus);
    close(fd);
    moat_worker_free(worker);
    return 0;
}

/* build/bench/voip_load: the load generator of bench/voip. Sets N plain
 * RTP/AVP PCMU calls up through a relay over ng (offer, answer), relays
 * G.711 both ways through every call for a warm-up and a measured window,
 * deletes the calls, and prints one JSON summary on stdout (progress on
 * stderr). Works against rtpengine and Moat alike. Bounded: at most
 * VOIP_MAX_CALLS calls, 60 s of media, a deadline per ng phase. */
#include "ng_calls.h"
#include "rtp_media.h"
#include "voip_load.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    struct sockaddr_in ng;
    unsigned calls, window;
    uint16_t media_port;
    double warmup_s, measure_s, drain_s, phase_timeout_s;
    pid_t relay_pid;
    int quiet;
    char run[24];
} options;

static int usage(void)
{
    fprintf(stderr, "usage: voip_load --ng HOST:PORT --calls N [--media-port P] [--warmup S]\n"
                    "                 [--seconds S] [--drain S] [--relay-pid PID] [--window W]\n"
                    "                 [--phase-timeout S] [--run TAG] [--quiet]\n");
    return 2;
}

static int parse_host_port(const char *text, struct sockaddr_in *out)
{
    char host[64];
    const char *colon = strrchr(text, ':');
    if (!colon || (size_t)(colon - text) >= sizeof host)
        return -1;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = 0;
    long port = strtol(colon + 1, NULL, 10);
    *out = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    return port > 0 && port < 65536 && inet_pton(AF_INET, host, &out->sin_addr) == 1 ? 0 : -1;
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.window = 64,
                   .media_port = 19000,
                   .warmup_s = 1,
                   .measure_s = 3,
                   .drain_s = 0.5,
                   .phase_timeout_s = 30};
    snprintf(o->run, sizeof o->run, "r%d", (int)getpid());
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(name, "--quiet") == 0) {
            o->quiet = 1;
            continue;
        }
        if (!value)
            return -1;
        i++;
        if (strcmp(name, "--ng") == 0 && parse_host_port(value, &o->ng) < 0)
            return -1;
        else if (strcmp(name, "--calls") == 0)
            o->calls = (unsigned)strtoul(value, NULL, 10);
        else if (strcmp(name, "--media-port") == 0)
            o->media_port = (uint16_t)strtoul(value, NULL, 10);
        else if (strcmp(name, "--warmup") == 0)
            o->warmup_s = strtod(value, NULL);
        else if (strcmp(name, "--seconds") == 0)
            o->measure_s = strtod(value, NULL);
        else if (strcmp(name, "--drain") == 0)
            o->drain_s = strtod(value, NULL);
        else if (strcmp(name, "--relay-pid") == 0)
            o->relay_pid = (pid_t)strtol(value, NULL, 10);
        else if (strcmp(name, "--window") == 0)
            o->window = (unsigned)strtoul(value, NULL, 10);
        else if (strcmp(name, "--phase-timeout") == 0)
            o->phase_timeout_s = strtod(value, NULL);
        else if (strcmp(name, "--run") == 0)
            snprintf(o->run, sizeof o->run, "%s", value);
        else if (strcmp(name, "--ng") != 0)
            return -1;
    }
    int times_ok = o->warmup_s >= 0 && o->measure_s > 0 && o->drain_s >= 0 &&
                   o->warmup_s + o->measure_s + o->drain_s <= 60 && o->phase_timeout_s > 0 &&
                   o->phase_timeout_s <= 120;
    if (!o->ng.sin_port || !o->calls || o->calls > VOIP_MAX_CALLS || !o->window || !times_ok)
        return -1;
    return 0;
}

static void report_phase(const char *name, const ng_phase *p, int quiet)
{
    if (quiet)
        return;
    fprintf(stderr, "voip_load: %s: %u ok, %u failed, %u retransmitted in %.2fs%s%s\n", name, p->ok,
            p->failed, p->retransmitted, p->seconds, p->first_error[0] ? "; first: " : "",
            p->first_error);
}

static void json_phase(const char *name, const ng_phase *p)
{
    printf("\"%s\":{\"ok\":%u,\"failed\":%u,\"retransmitted\":%u,\"seconds\":%.3f,"
           "\"first_error\":\"",
           name, p->ok, p->failed, p->retransmitted, p->seconds);
    for (const char *c = p->first_error; *c; c++)
        printf(*c == '"' || *c == '\\' ? "\\%c" : (*c < 32 ? "?" : "%c"), *c);
    printf("\"},");
}

static void json_media(const media_result *r)
{
    double loss = r->window_sent ? 1.0 - (double)r->window_received / r->window_sent : 1.0;
    printf("\"media\":{\"sent\":%llu,\"send_errors\":%llu,\"received\":%llu,\"stray\":%llu,"
           "\"late\":%llu,"
           "\"window_sent\":%llu,\"window_received\":%llu,\"loss\":%.6f,\"worst_loss\":%.6f,"
           "\"worst_call\":%u,\"worst_side\":%u,"
           "\"directions_over\":%u,\"calls_over\":%u,\"relay_cpu\":%.4f,"
           "\"generator_cpu\":%.4f,\"max_lag_ms\":%.3f,\"latency_mean_us\":%.1f,"
           "\"latency_max_us\":%.1f}",
           (unsigned long long)r->sent, (unsigned long long)r->send_errors,
           (unsigned long long)r->received, (unsigned long long)r->stray,
           (unsigned long long)r->late, (unsigned long long)r->window_sent,
           (unsigned long long)r->window_received, loss, r->worst_loss, r->worst_call,
           r->worst_side, r->directions_over, r->calls_over, r->relay_cpu, r->generator_cpu,
           r->max_lag_ms, r->latency_mean_us, r->latency_max_us);
}

static ng_link link_for(const options *o)
{
    return (ng_link){.fd = -1,
                     .server = o->ng,
                     .run = o->run,
                     .media_port = o->media_port,
                     .window = o->window,
                     .timeout_ns = 1000000000ull,
                     .tries = 4,
                     .deadline_ns = voip_now_ns() + (uint64_t)(o->phase_timeout_s * 1e9)};
}

int main(int argc, char **argv)
{
    options o;
    if (parse(argc, argv, &o) < 0)
        return usage();
    voip_call *calls = calloc(o.calls, sizeof *calls);
    ng_link link = link_for(&o);
    int media_fd = rtp_media_open(o.media_port);
    if (!calls || media_fd < 0 || ng_link_open(&link) < 0) {
        perror("voip_load: setup");
        return 1;
    }
    struct sockaddr_in bound;
    socklen_t bound_len = sizeof bound;
    if (getsockname(media_fd, (struct sockaddr *)&bound, &bound_len) == 0)
        o.media_port = link.media_port = ntohs(bound.sin_port); /* --media-port 0 */
    ng_phase setup, teardown;
    ng_setup_calls(&link, calls, o.calls, &setup);
    report_phase("setup", &setup, o.quiet);
    media_plan plan = {.calls = calls,
                       .n = o.calls,
                       .port = o.media_port,
                       .warmup_s = o.warmup_s,
                       .measure_s = o.measure_s,
                       .drain_s = o.drain_s,
                       .relay_pid = o.relay_pid,
                       .progress = !o.quiet};
    media_result media = {0};
    if (setup.ok && rtp_media_run(media_fd, &plan, &media) < 0) {
        fprintf(stderr, "voip_load: out of memory\n");
        return 1;
    }
    ng_link_close(&link);
    link = link_for(&o);
    if (ng_link_open(&link) < 0) {
        perror("voip_load: ng socket");
        return 1;
    }
    ng_delete_calls(&link, calls, o.calls, &teardown);
    report_phase("delete", &teardown, o.quiet);
    printf("{\"calls\":%u,\"media_port\":%u,", o.calls, (unsigned)o.media_port);
    json_phase("setup", &setup);
    json_phase("delete", &teardown);
    json_media(&media);
    printf("}\n");
    ng_link_close(&link);
    close(media_fd);
    free(calls);
    return 0;
}

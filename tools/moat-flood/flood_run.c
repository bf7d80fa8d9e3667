/* One moat-flood run: sets the WHIP sessions up, sends legitimate media and the
 * attacks for --duration or --count, records the timeline, drains the echoes
 * and hangs up; its result feeds every report. */
#include "flood_run.h"
#include "attack_runner.h"
#include "attack_spoofed.h"
#include "flood_clock.h"
#include "legit_media.h"
#include "report_progress.h"
#include "target_policy.h"
#include "whip_session.h"

#include "dtls/certificate.h"
#include "dtls/dtls_context.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Longest the loop sleeps without looking at signals and timers. */
#define MAX_POLL_US    5000u
#define HTTP_TIMEOUT_S 10

typedef struct {
    const flood_options *o;
    flood_result *result;
    flood_session_env env;
    moat_certificate *certificate;
    attack_runner *attacks;
    int spoof_fd;
    volatile sig_atomic_t *stop;
    struct pollfd *polls;
} run_state;

static void run_state_init(run_state *st, const flood_options *o, flood_result *result,
                           volatile sig_atomic_t *stop)
{
    memset(st, 0, sizeof *st);
    st->o = o;
    st->result = result;
    st->env.options = o;
    st->spoof_fd = -1;
    st->stop = stop;
}

static uint64_t earliest_wake(const run_state *st, uint64_t deadline_us, bool sending,
                              uint64_t now_us)
{
    uint64_t wake = deadline_us;
    for (size_t i = 0; i < st->result->n_sessions; i++) {
        const flood_session *s = &st->result->sessions[i];
        uint64_t timer = flood_session_next_timer_us(s, now_us);
        if (timer < wake)
            wake = timer;
        if (sending) {
            uint64_t media = legit_media_next_due_us(s);
            if (media < wake)
                wake = media;
        }
    }
    return wake;
}

/* Waits for datagrams or the next timer, then serves every session once;
 * legitimate media is sent only while sending (and never past the
 * deadline, which ends the run). */
static void pump(run_state *st, uint64_t deadline_us, bool sending)
{
    flood_result *r = st->result;
    uint64_t now = flood_now_us();
    uint64_t wake = earliest_wake(st, deadline_us, sending, now);
    uint64_t wait = wake > now ? wake - now : 0;
    if (wait > MAX_POLL_US)
        wait = MAX_POLL_US;
    for (size_t i = 0; i < r->n_sessions; i++)
        st->polls[i] = (struct pollfd){.fd = r->sessions[i].fd, .events = POLLIN};
    struct timespec timeout = {.tv_sec = 0, .tv_nsec = (long)wait * 1000};
    int ready = ppoll(st->polls, r->n_sessions, &timeout, NULL);
    now = flood_now_us();
    for (size_t i = 0; i < r->n_sessions; i++) {
        flood_session *s = &r->sessions[i];
        if (ready > 0 && (st->polls[i].revents & POLLIN))
            flood_session_receive(s, now);
        flood_session_tick(s, now);
        if (sending && now < deadline_us)
            legit_media_send_due(s, now);
    }
}

static bool setting_up(const flood_result *r)
{
    for (size_t i = 0; i < r->n_sessions; i++) {
        flood_session_state state = r->sessions[i].state;
        if (state == FLOOD_SESSION_CHECKING || state == FLOOD_SESSION_DTLS)
            return true;
    }
    return false;
}

/* The sessions opened one after another (their POSTs block), the ones
 * open going on with ICE and DTLS meanwhile; none after the setup
 * deadline, whose POSTs and Retry-After waits never run past it either. */
static void open_each(run_state *st, uint64_t setup_end)
{
    flood_result *r = st->result;
    st->env.setup_deadline_us = setup_end;
    unsigned i = 0;
    for (; i < r->n_sessions && !*st->stop && flood_now_us() < setup_end; i++) {
        flood_session_open(&r->sessions[i], i, &st->env, flood_now_us());
        pump(st, flood_now_us(), false);
    }
    char reason[160];
    snprintf(reason, sizeof reason,
             "setup timeout: not opened (the %.1f s setup deadline passed after %u of %zu POSTs)",
             st->o->setup_timeout_s, i, r->n_sessions);
    for (; i < r->n_sessions && !*st->stop; i++) {
        flood_session_not_opened(&r->sessions[i], i, &st->env, reason);
        r->n_not_opened++;
    }
    st->env.setup_deadline_us = 0;
}

static int open_sessions(run_state *st, char *error, size_t error_size)
{
    const flood_options *o = st->o;
    st->certificate = moat_certificate_generate(error, error_size);
    if (st->certificate == NULL)
        return 1;
    st->env.fingerprint = moat_certificate_fingerprint(st->certificate);
    st->env.dtls_context = moat_dtls_context_new(st->certificate, error, error_size);
    if (st->env.dtls_context == NULL)
        return 1;
    if (o->srtp_profiles != NULL &&
        moat_dtls_context_set_srtp_profiles(st->env.dtls_context, o->srtp_profiles, error,
                                            error_size) != 0)
        return 2;
    st->env.http = whip_client_new(o->token, HTTP_TIMEOUT_S, st->stop);
    if (st->env.http == NULL) {
        snprintf(error, error_size, "cannot create the HTTP client");
        return 1;
    }
    flood_result *r = st->result;
    r->sessions = g_new0(flood_session, o->sessions);
    r->n_sessions = o->sessions;
    for (size_t i = 0; i < r->n_sessions; i++)
        r->sessions[i].fd = -1; /* not open yet: poll skips it */
    st->polls = g_new0(struct pollfd, o->sessions);
    uint64_t started = flood_now_us();
    uint64_t setup_end = started + (uint64_t)(o->setup_timeout_s * 1e6);
    open_each(st, setup_end);
    uint64_t deadline = setup_end + 1000000u;
    while (setting_up(r) && !*st->stop && flood_now_us() < deadline)
        pump(st, deadline, false);
    r->setup_s = (double)(flood_now_us() - started) / 1e6;
    for (size_t i = 0; i < r->n_sessions; i++)
        if (r->sessions[i].state == FLOOD_SESSION_CONNECTED)
            r->n_connected++;
    if (r->n_connected == 0) {
        const char *why =
            r->n_sessions > 0 && r->sessions[0].error[0] ? r->sessions[0].error : "interrupted";
        if (r->n_not_opened > 0)
            snprintf(error, error_size,
                     "no session connected (first session: %s; %zu of %zu not opened: setup "
                     "timeout)",
                     why, r->n_not_opened, r->n_sessions);
        else
            snprintf(error, error_size, "no session connected (first session: %s)", why);
        return 1;
    }
    return 0;
}

static int start_attacks(run_state *st, flood_session **connected, size_t n_connected,
                         uint64_t start_us, uint64_t end_us, char *error, size_t error_size)
{
    const flood_options *o = st->o;
    if (!o->any_attack)
        return 0;
    attack_plan plan = {
        .ramp_s = o->ramp_s,
        .ramp_step = o->ramp_step,
        .count = o->count,
        .batch = o->batch,
        .start_us = start_us + (uint64_t)(o->attack_after_s * 1e6),
        .end_us = end_us,
    };
    if (o->attack_for_s > 0 && plan.start_us + (uint64_t)(o->attack_for_s * 1e6) < end_us)
        plan.end_us = plan.start_us + (uint64_t)(o->attack_for_s * 1e6);
    memcpy(plan.enabled, o->attack, sizeof plan.enabled);
    memcpy(plan.rate, o->class_rate, sizeof plan.rate);
    attack_environment env = {
        .sessions = connected,
        .n_sessions = n_connected,
        .target = st->result->target,
        .spoof_fd = st->spoof_fd,
    };
    st->attacks = attack_runner_start(&plan, &env, error, error_size);
    return st->attacks != NULL ? 0 : 2;
}

static double mean_jitter_ms(const flood_result *r)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < r->n_sessions; i++) {
        if (r->sessions[i].echo.stream_started) {
            sum += echo_stats_jitter_ms(&r->sessions[i].echo);
            n++;
        }
    }
    return n > 0 ? sum / (double)n : 0;
}

/* Closes the intervals that ended by now_us (with final, the last partial
 * one too) and prints the progress line for the newest. The targeted rate
 * is the one in the middle of that interval, so a ramp step at its end is
 * not counted early. */
static void close_intervals(run_state *st, uint64_t now_us, bool final)
{
    flood_result *r = st->result;
    timeline *t = &r->timeline;
    size_t current = timeline_index(t, now_us);
    uint64_t current_start = t->start_us + (uint64_t)current * t->interval_us;
    uint64_t middle = final && now_us > current_start ? current_start + (now_us - current_start) / 2
                                                      : current_start - t->interval_us / 2;
    uint64_t totals[ATTACK_KIND_COUNT];
    attack_runner_totals(st->attacks, totals);
    size_t closed = timeline_close(
        t, now_us, final, totals, attack_runner_target_pps(st->attacks, middle), mean_jitter_ms(r));
    if (closed > 0 && !st->o->quiet && !final && current > 0)
        report_progress(stderr, r, &t->intervals[current - 1]);
}

/* A numeric IPv4 or IPv6 address as a dual-stack socket address, port 0. */
static int parse_local_address(const char *text, struct sockaddr_in6 *out)
{
    memset(out, 0, sizeof *out);
    out->sin6_family = AF_INET6;
    struct in_addr v4;
    if (inet_pton(AF_INET, text, &v4) == 1) {
        out->sin6_addr.s6_addr[10] = 0xff;
        out->sin6_addr.s6_addr[11] = 0xff;
        memcpy(&out->sin6_addr.s6_addr[12], &v4, 4);
        return 0;
    }
    return inet_pton(AF_INET6, text, &out->sin6_addr) == 1 ? 0 : -1;
}

static int run_traffic(run_state *st, char *error, size_t error_size)
{
    flood_result *r = st->result;
    const flood_options *o = st->o;
    flood_session **connected = g_new0(flood_session *, r->n_sessions + 1);
    size_t n_connected = 0;
    uint64_t start = flood_now_us();
    for (size_t i = 0; i < r->n_sessions; i++) {
        if (r->sessions[i].state != FLOOD_SESSION_CONNECTED)
            continue;
        legit_media_start(&r->sessions[i], start);
        connected[n_connected++] = &r->sessions[i];
    }
    if (!r->has_target && n_connected > 0) {
        r->target = connected[0]->remote;
        r->has_target = true;
    }
    uint64_t end = start + (uint64_t)(o->duration_s * 1e6);
    timeline_init(&r->timeline, start, o->interval_s);
    st->env.timeline = &r->timeline;
    int status = start_attacks(st, connected, n_connected, start, end, error, error_size);
    struct sockaddr_in6 migrate_to;
    bool migrate = o->migrate_to != NULL;
    if (migrate && parse_local_address(o->migrate_to, &migrate_to) != 0) {
        snprintf(error, error_size, "--migrate-to %s: not an IP address", o->migrate_to);
        status = 2;
    }
    uint64_t migrate_at = start + (uint64_t)(o->migrate_after_s * 1e6);
    while (status == 0 && !*st->stop) {
        uint64_t now = flood_now_us();
        if (now >= end || attack_runner_finished(st->attacks))
            break;
        if (migrate && now >= migrate_at) {
            migrate = false;
            for (size_t i = 0; i < n_connected; i++) {
                int moved = o->migrate_restart
                                ? flood_session_restart_ice(connected[i], &migrate_to, now)
                                : flood_session_migrate(connected[i], &migrate_to, now);
                if (moved != 0) {
                    snprintf(error, error_size, "cannot move a session to %s: %s", o->migrate_to,
                             connected[i]->error[0] ? connected[i]->error : strerror(errno));
                    status = 1;
                }
            }
            continue;
        }
        uint64_t boundary = r->timeline.start_us +
                            (timeline_index(&r->timeline, now) + 1) * r->timeline.interval_us;
        uint64_t until = boundary < end ? boundary : end;
        if (migrate && migrate_at < until)
            until = migrate_at;
        pump(st, until, true);
        uint64_t after = flood_now_us();
        close_intervals(st, after < end ? after : end, false);
    }
    r->interrupted = *st->stop != 0;
    uint64_t stopped = flood_now_us();
    if (stopped > end)
        stopped = end;
    attack_runner_stop(st->attacks);
    attack_runner_totals(st->attacks, r->attack_sent);
    r->attack_errors = attack_runner_errors(st->attacks);
    r->run_s = (double)(stopped - start) / 1e6;
    close_intervals(st, stopped, true);
    for (size_t i = 0; i < r->n_sessions; i++)
        r->sessions[i].sending = false;
    /* Echoes still in flight are filed under the interval they were sent in. */
    uint64_t drain_end = stopped + (uint64_t)(o->drain_s * 1e6);
    while (!*st->stop && flood_now_us() < drain_end)
        pump(st, drain_end, false);
    g_free(connected);
    return status;
}

static void close_sessions(run_state *st)
{
    flood_result *r = st->result;
    for (size_t i = 0; i < r->n_sessions; i++) {
        char error[256];
        if (flood_session_close(&r->sessions[i], true, error, sizeof error) != 0) {
            if (r->hangup_failures++ == 0)
                g_strlcpy(r->hangup_error, error, sizeof r->hangup_error);
        }
    }
    st->env.timeline = NULL;
}

static void release(run_state *st)
{
    attack_runner_free(st->attacks);
    st->attacks = NULL;
    if (st->spoof_fd >= 0)
        close(st->spoof_fd);
    whip_client_free(st->env.http);
    moat_dtls_context_free(st->env.dtls_context);
    moat_certificate_free(st->certificate);
    g_free(st->polls);
}

/* Every address the tool will send to, before anything is sent. */
static int check_targets(run_state *st, char *error, size_t error_size)
{
    const flood_options *o = st->o;
    if (o->whip_url != NULL &&
        target_policy_check_url(o->whip_url, o->allow_remote, error, error_size) != 0)
        return 2;
    if (o->target != NULL) {
        if (target_policy_resolve(o->target, o->allow_remote, &st->result->target, error,
                                  error_size) != 0)
            return 2;
        st->result->has_target = true;
    }
    if (o->attack[ATTACK_FORGED_SPOOFED]) {
        st->spoof_fd = attack_spoofed_open_socket(error, error_size);
        if (st->spoof_fd < 0)
            return 2;
    }
    return 0;
}

int flood_run(const flood_options *options, volatile sig_atomic_t *stop_requested,
              flood_result *result, char *error, size_t error_size)
{
    memset(result, 0, sizeof *result);
    result->options = options;
    run_state st;
    run_state_init(&st, options, result, stop_requested);
    int status = check_targets(&st, error, error_size);
    if (status == 0 && moat_srtp_library_init() != MOAT_SRTP_OK) {
        snprintf(error, error_size, "cannot initialise libsrtp");
        status = 1;
    }
    if (status == 0 && options->whip_url != NULL)
        status = open_sessions(&st, error, error_size);
    if (status == 0)
        status = run_traffic(&st, error, error_size);
    close_sessions(&st);
    release(&st);
    return status;
}

void flood_result_clear(flood_result *result)
{
    g_free(result->sessions);
    result->sessions = NULL;
    result->n_sessions = 0;
    timeline_free(&result->timeline);
}

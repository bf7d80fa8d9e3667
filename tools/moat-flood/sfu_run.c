/* The fan-out run: setup (publisher, then subscribers through WHEP or the
 * Janus videoroom), paced media for --duration, drain, hang-up. One
 * thread; every session is served from one epoll loop. */
#include "sfu_run.h"
#include "flood_clock.h"
#include "janus_videoroom.h"
#include "sfu_peer.h"
#include "target_policy.h"
#include "tool_text.h"
#include "whip_session.h"

#include "dtls/certificate.h"
#include "dtls/dtls_context.h"

#include <errno.h>
#include <glib.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <string.h>
#include <sys/resource.h>

#define MAX_POLL_US 5000u
#define SWEEP_US    5000u
#define EPOLL_BATCH 256
/* Janus ends a session 60 s after its last request by default. */
#define JANUS_KEEPALIVE_US 20000000u
#define HTTP_TIMEOUT_S     10

typedef struct {
    const flood_options *o;
    sfu_result *r;
    flood_session_env publisher_env, subscriber_env;
    moat_certificate *certificate;
    moat_dtls_context *dtls_context;
    whip_client *http;
    janus_videoroom janus;
    bool use_janus;
    volatile sig_atomic_t *stop;
    int epoll_fd;
    uint64_t next_sweep_us;
    size_t n_open; /* subscribers opened so far */
} sfu_state;

static flood_session *session_at(sfu_state *st, size_t i)
{
    return i == 0 ? &st->r->publisher : &st->r->subscribers[i - 1];
}

/* Adds a newly opened session's socket to the epoll set. */
static void watch(sfu_state *st, size_t i)
{
    flood_session *s = session_at(st, i);
    if (s->fd < 0)
        return;
    struct epoll_event event = {.events = EPOLLIN, .data.u64 = i};
    epoll_ctl(st->epoll_fd, EPOLL_CTL_ADD, s->fd, &event);
}

/* Every open session's timers (ICE checks and consent, DTLS retransmits,
 * setup deadlines): a sweep every SWEEP_US rather than per wake-up, so a
 * wake-up costs what is ready, not the number of sessions. */
static void sweep(sfu_state *st, uint64_t now_us)
{
    if (now_us < st->next_sweep_us)
        return;
    for (size_t i = 0; i <= st->n_open; i++)
        flood_session_tick(session_at(st, i), now_us);
    st->next_sweep_us = now_us + SWEEP_US;
}

/* Waits for datagrams, the publisher's next packet or the next sweep, then
 * serves what is ready. */
static void pump(sfu_state *st, uint64_t deadline_us)
{
    uint64_t now = flood_now_us();
    uint64_t wake = deadline_us < st->next_sweep_us ? deadline_us : st->next_sweep_us;
    uint64_t media = sfu_peer_next_due_us(&st->r->publisher);
    wake = media < wake ? media : wake;
    uint64_t wait = wake > now ? wake - now : 0;
    wait = wait > MAX_POLL_US ? MAX_POLL_US : wait;
    struct epoll_event events[EPOLL_BATCH];
    struct timespec timeout = {.tv_sec = 0, .tv_nsec = (long)wait * 1000};
    int ready = epoll_pwait2(st->epoll_fd, events, EPOLL_BATCH, &timeout, NULL);
    now = flood_now_us();
    /* The publisher first: its schedule is what the run measures against. */
    sfu_peer_send_due(&st->r->publisher, now);
    for (int i = 0; i < ready; i++)
        flood_session_receive(session_at(st, (size_t)events[i].data.u64), now);
    sweep(st, now);
    st->r->published = st->r->publisher.sfu->sent;
}

static bool settling(sfu_state *st)
{
    for (size_t i = 0; i <= st->n_open; i++) {
        flood_session_state state = session_at(st, i)->state;
        if (state == FLOOD_SESSION_CHECKING || state == FLOOD_SESSION_DTLS)
            return true;
    }
    return false;
}

static void settle(sfu_state *st)
{
    uint64_t deadline = flood_now_us() + (uint64_t)(st->o->setup_timeout_s * 1e6) + 1000000u;
    while (settling(st) && !*st->stop && flood_now_us() < deadline)
        pump(st, deadline);
}

static int prepare(sfu_state *st, char *error, size_t error_size)
{
    const flood_options *o = st->o;
    const char *first = st->use_janus ? o->janus_url : o->whip_url;
    if (target_policy_check_url(first, o->allow_remote, error, error_size) != 0 ||
        (o->whep_url != NULL &&
         target_policy_check_url(o->whep_url, o->allow_remote, error, error_size) != 0))
        return 2;
    if (moat_srtp_library_init() != MOAT_SRTP_OK) {
        snprintf(error, error_size, "cannot initialise libsrtp");
        return 1;
    }
    st->certificate = moat_certificate_generate(error, error_size);
    if (st->certificate == NULL)
        return 1;
    st->dtls_context = moat_dtls_context_new(st->certificate, error, error_size);
    if (st->dtls_context == NULL)
        return 1;
    if (o->srtp_profiles != NULL && moat_dtls_context_set_srtp_profiles(
                                        st->dtls_context, o->srtp_profiles, error, error_size) != 0)
        return 2;
    st->http = whip_client_new(o->token, HTTP_TIMEOUT_S, st->stop);
    if (st->http == NULL) {
        snprintf(error, error_size, "cannot create the HTTP client");
        return 1;
    }
    flood_session_env base = {
        .options = o,
        .dtls_context = st->dtls_context,
        .fingerprint = moat_certificate_fingerprint(st->certificate),
        .http = st->http,
    };
    st->publisher_env = st->subscriber_env = base;
    st->publisher_env.url = first;
    st->subscriber_env.url = st->use_janus ? o->janus_url : o->whep_url;
    if (st->use_janus) {
        if (janus_videoroom_open(&st->janus, o->janus_url, st->stop, error, error_size) != 0)
            return 1;
        st->publisher_env.exchange = janus_videoroom_publish;
        st->publisher_env.exchange_user = &st->janus;
    }
    return 0;
}

/* A subscriber of the Janus videoroom: Janus offers, we answer. */
static int open_janus_subscriber(sfu_state *st, flood_session *s, unsigned index)
{
    char error[256];
    uint64_t handle = 0;
    char *offer = NULL, *answer = NULL;
    int status = janus_videoroom_subscribe(&st->janus, &handle, &offer, error, sizeof error);
    if (status != 0) {
        s->fd = -1;
        s->state = FLOOD_SESSION_FAILED;
        g_strlcpy(s->error, error, sizeof s->error);
        return -1;
    }
    status = flood_session_answer(s, index, &st->subscriber_env, offer, &answer, flood_now_us());
    g_free(offer);
    if (status == 0 &&
        janus_videoroom_start(&st->janus, handle, answer, error, sizeof error) != 0) {
        s->state = FLOOD_SESSION_FAILED;
        g_strlcpy(s->error, error, sizeof s->error);
        status = -1;
    }
    g_free(answer);
    return status;
}

static int open_all(sfu_state *st, char *error, size_t error_size)
{
    sfu_result *r = st->r;
    uint64_t started = flood_now_us();
    r->publisher.sfu = sfu_peer_new(SFU_ROLE_PUBLISHER);
    st->publisher_env.setup_deadline_us = started + (uint64_t)(st->o->setup_timeout_s * 1e6);
    if (flood_session_open(&r->publisher, 0, &st->publisher_env, started) == 0) {
        watch(st, 0);
        settle(st);
    }
    if (r->publisher.state != FLOOD_SESSION_CONNECTED) {
        snprintf(error, error_size, "the publisher did not connect: %s", r->publisher.error);
        return 1;
    }
    for (size_t i = 0; i < r->n_subscribers && !*st->stop; i++) {
        flood_session *s = &r->subscribers[i];
        s->sfu = sfu_peer_new(SFU_ROLE_SUBSCRIBER);
        /* Each subscriber's POST, with its Retry-After waits, ends within
         * its own setup timeout (the fan-out's setup as a whole may take
         * longer: a gateway paces many subscribers from one source). */
        uint64_t now = flood_now_us();
        st->subscriber_env.setup_deadline_us = now + (uint64_t)(st->o->setup_timeout_s * 1e6);
        if (st->use_janus)
            open_janus_subscriber(st, s, (unsigned)i + 1);
        else
            flood_session_open(s, (unsigned)i + 1, &st->subscriber_env, now);
        st->n_open = i + 1;
        watch(st, i + 1);
        /* Sessions already open go on with ICE and DTLS meanwhile. */
        pump(st, flood_now_us());
    }
    settle(st);
    r->setup_s = (double)(flood_now_us() - started) / 1e6;
    for (size_t i = 0; i < r->n_subscribers; i++) {
        const flood_session *s = &r->subscribers[i];
        if (s->state == FLOOD_SESSION_CONNECTED)
            r->n_connected++;
        else if (r->first_failure[0] == '\0')
            g_strlcpy(r->first_failure, s->error[0] ? s->error : "interrupted",
                      sizeof r->first_failure);
    }
    /* In the JSON (json_pack refuses text that is not UTF-8) and on stderr. */
    tool_text_printable(r->first_failure);
    if (r->n_connected == 0 && r->n_subscribers > 0) {
        snprintf(error, error_size, "no subscriber connected (first: %s)", r->first_failure);
        return 1;
    }
    return 0;
}

static uint64_t received_total(const sfu_result *r)
{
    uint64_t total = 0;
    for (size_t i = 0; i < r->n_subscribers; i++)
        if (r->subscribers[i].sfu != NULL)
            total += sfu_loss_received(&r->subscribers[i].sfu->loss);
    return total;
}

static void run_media(sfu_state *st)
{
    sfu_result *r = st->r;
    const flood_options *o = st->o;
    uint64_t start = flood_now_us();
    for (size_t i = 0; i <= st->n_open; i++)
        sfu_peer_start(session_at(st, i), start);
    uint64_t end = start + (uint64_t)(o->duration_s * 1e6);
    uint64_t interval = (uint64_t)(o->interval_s * 1e6);
    uint64_t next_report = start + interval;
    uint64_t published_before = 0, received_before = 0;
    uint64_t next_keepalive = start + JANUS_KEEPALIVE_US;
    while (!*st->stop && flood_now_us() < end) {
        pump(st, next_report < end ? next_report : end);
        uint64_t now = flood_now_us();
        if (st->use_janus && now >= next_keepalive) {
            char error[200];
            janus_client_keepalive(st->janus.client, error, sizeof error);
            next_keepalive = now + JANUS_KEEPALIVE_US;
        }
        if (now < next_report)
            continue;
        /* The report's deadline moves on when quiet too: pump() waits for
         * it, and one left in the past made every wait zero (a busy loop
         * that took a whole core from the gateway it measured). */
        next_report += interval;
        if (o->quiet)
            continue;
        uint64_t received = received_total(r);
        sfu_report_progress(stderr, r, (double)(now - start) / 1e6, r->published - published_before,
                            received - received_before, o->interval_s);
        published_before = r->published;
        received_before = received;
    }
    r->interrupted = *st->stop != 0;
    uint64_t stopped = flood_now_us();
    r->run_s = (double)((stopped < end ? stopped : end) - start) / 1e6;
    r->publisher.sfu->sending = false;
    uint64_t drain_end = stopped + (uint64_t)(o->drain_s * 1e6);
    while (!*st->stop && flood_now_us() < drain_end)
        pump(st, drain_end);
    if (!o->quiet)
        fprintf(stderr, "\n");
}

static void close_all(sfu_state *st)
{
    sfu_result *r = st->r;
    for (size_t i = 0; i <= st->n_open; i++) {
        char error[256];
        flood_session *s = session_at(st, i);
        if (flood_session_close(s, true, error, sizeof error) != 0)
            r->hangup_failures++;
    }
    janus_videoroom_close(&st->janus);
}

/* Every subscriber holds a socket: lift the descriptor limit to the hard one. */
static void raise_descriptor_limit(void)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

int sfu_run(const flood_options *options, volatile sig_atomic_t *stop_requested, sfu_result *result,
            char *error, size_t error_size)
{
    memset(result, 0, sizeof *result);
    result->options = options;
    result->publisher.fd = -1;
    result->n_subscribers = options->subscribers;
    result->subscribers = g_new0(flood_session, options->subscribers);
    for (size_t i = 0; i < result->n_subscribers; i++)
        result->subscribers[i].fd = -1;
    sfu_state st = {.o = options, .r = result, .stop = stop_requested};
    st.use_janus = options->janus_url != NULL;
    st.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    raise_descriptor_limit();
    int status = st.epoll_fd >= 0 ? prepare(&st, error, error_size) : 1;
    if (st.epoll_fd < 0)
        snprintf(error, error_size, "epoll: %s", strerror(errno));
    if (status == 0)
        status = open_all(&st, error, error_size);
    if (status == 0)
        run_media(&st);
    close_all(&st);
    whip_client_free(st.http);
    moat_dtls_context_free(st.dtls_context);
    moat_certificate_free(st.certificate);
    if (st.epoll_fd >= 0)
        close(st.epoll_fd);
    return status;
}

void sfu_result_clear(sfu_result *result)
{
    sfu_peer_free(result->publisher.sfu);
    result->publisher.sfu = NULL;
    for (size_t i = 0; i < result->n_subscribers; i++)
        sfu_peer_free(result->subscribers[i].sfu);
    g_free(result->subscribers);
    result->subscribers = NULL;
    result->n_subscribers = 0;
}

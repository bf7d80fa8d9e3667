/* The attack thread: per-class token buckets with the rate ramp, batches from
 * each class's generator sent with sendmmsg until the deadline, --count or
 * stop, counting only what the kernel accepted. */
#include "attack_runner.h"
#include "flood_clock.h"
#include "rate_limiter.h"

#include <errno.h>
#include <glib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Longest sleep between two looks at the clock, the ramp and stop. */
#define MAX_SLEEP_US 5000u
/* Wake up for at least this many packets per class when the rate allows,
 * so high rates go out in batches rather than one datagram per wake. */
#define WAKE_INTERVAL_US 1000u
/* How far behind schedule a class may fall and still catch up. */
#define CATCH_UP_US 100000u

typedef struct {
    bool active; /* enabled and not yet at its count */
    const attack_generator *generator;
    void *state;
    rate_limiter limiter;
    _Atomic uint64_t sent;
} attack_class;

struct attack_runner {
    attack_plan plan;
    attack_class classes[ATTACK_KIND_COUNT];
    attack_batch *batch;
    struct mmsghdr headers[ATTACK_BATCH_MAX];
    struct iovec vectors[ATTACK_BATCH_MAX];
    pthread_t thread;
    bool thread_started;
    atomic_bool stop;
    atomic_bool finished;
    _Atomic uint64_t errors;
};

double attack_plan_rate(const attack_plan *plan, attack_kind kind, uint64_t now_us)
{
    double rate = plan->rate[kind];
    if (plan->ramp_s > 0 && now_us > plan->start_us) {
        double steps = (double)((uint64_t)((double)(now_us - plan->start_us) / 1e6 / plan->ramp_s));
        rate += steps * plan->ramp_step;
    }
    return rate;
}

/* Tokens a class may bank: a batch, or what its rate earns in CATCH_UP_US
 * if more, so a thread the scheduler held back catches up instead of
 * losing packets (the average rate stays the one asked for). */
static double burst_for(const attack_plan *plan, double rate)
{
    double earned = rate * CATCH_UP_US / 1e6;
    return earned > plan->batch ? earned : plan->batch;
}

/* Sends batch; returns how many the kernel took (0 on a full buffer). */
static size_t send_batch(attack_runner *r, const attack_batch *batch)
{
    for (size_t i = 0; i < batch->count; i++) {
        r->vectors[i].iov_base = (void *)batch->datagrams[i];
        r->vectors[i].iov_len = batch->lengths[i];
        memset(&r->headers[i], 0, sizeof r->headers[i]);
        r->headers[i].msg_hdr.msg_name = (void *)&batch->destination;
        r->headers[i].msg_hdr.msg_namelen = batch->destination_length;
        r->headers[i].msg_hdr.msg_iov = &r->vectors[i];
        r->headers[i].msg_hdr.msg_iovlen = 1;
    }
    int sent = sendmmsg(batch->fd, r->headers, (unsigned)batch->count, MSG_DONTWAIT);
    if (sent >= 0)
        return (size_t)sent;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS && errno != EINTR)
        atomic_fetch_add(&r->errors, 1);
    return 0;
}

/* One round for one class: as many packets as its bucket allows, at most
 * one batch. */
static void run_class(attack_runner *r, attack_kind kind, uint64_t now_us)
{
    attack_class *c = &r->classes[kind];
    uint64_t sent_so_far = atomic_load_explicit(&c->sent, memory_order_relaxed);
    size_t want = r->plan.batch;
    if (r->plan.count > 0) {
        uint64_t left = r->plan.count - sent_so_far;
        if (left < want)
            want = (size_t)left;
    }
    double rate = attack_plan_rate(&r->plan, kind, now_us);
    rate_limiter_set_rate(&c->limiter, rate, burst_for(&r->plan, rate), now_us);
    size_t granted = rate_limiter_take(&c->limiter, want, now_us);
    if (granted == 0)
        return;
    r->batch->count = c->generator->fill(c->state, r->batch, granted, now_us);
    size_t sent = r->batch->count > 0 ? send_batch(r, r->batch) : 0;
    rate_limiter_refund(&c->limiter, granted - sent);
    atomic_store_explicit(&c->sent, sent_so_far + sent, memory_order_relaxed);
    if (r->plan.count > 0 && sent_so_far + sent >= r->plan.count)
        c->active = false;
}

/* How long until some class has a wake's worth of tokens. */
static uint64_t sleep_us(const attack_runner *r, uint64_t now_us)
{
    uint64_t wait = MAX_SLEEP_US;
    for (int k = 0; k < ATTACK_KIND_COUNT; k++) {
        const attack_class *c = &r->classes[k];
        if (!c->active)
            continue;
        double per_wake = c->limiter.rate * WAKE_INTERVAL_US / 1e6;
        size_t want = per_wake < 1 ? 1 : (size_t)per_wake;
        if (want > r->plan.batch)
            want = r->plan.batch;
        uint64_t w = rate_limiter_wait_us(&c->limiter, want, now_us);
        if (w < wait)
            wait = w;
    }
    if (now_us + wait > r->plan.end_us)
        wait = r->plan.end_us > now_us ? r->plan.end_us - now_us : 0;
    return wait;
}

static void *attack_thread(void *data)
{
    attack_runner *r = data;
    /* --attack-after: the legitimate media runs alone first. */
    for (uint64_t now = flood_now_us(); now < r->plan.start_us && !atomic_load(&r->stop);
         now = flood_now_us()) {
        uint64_t wait = r->plan.start_us - now < 10000 ? r->plan.start_us - now : 10000;
        struct timespec pause = {.tv_sec = 0, .tv_nsec = (long)wait * 1000};
        nanosleep(&pause, NULL);
    }
    for (;;) {
        uint64_t now = flood_now_us();
        if (atomic_load(&r->stop) || now >= r->plan.end_us)
            break;
        bool any = false;
        for (int k = 0; k < ATTACK_KIND_COUNT; k++) {
            if (r->classes[k].active) {
                run_class(r, (attack_kind)k, now);
                any = any || r->classes[k].active;
            }
        }
        if (!any) {
            atomic_store(&r->finished, true);
            break;
        }
        uint64_t wait = sleep_us(r, flood_now_us());
        if (wait > 0) {
            struct timespec pause = {.tv_sec = (time_t)(wait / 1000000u),
                                     .tv_nsec = (long)(wait % 1000000u) * 1000};
            nanosleep(&pause, NULL);
        }
    }
    return NULL;
}

attack_runner *attack_runner_start(const attack_plan *plan, const attack_environment *env,
                                   char *error, size_t error_size)
{
    attack_runner *r = g_new0(attack_runner, 1);
    r->plan = *plan;
    if (r->plan.batch == 0 || r->plan.batch > ATTACK_BATCH_MAX)
        r->plan.batch = ATTACK_BATCH_MAX;
    r->batch = g_new0(attack_batch, 1);
    for (int k = 0; k < ATTACK_KIND_COUNT; k++) {
        attack_class *c = &r->classes[k];
        atomic_init(&c->sent, 0);
        if (!plan->enabled[k])
            continue;
        c->generator = attack_generator_for((attack_kind)k);
        char reason[256] = "";
        c->state = c->generator->create(env, reason, sizeof reason);
        if (c->state == NULL) {
            snprintf(error, error_size, "%s: %s", attack_kind_name((attack_kind)k), reason);
            attack_runner_free(r);
            return NULL;
        }
        c->active = true;
        rate_limiter_init(&c->limiter, plan->rate[k], burst_for(&r->plan, plan->rate[k]),
                          plan->start_us);
    }
    atomic_init(&r->stop, false);
    atomic_init(&r->finished, false);
    atomic_init(&r->errors, 0);
    int status = pthread_create(&r->thread, NULL, attack_thread, r);
    if (status != 0) {
        snprintf(error, error_size, "cannot start the attack thread: %s", strerror(status));
        attack_runner_free(r);
        return NULL;
    }
    r->thread_started = true;
    return r;
}

void attack_runner_totals(const attack_runner *r, uint64_t out[ATTACK_KIND_COUNT])
{
    for (int k = 0; k < ATTACK_KIND_COUNT; k++)
        out[k] = r != NULL ? atomic_load_explicit(&r->classes[k].sent, memory_order_relaxed) : 0;
}

uint64_t attack_runner_errors(const attack_runner *r)
{
    return r != NULL ? atomic_load(&r->errors) : 0;
}

double attack_runner_target_pps(const attack_runner *r, uint64_t now_us)
{
    if (r == NULL || now_us >= r->plan.end_us)
        return 0;
    double total = 0;
    for (int k = 0; k < ATTACK_KIND_COUNT; k++) {
        if (!r->plan.enabled[k])
            continue;
        uint64_t sent = atomic_load_explicit(&r->classes[k].sent, memory_order_relaxed);
        if (r->plan.count == 0 || sent < r->plan.count)
            total += attack_plan_rate(&r->plan, (attack_kind)k, now_us);
    }
    return total;
}

bool attack_runner_finished(const attack_runner *r)
{
    return r != NULL && atomic_load(&r->finished);
}

void attack_runner_stop(attack_runner *r)
{
    if (r == NULL || !r->thread_started)
        return;
    atomic_store(&r->stop, true);
    pthread_join(r->thread, NULL);
    r->thread_started = false;
}

void attack_runner_free(attack_runner *r)
{
    if (r == NULL)
        return;
    attack_runner_stop(r);
    for (int k = 0; k < ATTACK_KIND_COUNT; k++)
        if (r->classes[k].state != NULL)
            r->classes[k].generator->destroy(r->classes[k].state);
    g_free(r->batch);
    g_free(r);
}

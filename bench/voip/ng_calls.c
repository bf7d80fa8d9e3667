/* The ng phases of bench/voip: a window of commands in flight over one
 * socket, replies matched by cookie, retransmission of the identical
 * datagram on timeout, and the call state machine (offer, answer, ready;
 * delete). Failures are counted and the first error kept for the report. */
#include "ng_calls.h"
#include "ng_wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DATAGRAM 65536 /* a delete's reply carries the call's statistics */

typedef struct {
    ng_link *link;
    voip_call *calls;
    unsigned n, cursor, in_flight;
    ng_phase *out;
    int deleting;
} phase;

int ng_link_open(ng_link *link)
{
    link->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (link->fd < 0)
        return -1;
    int size = 4 << 20;
    setsockopt(link->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
    return 0;
}

void ng_link_close(ng_link *link)
{
    if (link->fd >= 0)
        close(link->fd);
    link->fd = -1;
}

static void note_error(ng_phase *out, unsigned index, const char *what, ng_text detail)
{
    out->failed++;
    if (out->first_error[0])
        return;
    snprintf(out->first_error, sizeof out->first_error, "call %u: %s%.*s", index, what,
             (int)(detail.len > 100 ? 100 : detail.len), detail.data ? detail.data : "");
}

static ng_command pending_command(const voip_call *call)
{
    if (call->state == CALL_OFFERED)
        return NG_OFFER;
    return call->state == CALL_ANSWERED ? NG_ANSWER : NG_DELETE;
}

/* (Re)sends the call's pending command and arms its timeout. */
static void transmit(phase *ph, unsigned index)
{
    voip_call *call = &ph->calls[index];
    char datagram[DATAGRAM];
    size_t len = ng_encode(datagram, sizeof datagram, pending_command(call), ph->link->run, index,
                           ph->link->media_port);
    if (call->tries)
        ph->out->retransmitted++;
    call->tries++;
    call->deadline_ns = voip_now_ns() + ph->link->timeout_ns;
    sendto(ph->link->fd, datagram, len, 0, (const struct sockaddr *)&ph->link->server,
           sizeof ph->link->server);
}

static void start(phase *ph, unsigned index, call_state state)
{
    ph->calls[index].state = state;
    ph->calls[index].tries = 0;
    transmit(ph, index);
}

/* Ends the call's phase; `ok` counts it as done, else note_error did. */
static void finish(phase *ph, unsigned index, call_state state, int ok)
{
    ph->calls[index].state = state;
    ph->in_flight--;
    ph->out->ok += (unsigned)ok;
}

static int waiting(const voip_call *call, int deleting)
{
    if (deleting)
        return call->state == CALL_DELETING;
    return call->state == CALL_OFFERED || call->state == CALL_ANSWERED;
}

/* A reply for the call's pending command moves it on. */
static void on_reply(phase *ph, unsigned index, ng_command command, const ng_reply *reply)
{
    voip_call *call = &ph->calls[index];
    if (index >= ph->n || !waiting(call, ph->deleting) || command != pending_command(call))
        return; /* a late duplicate */
    int ok = reply->result.len == 2 && memcmp(reply->result.data, "ok", 2) == 0;
    if (!ok) {
        note_error(ph->out, index, "error reply: ", reply->error_reason);
        finish(ph, index, ph->deleting ? CALL_DELETED : CALL_FAILED, 0);
        return;
    }
    if (command == NG_DELETE) {
        finish(ph, index, CALL_DELETED, 1);
        return;
    }
    /* The offer's reply goes to the callee: it sends there; the answer's
     * reply goes to the caller. */
    if (ng_sdp_media(reply->sdp, &call->to_relay[command == NG_OFFER ? 1 : 0]) < 0) {
        note_error(ph->out, index, "reply without a usable SDP", (ng_text){0});
        finish(ph, index, CALL_FAILED, 0);
        return;
    }
    if (command == NG_OFFER)
        start(ph, index, CALL_ANSWERED);
    else
        finish(ph, index, CALL_READY, 1);
}

static void receive_replies(phase *ph)
{
    char datagram[DATAGRAM];
    for (;;) {
        ssize_t len = recv(ph->link->fd, datagram, sizeof datagram, 0);
        if (len <= 0)
            return;
        ng_reply reply;
        unsigned index;
        ng_command command;
        if (ng_decode(datagram, (size_t)len, &reply) < 0 ||
            ng_cookie_parse(reply.cookie, ph->link->run, &index, &command) < 0)
            continue;
        on_reply(ph, index, command, &reply);
    }
}

static void check_timeouts(phase *ph, uint64_t now, int give_up)
{
    for (unsigned i = 0; i < ph->cursor; i++) {
        voip_call *call = &ph->calls[i];
        if (!waiting(call, ph->deleting) || call->deadline_ns > now)
            continue;
        if (!give_up && call->tries < ph->link->tries) {
            transmit(ph, i);
            continue;
        }
        note_error(ph->out, i, "no reply", (ng_text){0});
        finish(ph, i, ph->deleting ? CALL_DELETED : CALL_FAILED, 0);
    }
}

/* Starts commands for the next calls while the window has room. */
static void fill_window(phase *ph)
{
    while (ph->in_flight < ph->link->window && ph->cursor < ph->n) {
        unsigned i = ph->cursor++;
        call_state from = ph->calls[i].state;
        if (ph->deleting && from != CALL_READY)
            continue; /* failed calls are left to the relay's timeouts */
        ph->in_flight++;
        start(ph, i, ph->deleting ? CALL_DELETING : CALL_OFFERED);
    }
}

static void run(phase *ph)
{
    uint64_t t0 = voip_now_ns(), last_scan = t0;
    while (ph->cursor < ph->n || ph->in_flight) {
        fill_window(ph);
        struct pollfd p = {.fd = ph->link->fd, .events = POLLIN};
        poll(&p, 1, 10);
        receive_replies(ph);
        uint64_t now = voip_now_ns();
        if (now >= ph->link->deadline_ns) {
            check_timeouts(ph, UINT64_MAX, 1);
            ph->cursor = ph->n;
            break;
        }
        if (now - last_scan >= 20000000ull) {
            check_timeouts(ph, now, 0);
            last_scan = now;
        }
    }
    ph->out->seconds = (double)(voip_now_ns() - t0) / 1e9;
}

void ng_setup_calls(ng_link *link, voip_call *calls, unsigned n, ng_phase *out)
{
    *out = (ng_phase){0};
    phase ph = {.link = link, .calls = calls, .n = n, .out = out};
    run(&ph);
    for (unsigned i = 0; i < n; i++) {
        if (calls[i].state == CALL_IDLE)
            note_error(out, i, "not offered before the deadline", (ng_text){0});
        if (calls[i].state != CALL_READY)
            calls[i].state = CALL_FAILED;
    }
}

void ng_delete_calls(ng_link *link, voip_call *calls, unsigned n, ng_phase *out)
{
    *out = (ng_phase){0};
    phase ph = {.link = link, .calls = calls, .n = n, .out = out, .deleting = 1};
    run(&ph);
}

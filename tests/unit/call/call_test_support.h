/* Shared support for the call layer's unit tests: a fixture with one real
 * worker and a call registry on loopback, UDP sockets standing in for
 * phones, and ng request building. Test-only; every helper asserts instead
 * of returning errors. Not thread-safe: call from the test's main thread. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "call/call_registry.h"
#include "sdp/sdp_crypto.h"
#include "srtp/srtp_session.h"

typedef struct {
    moat_worker *worker;
    moat_call_registry *registry;
} call_fixture;

/* Starts a worker on 127.0.0.1 and a registry over ports port_min..port_max
 * (no media timeout). */
void call_fixture_setup(call_fixture *f, int port_min, int port_max);
/* The same with [call] media_timeout_s and silent_timeout_s. */
void call_fixture_setup_timeouts(call_fixture *f, int port_min, int port_max, int media_timeout_s,
                                 int silent_timeout_s);
/* Stops the worker and frees what call_fixture_setup made. */
void call_fixture_teardown(call_fixture *f);

/* A UDP socket bound to an ephemeral loopback port, written to *port. */
int call_udp_socket(uint16_t *port);
/* Sends length bytes from fd to 127.0.0.1:port; asserts it all went. */
void call_send_to(int fd, uint16_t port, const uint8_t *data, size_t length);
/* Bytes received on fd within timeout_ms, or -1. */
ssize_t call_receive(int fd, uint8_t *buffer, size_t capacity, int timeout_ms);

/* An ng request borrowing its strings; sdp may be NULL. */
moat_ng_request call_request(const char *call_id, const char *from, const char *to,
                             const char *sdp);

/* A phone's SDP on 127.0.0.1:port: plain, or RTP/SAVP with its a=crypto
 * lines (g_free). */
char *call_phone_sdp(uint16_t port, const moat_sdp_crypto *crypto, size_t n_crypto);
/* The port of the first m=audio line of `sdp` (asserts there is one). */
uint16_t call_sdp_port(const char *sdp);
/* Runs `request` as an offer or an answer that must succeed; returns the
 * port Moat's rewritten SDP names. */
uint16_t call_command_ok(call_fixture *f, bool answer, const moat_ng_request *request);
/* Parses SDP Moat wrote; asserts it parses. */
moat_call_sdp call_parse_sdp(const char *text);
/* The SRTP session of a phone keyed with `own` that talks to Moat's `moat`. */
moat_srtp_session *call_phone_srtp(const moat_sdp_crypto *own, const moat_sdp_crypto *moat);

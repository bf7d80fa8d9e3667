/* Shared support for the call layer's unit tests (see call_test_support.h):
 * the worker + registry fixture, loopback UDP phones and ng requests. */
#include "call_test_support.h"

#include "sdp/sdes_keys.h"

#include <arpa/inet.h>
#include <glib.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

void call_fixture_setup(call_fixture *f, int port_min, int port_max)
{
    call_fixture_setup_timeouts(f, port_min, port_max, 0, 0);
}

void call_fixture_setup_timeouts(call_fixture *f, int port_min, int port_max, int media_timeout_s,
                                 int silent_timeout_s)
{
    char error[256];
    f->worker = moat_worker_new(0, "127.0.0.1", 0, error, sizeof error);
    g_assert_nonnull(f->worker);
    g_assert_cmpint(moat_worker_start(f->worker, error, sizeof error), ==, 0);
    moat_worker *workers[] = {f->worker};
    moat_call_settings settings = {workers, 1, "127.0.0.1", port_min, port_max, "127.0.0.1", 30};
    settings.allow_loopback_destinations = true; /* the phones are loopback sockets */
    settings.media_timeout_s = media_timeout_s;
    settings.silent_timeout_s = silent_timeout_s;
    settings.max_transcoders = 64; /* the gateway's default (0: none) */
    f->registry = moat_call_registry_new(&settings, error, sizeof error);
    g_assert_nonnull(f->registry);
}

void call_fixture_teardown(call_fixture *f)
{
    moat_worker_stop(f->worker);
    moat_call_registry_free(f->registry);
    moat_worker_free(f->worker);
}

int call_udp_socket(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in local = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    g_assert_cmpint(bind(fd, (struct sockaddr *)&local, sizeof local), ==, 0);
    socklen_t length = sizeof local;
    getsockname(fd, (struct sockaddr *)&local, &length);
    *port = ntohs(local.sin_port);
    return fd;
}

void call_send_to(int fd, uint16_t port, const uint8_t *data, size_t length)
{
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    g_assert_cmpint(sendto(fd, data, length, 0, (struct sockaddr *)&to, sizeof to), ==,
                    (ssize_t)length);
}

ssize_t call_receive(int fd, uint8_t *buffer, size_t capacity, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) != 1)
        return -1;
    return recv(fd, buffer, capacity, 0);
}

moat_ng_request call_request(const char *call_id, const char *from, const char *to, const char *sdp)
{
    moat_ng_request r = {.call_id = call_id,
                         .from_tag = from,
                         .to_tag = to,
                         .sdp = sdp,
                         .sdp_length = sdp ? strlen(sdp) : 0,
                         .delete_delay_s = -1};
    return r;
}

uint16_t call_sdp_port(const char *sdp)
{
    const char *m = strstr(sdp, "m=audio ");
    g_assert_nonnull(m);
    return (uint16_t)atoi(m + 8);
}

uint16_t call_command_ok(call_fixture *f, bool answer, const moat_ng_request *request)
{
    moat_call_reply reply = {0};
    if (answer)
        moat_call_answer(f->registry, request, &reply);
    else
        moat_call_offer(f->registry, request, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    uint16_t port = call_sdp_port(reply.sdp);
    moat_call_reply_clear(&reply);
    return port;
}

/* A phone's SDP: plain, or RTP/SAVP with its a=crypto lines. */
char *call_phone_sdp(uint16_t port, const moat_sdp_crypto *crypto, size_t n_crypto)
{
    GString *sdp = g_string_new(NULL);
    g_string_append_printf(sdp,
                           "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\n"
                           "t=0 0\r\nm=audio %u %s 8\r\na=rtpmap:8 PCMA/8000\r\n",
                           port, n_crypto ? "RTP/SAVP" : "RTP/AVP");
    for (size_t i = 0; i < n_crypto; i++)
        moat_sdp_crypto_write(sdp, &crypto[i]);
    return g_string_free(sdp, FALSE);
}

moat_call_sdp call_parse_sdp(const char *text)
{
    moat_call_sdp sdp;
    char error[160] = "";
    if (moat_call_sdp_parse(text, strlen(text), &sdp, error, sizeof error) != 0)
        g_error("Moat wrote SDP that does not parse: %s\n%s", error, text);
    return sdp;
}

moat_srtp_session *call_phone_srtp(const moat_sdp_crypto *own, const moat_sdp_crypto *moat)
{
    moat_srtp_keying keying;
    char error[160] = "";
    g_assert_cmpint(moat_sdes_keying(own, moat, &keying, error, sizeof error), ==, 0);
    moat_srtp_session *s = moat_srtp_session_new(&keying, error, sizeof error);
    g_assert_nonnull(s);
    return s;
}

/* Shared support for the call layer's unit tests (see call_test_support.h):
 * the worker + registry fixture, loopback UDP phones and ng requests. */
#include "call_test_support.h"

#include <arpa/inet.h>
#include <glib.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

void call_fixture_setup(call_fixture *f, int port_min, int port_max)
{
    char error[256];
    f->worker = moat_worker_new(0, "127.0.0.1", 0, error, sizeof error);
    g_assert_nonnull(f->worker);
    g_assert_cmpint(moat_worker_start(f->worker, error, sizeof error), ==, 0);
    moat_worker *workers[] = {f->worker};
    moat_call_settings settings = {workers, 1, "127.0.0.1", port_min, port_max, "127.0.0.1", 30};
    settings.allow_loopback_destinations = true; /* the phones are loopback sockets */
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

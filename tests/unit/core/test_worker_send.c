/* The worker's send batch: a datagram the kernel refuses is dropped alone
 * (send_error) and the rest of the batch still leaves; the sent counters
 * count only what the kernel took. Runs of equal datagrams to one
 * destination leave as one UDP GSO message (seen whole by a receiver with
 * UDP_GRO), and when the socket cannot segment they leave one by one. */
#include "engine/worker.h"
/* The worker's socket, to take GSO away from it. */
#include "engine/worker_private.h"

#include <netinet/udp.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

static moat_worker *new_worker(void)
{
    char error[256];
    moat_worker *worker = moat_worker_new(0, "127.0.0.1", 0, error, sizeof error);
    g_assert_nonnull(worker);
    return worker;
}

/* A non-blocking UDP receiver on 127.0.0.1; *path reaches it. */
static int new_receiver(moat_path *path)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    g_assert_cmpint(fd, >=, 0);
    struct sockaddr_in local = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    g_assert_cmpint(bind(fd, (struct sockaddr *)&local, sizeof local), ==, 0);
    socklen_t length = sizeof local;
    g_assert_cmpint(getsockname(fd, (struct sockaddr *)&local, &length), ==, 0);
    memset(path, 0, sizeof *path);
    path->remote.sin6_family = AF_INET6;
    path->remote.sin6_port = local.sin_port;
    g_assert_cmpint(inet_pton(AF_INET6, "::ffff:127.0.0.1", &path->remote.sin6_addr), ==, 1);
    return fd;
}

static unsigned drain(int fd)
{
    uint8_t buffer[2048];
    unsigned n = 0;
    while (recv(fd, buffer, sizeof buffer, 0) > 0)
        n++;
    return n;
}

static void queue(moat_worker *worker, const moat_path *path, size_t length, moat_send_kind kind)
{
    size_t capacity;
    uint8_t *buffer = moat_worker_send_buffer(worker, &capacity);
    g_assert_cmpuint(capacity, >=, length);
    memset(buffer, 0x80, length);
    moat_worker_send_commit(worker, path, length, kind);
}

static void test_refused_datagram_does_not_drop_the_batch(void)
{
    moat_worker *worker = new_worker();
    moat_path good;
    int fd = new_receiver(&good);
    moat_path refused = good;
    refused.remote.sin6_port = 0; /* UDP to port 0: EINVAL from the kernel */
    queue(worker, &good, 100, MOAT_SEND_RTP);
    queue(worker, &good, 100, MOAT_SEND_RTCP);
    queue(worker, &refused, 100, MOAT_SEND_RTP);
    queue(worker, &good, 100, MOAT_SEND_RTP);
    queue(worker, &good, 100, MOAT_SEND_OTHER);
    moat_worker_flush(worker);
    g_assert_cmpuint(drain(fd), ==, 4);
    const moat_counters *counters = moat_worker_counters(worker);
    g_assert_cmpuint(moat_counter_read(&counters->rtp_sent), ==, 2);
    g_assert_cmpuint(moat_counter_read(&counters->rtcp_sent), ==, 1);
    g_assert_cmpuint(moat_counter_read(&counters->bytes_sent), ==, 400);
    g_assert_cmpuint(moat_counter_read(&counters->dropped[MOAT_DROP_SEND_ERROR]), ==, 1);
    g_assert_cmpuint(moat_counter_read(&counters->dropped[MOAT_DROP_SEND_EAGAIN]), ==, 0);
    close(fd);
    moat_worker_free(worker);
}

/* More than one batch: a full batch is flushed before the next slot. */
static void test_full_batch_is_sent(void)
{
    moat_worker *worker = new_worker();
    moat_path good;
    int fd = new_receiver(&good);
    for (unsigned i = 0; i < MOAT_WORKER_BATCH + 3; i++)
        queue(worker, &good, 64, MOAT_SEND_RTP);
    moat_worker_flush(worker);
    g_assert_cmpuint(drain(fd), ==, MOAT_WORKER_BATCH + 3);
    g_assert_cmpuint(moat_counter_read(&moat_worker_counters(worker)->rtp_sent), ==,
                     MOAT_WORKER_BATCH + 3);
    close(fd);
    moat_worker_free(worker);
}

#ifndef UDP_GRO
#define UDP_GRO 104
#endif

/* Datagram i of a run is filled with byte i + 1. */
static void queue_marked(moat_worker *worker, const moat_path *path, size_t length, uint8_t mark)
{
    size_t capacity;
    uint8_t *buffer = moat_worker_send_buffer(worker, &capacity);
    memset(buffer, mark, length);
    moat_worker_send_commit(worker, path, length, MOAT_SEND_OTHER);
}

/* One receive: the payload's length, and the segment size from UDP_GRO
 * (0 when the datagram was not a coalesced train). */
static ssize_t receive_train(int fd, uint8_t *buffer, size_t size, int *segment)
{
    char control[64];
    struct iovec vector = {.iov_base = buffer, .iov_len = size};
    struct msghdr message = {.msg_iov = &vector,
                             .msg_iovlen = 1,
                             .msg_control = control,
                             .msg_controllen = sizeof control};
    ssize_t n = recvmsg(fd, &message, 0);
    *segment = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
            memcpy(segment, CMSG_DATA(c), sizeof *segment);
    }
    return n;
}

static void test_run_leaves_as_one_gso_message(void)
{
    moat_worker *worker = new_worker();
    if (!worker->send_gso) {
        g_test_skip("the kernel has no UDP_SEGMENT");
        moat_worker_free(worker);
        return;
    }
    moat_path path;
    int fd = new_receiver(&path);
    int on = 1;
    g_assert_cmpint(setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof on), ==, 0);
    /* Ten DTLS-record-sized datagrams and a shorter last one: one run. */
    for (uint8_t i = 0; i < 10; i++)
        queue_marked(worker, &path, 1200, (uint8_t)(i + 1));
    queue_marked(worker, &path, 700, 11);
    moat_worker_flush(worker);
    static uint8_t buffer[65536];
    int segment;
    ssize_t n = receive_train(fd, buffer, sizeof buffer, &segment);
    /* Over loopback the train reaches a UDP_GRO socket as sent: one
     * message, cut at 1200 bytes, in order. */
    g_assert_cmpint(n, ==, 10 * 1200 + 700);
    g_assert_cmpint(segment, ==, 1200);
    for (size_t i = 0; i < (size_t)n; i++)
        g_assert_cmpuint(buffer[i], ==, i / 1200 + 1);
    const moat_counters *counters = moat_worker_counters(worker);
    g_assert_cmpuint(moat_counter_read(&counters->bytes_sent), ==, 12700);
    g_assert_cmpuint(moat_counter_read(&counters->dropped[MOAT_DROP_SEND_ERROR]), ==, 0);
    close(fd);
    moat_worker_free(worker);
}

/* A socket that cannot segment (SO_NO_CHECK: the kernel refuses GSO
 * without checksums) sends the same datagrams one by one, and stops trying
 * GSO. */
static void test_refused_gso_falls_back(void)
{
    moat_worker *worker = new_worker();
    moat_path path, other;
    int fd = new_receiver(&path);
    int other_fd = new_receiver(&other);
    int on = 1;
    g_assert_cmpint(setsockopt(worker->socket_fd, SOL_SOCKET, SO_NO_CHECK, &on, sizeof on), ==, 0);
    for (uint8_t i = 0; i < 5; i++)
        queue_marked(worker, &path, 1000, (uint8_t)(i + 1));
    queue_marked(worker, &other, 300, 9);
    queue_marked(worker, &path, 1000, 6);
    queue_marked(worker, &path, 1000, 7);
    moat_worker_flush(worker);
    static uint8_t buffer[2048];
    for (uint8_t i = 0; i < 7; i++) {
        ssize_t n = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
        g_assert_cmpint(n, ==, 1000);
        g_assert_cmpuint(buffer[0], ==, i + 1);
        g_assert_cmpuint(buffer[999], ==, i + 1);
    }
    g_assert_cmpint(recv(fd, buffer, sizeof buffer, MSG_DONTWAIT), <, 0);
    g_assert_cmpint(recv(other_fd, buffer, sizeof buffer, MSG_DONTWAIT), ==, 300);
    g_assert_false(worker->send_gso);
    const moat_counters *counters = moat_worker_counters(worker);
    g_assert_cmpuint(moat_counter_read(&counters->bytes_sent), ==, 7300);
    g_assert_cmpuint(moat_counter_read(&counters->dropped[MOAT_DROP_SEND_ERROR]), ==, 0);
    close(fd);
    close(other_fd);
    moat_worker_free(worker);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/worker/send/refused-datagram-alone",
                    test_refused_datagram_does_not_drop_the_batch);
    g_test_add_func("/worker/send/full-batch", test_full_batch_is_sent);
    g_test_add_func("/worker/send/gso-run", test_run_leaves_as_one_gso_message);
    g_test_add_func("/worker/send/gso-refused", test_refused_gso_falls_back);
    return g_test_run();
}

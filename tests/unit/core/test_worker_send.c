/* The worker's send batch: a datagram the kernel refuses is dropped alone
 * (send_error) and the rest of the batch still leaves; the sent counters
 * count only what the kernel took. */
#include "core/worker.h"

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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/worker/send/refused-datagram-alone",
                    test_refused_datagram_does_not_drop_the_batch);
    g_test_add_func("/worker/send/full-batch", test_full_batch_is_sent);
    return g_test_run();
}

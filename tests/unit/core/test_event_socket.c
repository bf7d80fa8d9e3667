/* An event listener's WebSocket (session/event_socket.h) over a socketpair:
 * the test is the client, writing frames into one end and reading what the
 * socket answers from it, the main loop run in between. */
#include "session/event_socket.h"
#include "session/ws_frame.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    int client;
    moat_event_socket *socket;
    int ended; /* the moat_event_socket_end reported, -1 before */
} fixture;

static void on_ended(void *user, moat_event_socket_end why)
{
    fixture *f = user;
    g_assert_cmpint(f->ended, ==, -1);
    f->ended = (int)why;
}

static void run_loop(void)
{
    for (int i = 0; i < 64 && g_main_context_iteration(NULL, FALSE); i++)
        ;
}

/* `send_buffer`: the socket's kernel send buffer (0: the default). */
static void open_socket(fixture *f, int send_buffer)
{
    int fds[2];
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), ==, 0);
    if (send_buffer)
        g_assert_cmpint(setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer),
                        ==, 0);
    GSocket *socket = g_socket_new_from_fd(fds[0], NULL);
    g_assert_nonnull(socket);
    GSocketConnection *connection = g_socket_connection_factory_create_connection(socket);
    g_object_unref(socket);
    const moat_event_socket_limits limits = {
        .inbound_burst = 64 << 20, .inbound_per_s = 0, .max_frame = 1024};
    f->client = fds[1];
    f->ended = -1;
    f->socket = moat_event_socket_new(G_IO_STREAM(connection), &limits, on_ended, f);
}

static void close_socket(fixture *f)
{
    moat_event_socket_free(f->socket);
    run_loop(); /* the asynchronous close */
    close(f->client);
}

/* A masked client frame into out; returns its length. */
static size_t client_frame(uint8_t opcode, bool fin, const void *payload, size_t length,
                           uint8_t *out)
{
    static const uint8_t mask[4] = {0x11, 0x22, 0x33, 0x44};
    g_assert_cmpuint(length, <, 126);
    out[0] = (uint8_t)((fin ? 0x80 : 0) | opcode);
    out[1] = (uint8_t)(0x80 | length);
    memcpy(out + 2, mask, 4);
    memcpy(out + 6, payload, length);
    moat_ws_unmask(out + 6, length, mask, 0);
    return 6 + length;
}

/* Writes all of data, running the loop while the socket takes it. */
static void client_write(fixture *f, const uint8_t *data, size_t length)
{
    while (length > 0) {
        ssize_t n = write(f->client, data, length);
        if (n < 0) {
            g_assert_cmpint(errno, ==, EAGAIN);
            n = 0;
        }
        data += n;
        length -= (size_t)n;
        run_loop();
    }
}

/* Reads what the socket sent until it sends no more; g_byte_array_unref it. */
static GByteArray *client_read_all(fixture *f)
{
    GByteArray *in = g_byte_array_new();
    uint8_t buffer[4096];
    for (int idle = 0; idle < 3;) {
        run_loop();
        ssize_t n = read(f->client, buffer, sizeof buffer);
        if (n > 0) {
            g_byte_array_append(in, buffer, (guint)n);
            idle = 0;
        } else {
            idle++;
        }
    }
    return in;
}

/* A client that pings and does not read: once the connection takes no
 * more, later pings replace the pong still owed instead of queueing one
 * each; when it reads again it gets the pong for its latest ping. */
static void test_pings_of_a_client_that_does_not_read(void)
{
    fixture f;
    open_socket(&f, 4096);
    uint8_t frame[6 + 125];
    char payload[125];
    const unsigned pings = 4000; /* ~500 KB of pongs, far beyond the kernel's buffers */
    for (unsigned i = 0; i < pings; i++) {
        memset(payload, 'p', sizeof payload);
        int n = snprintf(payload, sizeof payload, "%u", i);
        payload[n] = ' ';
        client_write(&f, frame, client_frame(MOAT_WS_PING, true, payload, sizeof payload, frame));
        g_assert_cmpuint(moat_event_socket_unsent(f.socket), <=, 2 + 125);
    }
    g_assert_cmpint(f.ended, ==, -1);
    g_assert_true(moat_event_socket_open(f.socket));
    /* Whole pongs, the last one for the last ping. */
    GByteArray *in = client_read_all(&f);
    size_t at = 0, pongs = 0, last = 0;
    while (at < in->len) {
        g_assert_cmpuint(in->len - at, >=, 2);
        g_assert_cmphex(in->data[at], ==, 0x80 | MOAT_WS_PONG);
        g_assert_cmpuint(in->data[at + 1], ==, 125);
        g_assert_cmpuint(in->len - at, >=, 2 + 125);
        last = at + 2;
        at += 2 + 125;
        pongs++;
    }
    g_assert_cmpuint(pongs, <, pings);
    g_assert_cmpuint(pongs, >, 0);
    g_assert_cmpint(atoi((const char *)in->data + last), ==, (int)pings - 1);
    g_assert_cmpuint(moat_event_socket_unsent(f.socket), ==, 0);
    g_byte_array_unref(in);
    close_socket(&f);
}

/* A client that reads gets a pong per ping. */
static void test_each_ping_of_a_reading_client_is_answered(void)
{
    fixture f;
    open_socket(&f, 0);
    uint8_t frame[6 + 125];
    for (int i = 0; i < 10; i++) {
        char payload[8];
        int n = snprintf(payload, sizeof payload, "ping%d", i);
        client_write(&f, frame, client_frame(MOAT_WS_PING, true, payload, (size_t)n, frame));
        GByteArray *in = client_read_all(&f);
        g_assert_cmpuint(in->len, ==, 2 + (size_t)n);
        g_assert_cmphex(in->data[0], ==, 0x80 | MOAT_WS_PONG);
        g_assert_cmpmem(in->data + 2, in->len - 2, payload, n);
        g_byte_array_unref(in);
    }
    close_socket(&f);
}

/* What the socket answers to `data` (then reads nothing more): its reply
 * bytes into reply, and how it ended (-1: it did not). */
static int exchange(const uint8_t *data, size_t length, GByteArray **reply)
{
    fixture f;
    open_socket(&f, 0);
    client_write(&f, data, length);
    *reply = client_read_all(&f);
    int ended = f.ended;
    close_socket(&f);
    return ended;
}

static void assert_close_reply(const uint8_t *data, size_t length, uint16_t code, int why)
{
    GByteArray *reply = NULL;
    int ended = exchange(data, length, &reply);
    const uint8_t expected[] = {0x80 | MOAT_WS_CLOSE, 2, (uint8_t)(code >> 8), (uint8_t)code};
    g_assert_cmpmem(reply->data, reply->len, expected, sizeof expected);
    g_assert_cmpint(ended, ==, why);
    g_byte_array_unref(reply);
}

/* A close frame is echoed with its code when it is valid (§5.5.1); one
 * with a 1-byte payload, a code no peer may send (§7.4) or a reason that
 * is not UTF-8 is answered with 1002 or 1007 and counted as a protocol
 * error. */
static void test_close_frames(void)
{
    uint8_t frame[6 + 125];
    GByteArray *reply = NULL;
    g_assert_cmpint(exchange(frame, client_frame(MOAT_WS_CLOSE, true, "", 0, frame), &reply), ==,
                    MOAT_EVENT_SOCKET_PEER_CLOSED);
    const uint8_t empty[] = {0x80 | MOAT_WS_CLOSE, 0};
    g_assert_cmpmem(reply->data, reply->len, empty, sizeof empty);
    g_byte_array_unref(reply);
    const unsigned valid[] = {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4999};
    for (size_t i = 0; i < G_N_ELEMENTS(valid); i++) {
        uint8_t payload[] = {(uint8_t)(valid[i] >> 8), (uint8_t)valid[i], 'b', 'y', 'e'};
        assert_close_reply(frame, client_frame(MOAT_WS_CLOSE, true, payload, 5, frame), valid[i],
                           MOAT_EVENT_SOCKET_PEER_CLOSED);
    }
    /* A reason may hold any UTF-8, NUL characters and "é" included. */
    const uint8_t nul_reason[] = {0x03, 0xe8, 'a', 0, 0xc3, 0xa9};
    assert_close_reply(frame,
                       client_frame(MOAT_WS_CLOSE, true, nul_reason, sizeof nul_reason, frame),
                       1000, MOAT_EVENT_SOCKET_PEER_CLOSED);
    const unsigned invalid[] = {0, 999, 1004, 1005, 1006, 1012, 1015, 2999, 5000, 65535};
    for (size_t i = 0; i < G_N_ELEMENTS(invalid); i++) {
        uint8_t payload[] = {(uint8_t)(invalid[i] >> 8), (uint8_t)invalid[i]};
        assert_close_reply(frame, client_frame(MOAT_WS_CLOSE, true, payload, 2, frame), 1002,
                           MOAT_EVENT_SOCKET_PROTOCOL);
    }
    assert_close_reply(frame, client_frame(MOAT_WS_CLOSE, true, "\x03", 1, frame), 1002,
                       MOAT_EVENT_SOCKET_PROTOCOL);
    const uint8_t bad_reason[] = {0x03, 0xe8, 0xff, 0xfe};
    assert_close_reply(frame,
                       client_frame(MOAT_WS_CLOSE, true, bad_reason, sizeof bad_reason, frame),
                       1007, MOAT_EVENT_SOCKET_PROTOCOL);
    const uint8_t cut_reason[] = {0x03, 0xe8, 'a', 0xe2, 0x82};
    assert_close_reply(frame,
                       client_frame(MOAT_WS_CLOSE, true, cut_reason, sizeof cut_reason, frame),
                       1007, MOAT_EVENT_SOCKET_PROTOCOL);
}

/* Fragments (§5.4): a continuation without a message started, or a new
 * message before the last one finished, fails the connection with 1002;
 * a fragmented message with a ping between its frames is fine. */
static void test_fragments(void)
{
    uint8_t data[4 * (6 + 125)];
    size_t n = client_frame(MOAT_WS_CONTINUATION, true, "abc", 3, data);
    n += client_frame(MOAT_WS_PING, true, "p", 1, data + n);
    assert_close_reply(data, n, 1002, MOAT_EVENT_SOCKET_PROTOCOL);

    n = client_frame(MOAT_WS_TEXT, false, "a", 1, data);
    n += client_frame(MOAT_WS_TEXT, true, "b", 1, data + n);
    n += client_frame(MOAT_WS_PING, true, "p", 1, data + n);
    assert_close_reply(data, n, 1002, MOAT_EVENT_SOCKET_PROTOCOL);

    n = client_frame(MOAT_WS_BINARY, false, "a", 1, data);
    n += client_frame(MOAT_WS_BINARY, false, "b", 1, data + n);
    assert_close_reply(data, n, 1002, MOAT_EVENT_SOCKET_PROTOCOL);

    /* A finished message, then a continuation: no message is open. */
    n = client_frame(MOAT_WS_TEXT, true, "a", 1, data);
    n += client_frame(MOAT_WS_CONTINUATION, true, "b", 1, data + n);
    assert_close_reply(data, n, 1002, MOAT_EVENT_SOCKET_PROTOCOL);

    n = client_frame(MOAT_WS_TEXT, false, "a", 1, data);
    n += client_frame(MOAT_WS_PING, true, "p", 1, data + n);
    n += client_frame(MOAT_WS_CONTINUATION, false, "b", 1, data + n);
    n += client_frame(MOAT_WS_CONTINUATION, true, "c", 1, data + n);
    n += client_frame(MOAT_WS_BINARY, true, "d", 1, data + n);
    n += client_frame(MOAT_WS_PING, true, "q", 1, data + n);
    GByteArray *reply = NULL;
    g_assert_cmpint(exchange(data, n, &reply), ==, -1);
    const uint8_t pongs[] = {0x80 | MOAT_WS_PONG, 1, 'p', 0x80 | MOAT_WS_PONG, 1, 'q'};
    g_assert_cmpmem(reply->data, reply->len, pongs, sizeof pongs);
    g_byte_array_unref(reply);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/event_socket/pings_of_a_client_that_does_not_read",
                    test_pings_of_a_client_that_does_not_read);
    g_test_add_func("/event_socket/each_ping_of_a_reading_client_is_answered",
                    test_each_ping_of_a_reading_client_is_answered);
    g_test_add_func("/event_socket/close_frames", test_close_frames);
    g_test_add_func("/event_socket/fragments", test_fragments);
    return g_test_run();
}

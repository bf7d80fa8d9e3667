/* libFuzzer target for an event listener's receive path
 * (session/event_socket.c, its frames parsed by session/ws_frame.c): the
 * input is what a client sends, written in pieces (first byte of each
 * piece: its length) into the client's end of a socketpair whose other end
 * is the listener's connection, with the main loop run between pieces.
 * Checked: the frame parser never claims more than it was given and keeps
 * control frames within 125 bytes; everything the socket sends back is a
 * sequence of whole, unmasked server frames (pongs, a close, text), no
 * longer than what the client sent plus the text we sent; it ends at most
 * once. ASan: nothing read past a buffer, nothing leaked. */
#include "session/event_socket.h"
#include "session/ws_frame.h"

#include <gio/gio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static unsigned ends;

static void on_ended(void *user, moat_event_socket_end why)
{
    (void)user;
    if (why > MOAT_EVENT_SOCKET_SENT_TOO_MUCH || ++ends > 1)
        abort();
}

static void check_parser(const uint8_t *data, size_t size)
{
    moat_ws_frame frame;
    if (moat_ws_frame_parse(data, size, 1024, &frame) != MOAT_WS_PARSE_FRAME)
        return;
    if (frame.header_length + frame.payload_length > size || frame.payload_length > 1024 ||
        (frame.opcode >= MOAT_WS_CLOSE && frame.payload_length > MOAT_WS_MAX_CONTROL_PAYLOAD))
        abort();
}

/* What came back must be whole server frames. */
static void check_replies(const uint8_t *data, size_t size)
{
    size_t at = 0;
    while (at < size) {
        if (size - at < 2 || (data[at + 1] & 0x80) || !(data[at] & 0x80))
            abort();
        uint64_t length = data[at + 1] & 0x7f;
        size_t header = 2;
        if (length == 126) {
            if (size - at < 4)
                abort();
            length = (uint64_t)data[at + 2] << 8 | data[at + 3];
            header = 4;
        } else if (length == 127) {
            abort(); /* nothing this long is sent here */
        }
        if (size - at - header < length)
            abort();
        at += header + (size_t)length;
    }
}

static void run_loop(void)
{
    for (int i = 0; i < 16 && g_main_context_iteration(NULL, FALSE); i++)
        ;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_parser(data, size);
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0)
        abort();
    GSocket *socket = g_socket_new_from_fd(fds[0], NULL);
    if (!socket)
        abort();
    GSocketConnection *connection = g_socket_connection_factory_create_connection(socket);
    g_object_unref(socket);
    ends = 0;
    const moat_event_socket_limits limits = {
        .inbound_burst = 1 << 20, .inbound_per_s = 0, .max_frame = 1024};
    moat_event_socket *s = moat_event_socket_new(G_IO_STREAM(connection), &limits, on_ended, NULL);
    moat_event_socket_send_text(s, "{\"type\":\"hello\"}");
    size_t at = 0;
    while (at < size) {
        size_t piece = 1 + data[at] % 64;
        at++;
        if (piece > size - at)
            piece = size - at;
        if (piece > 0 && write(fds[1], data + at, piece) < 0)
            break;
        at += piece;
        run_loop();
    }
    run_loop();
    static uint8_t replies[1 << 20];
    ssize_t n = read(fds[1], replies, sizeof replies);
    if (n > 0) {
        if ((size_t)n > size + 64 + 14)
            abort();
        check_replies(replies, (size_t)n);
    }
    moat_event_socket_free(s);
    run_loop(); /* the asynchronous close */
    close(fds[1]);
    return 0;
}

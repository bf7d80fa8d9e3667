/* The HTTPS port's first look at a client (http_tls.h): only a whole first
 * TLS handshake record is handed to the TLS library; anything else waits or
 * is refused. */
#include "http/http_tls.h"
#include "http/http_tls_guard.h"

#include <gio/gio.h>
#include <glib.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void test_hello_states(void)
{
    static const unsigned char hello[] = {0x16, 0x03, 0x01, 0x00, 0xc8};
    /* Nothing yet, part of the header, the header without its payload. */
    g_assert_cmpint(moat_http_tls_hello_state(hello, 0, 0), ==, MOAT_TLS_HELLO_INCOMPLETE);
    g_assert_cmpint(moat_http_tls_hello_state(hello, 3, 3), ==, MOAT_TLS_HELLO_INCOMPLETE);
    g_assert_cmpint(moat_http_tls_hello_state(hello, 5, 5), ==, MOAT_TLS_HELLO_INCOMPLETE);
    g_assert_cmpint(moat_http_tls_hello_state(hello, 5, 5 + 0xc7), ==, MOAT_TLS_HELLO_INCOMPLETE);
    /* The whole record (and more) is in. */
    g_assert_cmpint(moat_http_tls_hello_state(hello, 5, 5 + 0xc8), ==, MOAT_TLS_HELLO_COMPLETE);
    g_assert_cmpint(moat_http_tls_hello_state(hello, 5, 9000), ==, MOAT_TLS_HELLO_COMPLETE);
}

static void test_not_tls(void)
{
    static const unsigned char http[] = "GET / HTTP/1.1";
    static const unsigned char alert[] = {0x15, 0x03, 0x03, 0x00, 0x02};
    static const unsigned char version[] = {0x16, 0x47, 0x03, 0x00, 0x10};
    static const unsigned char empty[] = {0x16, 0x03, 0x03, 0x00, 0x00};
    static const unsigned char huge[] = {0x16, 0x03, 0x03, 0xff, 0xff};
    g_assert_cmpint(moat_http_tls_hello_state(http, 1, 1), ==, MOAT_TLS_HELLO_NOT_TLS);
    g_assert_cmpint(moat_http_tls_hello_state(alert, 5, 7), ==, MOAT_TLS_HELLO_NOT_TLS);
    g_assert_cmpint(moat_http_tls_hello_state(version, 2, 2), ==, MOAT_TLS_HELLO_NOT_TLS);
    g_assert_cmpint(moat_http_tls_hello_state(empty, 5, 5), ==, MOAT_TLS_HELLO_NOT_TLS);
    g_assert_cmpint(moat_http_tls_hello_state(huge, 5, 70000), ==, MOAT_TLS_HELLO_NOT_TLS);
}

/* The server never asks for client certificates, so a connection has no
 * certificate database: the default one would load the whole system CA
 * bundle into a new GnuTLS trust list per connection (3.7 MiB each). */
static void test_wrap_has_no_database(void)
{
    int pair[2];
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), ==, 0);
    GSocket *socket = g_socket_new_from_fd(pair[0], NULL);
    g_assert_nonnull(socket);
    GIOStream *base = G_IO_STREAM(g_socket_connection_factory_create_connection(socket));
    GIOStream *tls = moat_http_tls_wrap(base, NULL);
    g_assert_nonnull(tls);
    g_assert_null(g_tls_connection_get_database(G_TLS_CONNECTION(tls)));
    g_io_stream_close(tls, NULL, NULL);
    g_object_unref(tls);
    g_object_unref(socket);
    close(pair[1]);
}

/* The record follower sees record headers wherever reads split them; armed,
 * it stops at the first byte of a handshake record, and only there. */
static void test_records_pass(void)
{
    /* An application-data record of 3 bytes, then a handshake record. */
    static const unsigned char bytes[] = {23, 3, 3, 0, 3, 22, 22, 22, 22, 3, 3, 0, 1, 1};
    moat_tls_records records = {0};
    /* Not armed (the first handshake): everything passes, a byte at a time. */
    for (size_t i = 0; i < sizeof bytes; i++)
        g_assert_cmpuint(moat_tls_records_pass(&records, bytes + i, 1, false), ==, 1);
    g_assert_cmpuint(records.header_have, ==, 0);
    g_assert_cmpuint(records.body_left, ==, 0);
    /* Armed: the 22s inside the first record's body are data; the second
     * record's first byte is where it stops, in one read or split. */
    memset(&records, 0, sizeof records);
    g_assert_cmpuint(moat_tls_records_pass(&records, bytes, sizeof bytes, true), ==, 8);
    g_assert_cmpuint(moat_tls_records_pass(&records, bytes + 8, sizeof bytes - 8, true), ==, 0);
    memset(&records, 0, sizeof records);
    g_assert_cmpuint(moat_tls_records_pass(&records, bytes, 2, true), ==, 2);
    g_assert_cmpuint(moat_tls_records_pass(&records, bytes + 2, 4, true), ==, 4);
    g_assert_cmpuint(moat_tls_records_pass(&records, bytes + 6, 8, true), ==, 2);
    g_assert_cmpuint(moat_tls_records_pass(&records, bytes + 8, 6, true), ==, 0);
    /* Alerts and application data keep passing when armed. */
    static const unsigned char alert[] = {21, 3, 3, 0, 2, 1, 0, 23, 3, 3, 0, 0};
    memset(&records, 0, sizeof records);
    g_assert_cmpuint(moat_tls_records_pass(&records, alert, sizeof alert, true), ==, sizeof alert);
}

static void count_refusal(void *user)
{
    (*(int *)user)++;
}

/* A connected TCP pair on loopback: pair[0] the server's end. */
static void tcp_pair(int pair[2])
{
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    int listening = socket(AF_INET, SOCK_STREAM, 0);
    g_assert_cmpint(bind(listening, (struct sockaddr *)&address, sizeof address), ==, 0);
    g_assert_cmpint(listen(listening, 1), ==, 0);
    g_assert_cmpint(getsockname(listening, (struct sockaddr *)&address, &length), ==, 0);
    pair[1] = socket(AF_INET, SOCK_STREAM, 0);
    g_assert_cmpint(connect(pair[1], (struct sockaddr *)&address, sizeof address), ==, 0);
    pair[0] = accept(listening, NULL, NULL);
    g_assert_cmpint(pair[0], >=, 0);
    close(listening);
}

/* The guarded stream reads the socket's bytes as they are until armed; then
 * a handshake record fails the read, and the guard reports it once. */
static void test_guard_stream(void)
{
    int pair[2];
    tcp_pair(pair);
    GSocket *socket = g_socket_new_from_fd(pair[0], NULL);
    GIOStream *guarded = moat_tls_guard_new(g_socket_connection_factory_create_connection(socket));
    g_assert_true(G_IS_SOCKET_CONNECTION(guarded));
    g_assert_true(g_socket_connection_get_socket(G_SOCKET_CONNECTION(guarded)) == socket);
    GInputStream *input = g_io_stream_get_input_stream(guarded);
    g_assert_true(g_pollable_input_stream_can_poll(G_POLLABLE_INPUT_STREAM(input)));

    static const unsigned char hello[] = {22, 3, 1, 0, 2, 1, 2};
    static const unsigned char data[] = {23, 3, 3, 0, 1, 9};
    unsigned char buffer[64];
    g_assert_cmpint(write(pair[1], hello, sizeof hello), ==, sizeof hello);
    g_assert_cmpint(g_input_stream_read(input, buffer, sizeof buffer, NULL, NULL), ==,
                    sizeof hello);
    g_assert_cmpmem(buffer, sizeof hello, hello, sizeof hello);

    int refusals = 0;
    moat_tls_guard_arm(guarded, count_refusal, &refusals, NULL);
    g_assert_cmpint(write(pair[1], data, sizeof data), ==, sizeof data);
    g_assert_cmpint(g_input_stream_read(input, buffer, sizeof buffer, NULL, NULL), ==, sizeof data);
    g_assert_cmpint(refusals, ==, 0);
    g_assert_cmpint(write(pair[1], hello, sizeof hello), ==, sizeof hello);
    for (int i = 0; i < 2; i++) {
        GError *error = NULL;
        g_assert_cmpint(g_input_stream_read(input, buffer, sizeof buffer, NULL, &error), ==, -1);
        g_assert_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
        g_error_free(error);
    }
    g_assert_cmpint(refusals, ==, 1);

    /* Closing it closes the socket. */
    g_assert_true(g_io_stream_close(guarded, NULL, NULL));
    g_assert_true(g_socket_is_closed(socket));
    g_object_unref(guarded);
    g_object_unref(socket);
    close(pair[1]);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/http_tls/hello_states", test_hello_states);
    g_test_add_func("/http_tls/not_tls", test_not_tls);
    g_test_add_func("/http_tls/wrap_has_no_database", test_wrap_has_no_database);
    g_test_add_func("/http_tls/records_pass", test_records_pass);
    g_test_add_func("/http_tls/guard_stream", test_guard_stream);
    return g_test_run();
}

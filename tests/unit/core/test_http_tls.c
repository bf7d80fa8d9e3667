/* The HTTPS port's first look at a client (http_tls.h): only a whole first
 * TLS handshake record is handed to the TLS library; anything else waits or
 * is refused. */
#include "http/http_tls.h"

#include <gio/gio.h>
#include <glib.h>
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/http_tls/hello_states", test_hello_states);
    g_test_add_func("/http_tls/not_tls", test_not_tls);
    g_test_add_func("/http_tls/wrap_has_no_database", test_wrap_has_no_database);
    return g_test_run();
}

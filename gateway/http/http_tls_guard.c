/* Owns the HTTPS listener's renegotiation guard: following the client's TLS
 * records, and the GConverter that passes the client's bytes on to GnuTLS
 * until, armed, it meets a handshake record (http_tls_guard.h). */
#include "http/http_tls_guard.h"

#include <string.h>

#define FILTER_KEY     "moat-tls-guard"
#define CONNECTION_KEY "moat-tls-guard-connection"

size_t moat_tls_records_pass(moat_tls_records *records, const unsigned char *data, size_t length,
                             bool refuse_handshake)
{
    size_t passed = 0;
    while (passed < length) {
        if (records->body_left) {
            size_t take = MIN(records->body_left, length - passed);
            records->body_left -= take;
            passed += take;
            continue;
        }
        if (records->header_have == 0 && refuse_handshake &&
            data[passed] == MOAT_TLS_RECORD_HANDSHAKE)
            break;
        records->header[records->header_have++] = data[passed++];
        if (records->header_have == MOAT_TLS_RECORD_HEADER) {
            records->body_left = (size_t)records->header[3] << 8 | records->header[4];
            records->header_have = 0;
        }
    }
    return passed;
}

/* The GConverter between the socket's input and GnuTLS: a pass-through
 * that stops at a handshake record once armed. Its reader is GnuTLS (on a
 * pool thread in the first handshake, then the main loop); arming happens
 * between the two. */
typedef struct {
    GObject parent;
    moat_tls_records records;
    gint armed; /* atomic */
    bool refused;
    moat_tls_guard_refused_fn on_refused;
    void *user;
    GDestroyNotify free_user;
} MoatTlsRecordFilter;

typedef struct {
    GObjectClass parent_class;
} MoatTlsRecordFilterClass;

static void moat_tls_record_filter_converter_init(GConverterIface *iface);

G_DEFINE_TYPE_WITH_CODE(MoatTlsRecordFilter, moat_tls_record_filter, G_TYPE_OBJECT,
                        G_IMPLEMENT_INTERFACE(G_TYPE_CONVERTER,
                                              moat_tls_record_filter_converter_init))

static void moat_tls_record_filter_init(MoatTlsRecordFilter *filter) {}

static void moat_tls_record_filter_finalize(GObject *object)
{
    MoatTlsRecordFilter *filter = (MoatTlsRecordFilter *)object;
    if (filter->free_user)
        filter->free_user(filter->user);
    G_OBJECT_CLASS(moat_tls_record_filter_parent_class)->finalize(object);
}

static void moat_tls_record_filter_class_init(MoatTlsRecordFilterClass *class)
{
    G_OBJECT_CLASS(class)->finalize = moat_tls_record_filter_finalize;
}

static GConverterResult refuse(MoatTlsRecordFilter *filter, GError **error)
{
    if (!filter->refused && filter->on_refused)
        filter->on_refused(filter->user);
    filter->refused = true;
    g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                        "the client asked to renegotiate TLS (refused)");
    return G_CONVERTER_ERROR;
}

static GConverterResult filter_convert(GConverter *converter, const void *inbuf, gsize inbuf_size,
                                       void *outbuf, gsize outbuf_size, GConverterFlags flags,
                                       gsize *bytes_read, gsize *bytes_written, GError **error)
{
    MoatTlsRecordFilter *filter = (MoatTlsRecordFilter *)converter;
    *bytes_read = *bytes_written = 0;
    if (inbuf_size == 0) {
        if (flags & G_CONVERTER_INPUT_AT_END)
            return G_CONVERTER_FINISHED;
        if (flags & G_CONVERTER_FLUSH)
            return G_CONVERTER_FLUSHED;
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT, "need more input");
        return G_CONVERTER_ERROR;
    }
    if (outbuf_size == 0) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NO_SPACE, "no room");
        return G_CONVERTER_ERROR;
    }
    size_t passed = moat_tls_records_pass(&filter->records, inbuf, MIN(inbuf_size, outbuf_size),
                                          g_atomic_int_get(&filter->armed));
    if (passed == 0)
        return refuse(filter, error);
    memcpy(outbuf, inbuf, passed);
    *bytes_read = *bytes_written = passed;
    return G_CONVERTER_CONVERTED;
}

static void filter_reset(GConverter *converter)
{
    MoatTlsRecordFilter *filter = (MoatTlsRecordFilter *)converter;
    memset(&filter->records, 0, sizeof filter->records);
}

static void moat_tls_record_filter_converter_init(GConverterIface *iface)
{
    iface->convert = filter_convert;
    iface->reset = filter_reset;
}

/* A GTcpWrapperConnection over (the filtered input, the socket's output):
 * a GSocketConnection of the same socket, which its close closes. The
 * original connection stays with it: dropped, it would close the streams. */
GIOStream *moat_tls_guard_new(GSocketConnection *connection)
{
    GIOStream *base = G_IO_STREAM(connection);
    MoatTlsRecordFilter *filter = g_object_new(moat_tls_record_filter_get_type(), NULL);
    GInputStream *input =
        g_converter_input_stream_new(g_io_stream_get_input_stream(base), G_CONVERTER(filter));
    GIOStream *pair = g_simple_io_stream_new(input, g_io_stream_get_output_stream(base));
    GIOStream *guarded =
        G_IO_STREAM(g_tcp_wrapper_connection_new(pair, g_socket_connection_get_socket(connection)));
    g_object_set_data_full(G_OBJECT(guarded), FILTER_KEY, filter, g_object_unref);
    g_object_set_data_full(G_OBJECT(guarded), CONNECTION_KEY, connection, g_object_unref);
    g_object_unref(pair);
    g_object_unref(input);
    return guarded;
}

void moat_tls_guard_arm(GIOStream *guarded, moat_tls_guard_refused_fn refused, void *user,
                        GDestroyNotify free_user)
{
    MoatTlsRecordFilter *filter = guarded ? g_object_get_data(G_OBJECT(guarded), FILTER_KEY) : NULL;
    if (!filter || g_atomic_int_get(&filter->armed)) {
        if (free_user)
            free_user(user);
        return;
    }
    filter->on_refused = refused;
    filter->user = user;
    filter->free_user = free_user;
    g_atomic_int_set(&filter->armed, 1);
}

/* Owns one event listener's WebSocket connection (event_socket.h): the
 * outgoing byte queue and its writes, the bounded reads of what the client
 * sends (skipped, answered or refused frame by frame), its inbound budget,
 * and the one report of its end. */
#include "session/event_socket.h"

#include "session/ws_frame.h"

#include <string.h>

/* Read per main-loop turn: the client cannot hold the control thread. */
#define READ_CHUNK 4096
/* RFC 6455 §7.4.1 */
#define CLOSE_PROTOCOL_ERROR 1002
#define CLOSE_INVALID_DATA   1007

struct moat_event_socket {
    GIOStream *stream;
    GPollableInputStream *input;
    GPollableOutputStream *output;
    moat_event_socket_limits limits;
    moat_event_socket_ended_fn ended;
    void *user;
    GByteArray *out; /* queued frames; out_sent of them already written */
    size_t out_sent;
    GSource *readable, *writable, *report;
    gint64 opened_us;
    uint64_t bytes_in;
    /* A control frame being received (header and payload), or how much of
     * a data frame's payload is still to skip. */
    uint8_t pending[MOAT_WS_MAX_HEADER + MOAT_WS_MAX_CONTROL_PAYLOAD];
    size_t pending_length;
    uint64_t skip;
    bool in_message; /* a data frame without FIN came: continuations follow */
    /* The pong owed for the latest ping, sent once everything queued before
     * it is written: at most one pong waits however often a client that
     * does not read pings (§5.5.3 lets only the most recent be answered). */
    uint8_t pong[MOAT_WS_MAX_CONTROL_PAYLOAD];
    size_t pong_length;
    bool pong_owed;
    bool closing; /* our close frame is queued: nothing more is sent or read */
    bool over;    /* ended, or about to report it */
    moat_event_socket_end why;
};

static void write_out(moat_event_socket *s);

static gboolean report_end(gpointer data)
{
    moat_event_socket *s = data;
    g_source_unref(s->report);
    s->report = NULL;
    if (s->ended)
        s->ended(s->user, s->why);
    return G_SOURCE_REMOVE;
}

/* Stops reading and writing, and reports why from a source of its own. */
static void end(moat_event_socket *s, moat_event_socket_end why)
{
    if (s->over)
        return;
    s->over = true;
    s->why = why;
    if (s->readable) {
        g_source_destroy(s->readable);
        g_source_unref(s->readable);
        s->readable = NULL;
    }
    s->report = g_idle_source_new();
    g_source_set_callback(s->report, report_end, s, NULL);
    g_source_attach(s->report, NULL);
}

static void queue_frame(moat_event_socket *s, uint8_t opcode, const void *payload, size_t length)
{
    uint8_t header[10];
    size_t n = moat_ws_server_header(opcode, length, header);
    g_byte_array_append(s->out, header, (guint)n);
    if (length)
        g_byte_array_append(s->out, payload, (guint)length);
}

static gboolean on_writable(GObject *stream, gpointer data)
{
    moat_event_socket *s = data;
    g_source_unref(s->writable);
    s->writable = NULL;
    write_out(s);
    return G_SOURCE_REMOVE;
}

static void write_out(moat_event_socket *s)
{
    while (!s->over) {
        if (s->out_sent == s->out->len) {
            g_byte_array_set_size(s->out, 0);
            s->out_sent = 0;
            if (!s->pong_owed || s->closing)
                return;
            s->pong_owed = false;
            queue_frame(s, MOAT_WS_PONG, s->pong, s->pong_length);
        }
        GError *error = NULL;
        gssize n = g_pollable_output_stream_write_nonblocking(
            s->output, s->out->data + s->out_sent, s->out->len - s->out_sent, NULL, &error);
        if (n < 0 && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
            g_error_free(error);
            if (!s->writable) {
                s->writable = g_pollable_output_stream_create_source(s->output, NULL);
                g_source_set_callback(s->writable, G_SOURCE_FUNC(on_writable), s, NULL);
                g_source_attach(s->writable, NULL);
            }
            return;
        }
        if (n <= 0) {
            g_clear_error(&error);
            end(s, MOAT_EVENT_SOCKET_FAILED);
            return;
        }
        s->out_sent += (size_t)n;
    }
}

/* Fails the connection (§7.1.7): a close frame with `code`, then it ends. */
static void fail(moat_event_socket *s, uint16_t code)
{
    if (!s->closing) {
        uint8_t payload[2] = {(uint8_t)(code >> 8), (uint8_t)code};
        queue_frame(s, MOAT_WS_CLOSE, payload, sizeof payload);
        s->closing = true;
        write_out(s);
    }
    end(s, MOAT_EVENT_SOCKET_PROTOCOL);
}

/* The codes a peer may send (§7.4.1, §7.4.2): 1004-1006 and 1015 are
 * reserved, the others below 3000 not defined by RFC 6455. */
static bool close_code_valid(unsigned code)
{
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1011) ||
           (code >= 3000 && code <= 4999);
}

/* Whether text is UTF-8; NUL characters are (GLib's check refuses them). */
static bool utf8_valid(const uint8_t *text, size_t length)
{
    const gchar *at = (const gchar *)text, *stop = at + length, *bad = NULL;
    while (!g_utf8_validate_len(at, (gsize)(stop - at), &bad)) {
        if (*bad != '\0')
            return false;
        at = bad + 1;
    }
    return true;
}

/* 0 for a close frame's payload that is empty or a valid code and a UTF-8
 * reason (§5.5.1), else the code to fail the connection with. */
static uint16_t close_refusal(const uint8_t *payload, size_t length)
{
    if (length == 0)
        return 0;
    if (length == 1 || !close_code_valid((unsigned)payload[0] << 8 | payload[1]))
        return CLOSE_PROTOCOL_ERROR;
    return utf8_valid(payload + 2, length - 2) ? 0 : CLOSE_INVALID_DATA;
}

/* §5.4: a continuation only inside a message, a new message only after the
 * last one finished. Data frames are skipped unread: a text message's
 * UTF-8 is not checked, nothing here interprets it. */
static bool data_frame_in_sequence(moat_event_socket *s, const moat_ws_frame *frame)
{
    if ((frame->opcode == MOAT_WS_CONTINUATION) != s->in_message)
        return false;
    s->in_message = !frame->fin;
    return true;
}

/* A whole control frame in s->pending: answered. */
static void control_frame(moat_event_socket *s, const moat_ws_frame *frame)
{
    uint8_t *payload = s->pending + frame->header_length;
    moat_ws_unmask(payload, frame->payload_length, frame->mask, 0);
    if (frame->opcode == MOAT_WS_PING && !s->closing) {
        memcpy(s->pong, payload, frame->payload_length);
        s->pong_length = frame->payload_length;
        s->pong_owed = true;
        write_out(s);
    } else if (frame->opcode == MOAT_WS_CLOSE) {
        uint16_t refusal = close_refusal(payload, frame->payload_length);
        if (refusal) {
            fail(s, refusal);
            return;
        }
        /* Answer with its status code (§5.5.1), then it is over. */
        if (!s->closing)
            queue_frame(s, MOAT_WS_CLOSE, payload, frame->payload_length >= 2 ? 2 : 0);
        s->closing = true;
        write_out(s);
        end(s, MOAT_EVENT_SOCKET_PEER_CLOSED);
    }
}

/* Takes bytes from the client: a data frame's payload is skipped as it
 * comes, a control frame gathered (at most 139 bytes) and answered. */
static void take(moat_event_socket *s, const uint8_t *data, size_t length)
{
    while (length > 0 && !s->over) {
        if (s->skip > 0) {
            size_t n = s->skip < length ? (size_t)s->skip : length;
            s->skip -= n;
            data += n;
            length -= n;
            continue;
        }
        size_t room = sizeof s->pending - s->pending_length;
        size_t n = length < room ? length : room;
        memcpy(s->pending + s->pending_length, data, n);
        s->pending_length += n;
        data += n;
        length -= n;
        moat_ws_frame frame;
        moat_ws_parse_result r =
            moat_ws_frame_parse(s->pending, s->pending_length, s->limits.max_frame, &frame);
        if (r == MOAT_WS_PARSE_INVALID) {
            end(s, MOAT_EVENT_SOCKET_PROTOCOL);
            return;
        }
        bool data_frame = frame.opcode < MOAT_WS_CLOSE;
        if (r == MOAT_WS_PARSE_NEED_MORE && !(data_frame && frame.header_length > 0))
            continue; /* a header, or a control frame, still arriving */
        if (data_frame) {
            if (!data_frame_in_sequence(s, &frame)) {
                fail(s, CLOSE_PROTOCOL_ERROR);
                return;
            }
            /* Skipped: whatever of it is not in pending yet. */
            size_t have = s->pending_length - frame.header_length;
            size_t used = have < frame.payload_length ? have : frame.payload_length;
            s->skip = frame.payload_length - used;
            n = frame.header_length + used;
        } else {
            control_frame(s, &frame);
            n = frame.header_length + frame.payload_length;
        }
        memmove(s->pending, s->pending + n, s->pending_length - n);
        s->pending_length -= n;
        /* What was left in pending may hold the next frame: parse it next
         * turn of the loop without new bytes. */
        if (s->pending_length > 0 && length == 0) {
            uint8_t rest[sizeof s->pending];
            size_t rest_length = s->pending_length;
            memcpy(rest, s->pending, rest_length);
            s->pending_length = 0;
            take(s, rest, rest_length);
            return;
        }
    }
}

static bool over_budget(const moat_event_socket *s)
{
    gint64 age_us = g_get_monotonic_time() - s->opened_us;
    uint64_t allowed =
        s->limits.inbound_burst + s->limits.inbound_per_s * (uint64_t)age_us / G_USEC_PER_SEC;
    return s->bytes_in > allowed;
}

static gboolean on_readable(GObject *stream, gpointer data)
{
    moat_event_socket *s = data;
    uint8_t buffer[READ_CHUNK];
    GError *error = NULL;
    gssize n =
        g_pollable_input_stream_read_nonblocking(s->input, buffer, sizeof buffer, NULL, &error);
    if (n < 0 && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
        g_error_free(error);
        return G_SOURCE_CONTINUE;
    }
    g_clear_error(&error);
    if (n <= 0) {
        end(s, n == 0 ? MOAT_EVENT_SOCKET_PEER_CLOSED : MOAT_EVENT_SOCKET_FAILED);
        return G_SOURCE_REMOVE;
    }
    s->bytes_in += (uint64_t)n;
    if (over_budget(s)) {
        end(s, MOAT_EVENT_SOCKET_SENT_TOO_MUCH);
        return G_SOURCE_REMOVE;
    }
    if (!s->closing)
        take(s, buffer, (size_t)n);
    return s->over ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

moat_event_socket *moat_event_socket_new(GIOStream *stream, const moat_event_socket_limits *limits,
                                         moat_event_socket_ended_fn ended, void *user)
{
    moat_event_socket *s = g_new0(moat_event_socket, 1);
    s->stream = stream;
    s->input = G_POLLABLE_INPUT_STREAM(g_io_stream_get_input_stream(stream));
    s->output = G_POLLABLE_OUTPUT_STREAM(g_io_stream_get_output_stream(stream));
    s->limits = *limits;
    s->ended = ended;
    s->user = user;
    s->out = g_byte_array_new();
    s->opened_us = g_get_monotonic_time();
    s->readable = g_pollable_input_stream_create_source(s->input, NULL);
    g_source_set_callback(s->readable, G_SOURCE_FUNC(on_readable), s, NULL);
    g_source_attach(s->readable, NULL);
    return s;
}

void moat_event_socket_send_text(moat_event_socket *s, const char *text)
{
    if (s->over || s->closing)
        return;
    queue_frame(s, MOAT_WS_TEXT, text, strlen(text));
    write_out(s);
}

size_t moat_event_socket_unsent(const moat_event_socket *s)
{
    return s->out->len - s->out_sent;
}

void moat_event_socket_close(moat_event_socket *s, uint16_t code, const char *reason)
{
    if (s->over || s->closing)
        return;
    uint8_t payload[MOAT_WS_MAX_CONTROL_PAYLOAD];
    size_t length = reason ? strnlen(reason, sizeof payload - 2) : 0;
    payload[0] = (uint8_t)(code >> 8);
    payload[1] = (uint8_t)code;
    if (length)
        memcpy(payload + 2, reason, length);
    queue_frame(s, MOAT_WS_CLOSE, payload, 2 + length);
    s->closing = true;
    write_out(s);
}

bool moat_event_socket_open(const moat_event_socket *s)
{
    return !s->over && !s->closing;
}

static void closed(GObject *stream, GAsyncResult *result, gpointer data)
{
    g_io_stream_close_finish(G_IO_STREAM(stream), result, NULL);
    g_object_unref(stream);
}

void moat_event_socket_free(moat_event_socket *s)
{
    if (s == NULL)
        return;
    GSource **sources[] = {&s->readable, &s->writable, &s->report};
    for (size_t i = 0; i < G_N_ELEMENTS(sources); i++) {
        if (*sources[i]) {
            g_source_destroy(*sources[i]);
            g_source_unref(*sources[i]);
        }
    }
    /* The close (a TLS close_notify too) finishes on its own; it keeps its
     * reference to the stream until then. */
    g_io_stream_close_async(s->stream, G_PRIORITY_DEFAULT, NULL, closed, NULL);
    g_byte_array_unref(s->out);
    g_free(s);
}

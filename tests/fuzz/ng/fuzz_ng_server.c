/* ng datagrams from the network through the whole exchange (cookie, cache,
 * bencode, request, dispatch) with handlers that do nothing. Properties:
 * a reply exists exactly when the datagram has a cookie, starts with that
 * cookie and a space, is a bencoded dictionary with a string "result", and
 * a repeated datagram gets the same bytes. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ng/ng_server.h"

static void nothing(void *context, const moat_ng_request *request, moat_bencode *reply)
{
    /* Leaves the reply empty: the server must still answer. */
}

static void ok(void *context, const moat_ng_request *request, moat_bencode *reply)
{
    moat_bencode_set_string(reply, "result", "ok");
}

static moat_ng_server *server;

static void check_reply(const uint8_t *data, size_t size, const GByteArray *reply)
{
    const uint8_t *space = memchr(data, ' ', size);
    if (!space || space == data) {
        if (reply->len != 0)
            abort();
        return;
    }
    size_t cookie = (size_t)(space - data);
    if (reply->len <= cookie + 1 || memcmp(reply->data, data, cookie + 1) != 0)
        abort();
    moat_bencode *body =
        moat_bencode_parse(reply->data + cookie + 1, reply->len - cookie - 1, NULL, NULL, 0);
    if (!body || moat_bencode_type_of(body) != MOAT_BENCODE_DICTIONARY ||
        !moat_bencode_string(moat_bencode_get(body, "result"), NULL))
        abort();
    moat_bencode_free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!server) {
        moat_ng_handlers handlers = {
            .offer = nothing, .answer = ok, .delete_call = nothing, .query = ok, .list = nothing};
        server = moat_ng_server_new_detached(&handlers);
    }
    GByteArray *reply = g_byte_array_new();
    moat_ng_server_process(server, data, size, reply);
    check_reply(data, size, reply);
    GByteArray *again = g_byte_array_new();
    moat_ng_server_process(server, data, size, again);
    /* The same bytes again: the cached reply, or (a cookie over
     * MOAT_NG_MAX_COOKIE, never run) the same error. */
    if (again->len != reply->len)
        abort();
    if (reply->len > 0 && memcmp(again->data, reply->data, reply->len) != 0)
        abort();
    g_byte_array_free(reply, TRUE);
    g_byte_array_free(again, TRUE);
    return 0;
}

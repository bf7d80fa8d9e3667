/* Node-to-node messages as a pub/sub channel hands them over (anyone with
 * the Redis password can publish): the parser must refuse or accept
 * without reading past the input; an accepted message must carry only
 * valid names, a forwardable path and its sender's reply channel, and
 * round-trip. The same bytes as a node's room listing are merged. */
#include "cluster/cluster_message.h"

#include <glib.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    moat_cluster_message message;
    moat_cluster_drop_reason reason;
    if (moat_cluster_message_parse(copy, size, &message, &reason)) {
        if (!moat_cluster_node_id_valid(message.from))
            abort();
        if (message.kind == MOAT_CLUSTER_MSG_REQUEST) {
            char channel[MOAT_CLUSTER_NAME_MAX + 16];
            if (!moat_cluster_path_forwardable(message.path) ||
                !moat_cluster_rpc_channel(message.from, channel, sizeof channel) ||
                strcmp(channel, message.reply_to) != 0)
                abort();
        }
        size_t length = 0;
        char *json = moat_cluster_message_to_json(&message, &length);
        moat_cluster_message again;
        /* A body that is not UTF-8 (JSON's \u escapes of lone surrogates
         * are refused by jansson already) is the only refusal. */
        if (json) {
            if (!moat_cluster_message_parse(json, length, &again, &reason) ||
                again.kind != message.kind || strcmp(again.from, message.from) != 0 ||
                again.body_length != message.body_length)
                abort();
            moat_cluster_message_clear(&again);
            g_free(json);
        }
        moat_cluster_message_clear(&message);
    }
    json_t *rooms = json_array();
    moat_cluster_rooms_merge(rooms, "n", copy, size, 64);
    if (json_array_size(rooms) > 64)
        abort();
    json_decref(rooms);
    free(copy);
    return 0;
}

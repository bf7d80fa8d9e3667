/* Node records as Redis hands them over (another machine wrote them): the
 * parser must refuse or accept without reading past the input, and an
 * accepted record must round-trip and yield only safe URLs and keys. The
 * same bytes as a WHIP resource and as a proxy-mode via/ resource path. */
#include "cluster/cluster_keys.h"
#include "cluster/node_record.h"

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    moat_cluster_node node;
    char error[96];
    if (moat_cluster_node_parse(copy, size, &node, error, sizeof error)) {
        if (!moat_cluster_url_safe(node.http) || !moat_cluster_node_id_valid(node.id))
            abort();
        char key[256];
        if (!moat_cluster_node_key(node.id, key, sizeof key))
            abort();
        char *json = moat_cluster_node_to_json(&node);
        moat_cluster_node again;
        if (!moat_cluster_node_parse(json, strlen(json), &again, error, sizeof error) ||
            memcmp(&node, &again, sizeof node) != 0)
            abort();
        g_free(json);
    }
    /* The same bytes as a WHIP resource. */
    char *resource = g_strndup(copy, size);
    char room[MOAT_CLUSTER_NAME_MAX];
    char key[400];
    if (moat_cluster_room_of_resource(resource, room, sizeof room) &&
        !moat_cluster_room_key("room", room, key, sizeof key))
        abort();
    /* ... and as what follows /whip/resource/ (proxy mode's via/ paths):
     * an accepted one round-trips. */
    char node_id[MOAT_CLUSTER_NAME_MAX], id[48];
    if (moat_cluster_via_parse(resource, node_id, sizeof node_id, id, sizeof id) ==
        MOAT_CLUSTER_VIA_OK) {
        char path[512], node_again[MOAT_CLUSTER_NAME_MAX], id_again[48];
        if (!moat_cluster_via_path(node_id, id, path, sizeof path) ||
            moat_cluster_via_parse(path + strlen("/whip/resource/"), node_again, sizeof node_again,
                                   id_again, sizeof id_again) != MOAT_CLUSTER_VIA_OK ||
            strcmp(node_id, node_again) != 0 || strcmp(id, id_again) != 0)
            abort();
    }
    g_free(resource);
    free(copy);
    return 0;
}

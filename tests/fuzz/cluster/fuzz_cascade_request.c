/* Cascade link requests as the owner's POST /api/cluster/cascade receives
 * them (after the forward token: from a node, or from whoever learned the
 * token): the parser must refuse or accept without reading past the input,
 * and an accepted request must round-trip through its JSON unchanged. The
 * same input is read as an owner's answer too (its SSRCs in SDP and its
 * "layer_ssrcs"), as the edge reads one. */
#include "cluster/cascade_link.h"

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
    moat_cascade_request request, again;
    char why[96];
    if (moat_cascade_request_parse(copy, size, &request, why, sizeof why)) {
        struct sockaddr_in6 address;
        if (request.port == 0 || !moat_cascade_address(request.media, request.port, &address))
            abort();
        char *json = moat_cascade_request_to_json(&request);
        if (!moat_cascade_request_parse(json, strlen(json), &again, why, sizeof why) ||
            memcmp(&request, &again, sizeof request) != 0)
            abort();
        g_free(json);
    }
    uint32_t ssrcs[2];
    char *text = g_strndup(copy, size);
    moat_cascade_answer_ssrcs(text, ssrcs);
    g_free(text);
    /* The owner's answer's "layer_ssrcs", as the edge reads it: at most
     * MOAT_CASCADE_LINK_LAYERS, each nonzero. */
    json_t *answer = json_loadb(copy, size, JSON_DECODE_ANY, NULL);
    uint32_t layers[MOAT_CASCADE_LINK_LAYERS];
    size_t n = moat_cascade_layer_ssrcs_parse(json_object_get(answer, "layer_ssrcs"), layers,
                                              MOAT_CASCADE_LINK_LAYERS);
    for (size_t l = 0; l < n; l++)
        if (n > MOAT_CASCADE_LINK_LAYERS || layers[l] == 0)
            abort();
    json_decref(answer);
    free(copy);
    return 0;
}

/* A relay's ng reply as bench/voip's load generator reads it: split into
 * cookie and fields, the SDP's media address, the cookie's call. Every slice
 * must lie inside the input; any violation aborts so libFuzzer reports it. */
#include "ng_wire.h"

#include <stdint.h>
#include <stdlib.h>

static void inside(ng_text t, const uint8_t *data, size_t size)
{
    if (!t.data)
        return;
    const char *start = (const char *)data;
    if (t.data < start || t.data + t.len > start + size)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ng_reply reply;
    if (ng_decode((const char *)data, size, &reply) < 0)
        return 0;
    inside(reply.cookie, data, size);
    inside(reply.result, data, size);
    inside(reply.error_reason, data, size);
    inside(reply.sdp, data, size);
    struct sockaddr_in where;
    if (ng_sdp_media(reply.sdp, &where) == 0 && where.sin_port == 0)
        abort();
    unsigned index;
    ng_command command;
    ng_cookie_parse(reply.cookie, "r1", &index, &command);
    return 0;
}

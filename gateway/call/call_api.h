/* GET /api/calls: the calls Moat relays, as JSON (read-only; the HTTP
 * router applies [http] token as for every /api/ path). Control thread. */
#ifndef MOAT_CALL_API_H
#define MOAT_CALL_API_H

#include "call/call_registry.h"

/* {"calls": [{"call_id", "created", "deleting", "tags": [{"tag", "media":
 * [{"type", "local_port", "rtp": {packets, bytes, errors}, "rtcp": ...,
 * "latched"}]}]}]}; g_free the text. */
char *moat_call_api_json(moat_call_registry *registry);

#endif

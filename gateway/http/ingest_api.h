/* Plain RTP ingest into a plugin's resource (a room) as a publisher:
 * POST <api_path>/<resource>/ingest with the codecs answers the UDP port to
 * send RTP to (rtcp-mux); DELETE <api_path>/<resource>/ingest/<id> ends it
 * (that resource's ingests only). Admitted like a WHIP offer (rate per
 * source, [limits] max_sessions) plus [limits] ingest_per_source; the port
 * comes from [media] port_min..port_max; an ingest without a valid packet
 * for [limits] ingest_idle_timeout_s ends.
 * Offered by plugins that name their publishers (moat_plugin.
 * publisher_session). Control thread only. */
#ifndef MOAT_INGEST_API_H
#define MOAT_INGEST_API_H

#include "session/gateway_state.h"
#include "http/http_message.h"

/* False when `path` is not an ingest request. */
bool moat_ingest_api_handle(moat_gateway *gateway, const moat_plugin *plugin,
                            const moat_http_request *request, moat_http_response *response,
                            const char *path);

#endif

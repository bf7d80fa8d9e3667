/* WHIP (RFC 9725): POST an offer to /whip/<plugin>, PATCH (trickle, ICE
 * restart) and DELETE the resource /whip/resource/<id>. */
#ifndef MOAT_WHIP_API_H
#define MOAT_WHIP_API_H

#include "core/gateway.h"

#include <libsoup/soup.h>

void moat_whip_handle_offer(moat_gateway *gateway, SoupServerMessage *message,
                            const char *plugin_name);
void moat_whip_handle_resource(moat_gateway *gateway, SoupServerMessage *message,
                               const char *session_id);
/* Worker-thread notification that a session ended; hops to the control thread. */
void moat_whip_session_ended(const char *session_id, const char *reason);
void moat_whip_bind_gateway(moat_gateway *gateway);

#endif

/* The gateway's ng control socket: the handler table the call layer plugs
 * into it, and its start from the [ng] configuration. Control thread. */
#ifndef MOAT_NG_GATEWAY_H
#define MOAT_NG_GATEWAY_H

#include "session/gateway_state.h"
#include "ng/ng_server.h"

/* The handlers behind offer/answer/delete/query/list (NULL entries answer
 * "Unrecognized command"). */
moat_ng_handlers moat_gateway_ng_handlers(moat_gateway *gateway);

/* Starts gateway->ng from [ng] bind/port (port 0: stays NULL). 0, or -1
 * with one line in error (e.g. the port is taken). */
int moat_gateway_ng_start(moat_gateway *gateway, char *error, size_t error_size);
void moat_gateway_ng_stop(moat_gateway *gateway);

#endif

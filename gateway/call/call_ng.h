/* The ng commands (ng/ng_server.h) that act on calls: offer, answer,
 * delete, query and list, handed to the ng server as its handler table.
 * Control thread. */
#ifndef MOAT_CALL_NG_H
#define MOAT_CALL_NG_H

#include "call/call_registry.h"
#include "ng/ng_server.h"

/* The handler table with `registry` as its context. */
moat_ng_handlers moat_call_ng_handlers(moat_call_registry *registry);

#endif

/* Wiring of the ng control socket into the gateway: which handlers answer
 * the call commands, and the socket's life with the gateway's. */
#include "app/ng_gateway.h"

#include "call/call_ng.h"
#include "base/log.h"

moat_ng_handlers moat_gateway_ng_handlers(moat_gateway *gateway)
{
    /* The call layer (gateway/call/) answers every call command. */
    return moat_call_ng_handlers(gateway->calls);
}

int moat_gateway_ng_start(moat_gateway *gateway, char *error, size_t error_size)
{
    const moat_config *config = &gateway->config;
    if (config->ng_port == 0)
        return 0;
    moat_ng_handlers handlers = moat_gateway_ng_handlers(gateway);
    gateway->ng =
        moat_ng_server_start(config->ng_bind, config->ng_port, &handlers, error, error_size);
    if (!gateway->ng)
        return -1;
    moat_own_sockets_hold(gateway->own_sockets, (uint16_t)config->ng_port);
    moat_log_info("ng", "ng control protocol on udp %s port %d", config->ng_bind, config->ng_port);
    return 0;
}

void moat_gateway_ng_stop(moat_gateway *gateway)
{
    if (gateway->ng)
        moat_own_sockets_release(gateway->own_sockets, (uint16_t)gateway->config.ng_port);
    moat_ng_server_stop(gateway->ng);
    gateway->ng = NULL;
}

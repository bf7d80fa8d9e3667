/* The demo pages under [http] web_root (http_static.c): GET and HEAD of a
 * plain name below the root ("/" is /index.html; "..", hidden names and
 * backslashes are a 400), a 404 JSON body for anything else that is not a
 * regular file, 405 with Allow for other methods. The file is read whole
 * per request.
 *
 * Control thread. */
#ifndef MOAT_HTTP_STATIC_H
#define MOAT_HTTP_STATIC_H

#include "http/http_message.h"
#include "session/gateway_state.h"

void moat_http_serve_static(moat_gateway *gateway, const moat_http_request *request,
                            moat_http_response *response);

#endif

/* Reason phrases for the HTTP statuses Moat sends that libsoup 3.2's table
 * lacks (it writes "Unknown Error" for them). Pure; any thread. */
#ifndef MOAT_HTTP_REASON_H
#define MOAT_HTTP_REASON_H

/* The phrase for `status` when libsoup has none (421, 426, 428, 429), else
 * NULL: libsoup's own. */
const char *moat_http_reason(unsigned status);

#endif

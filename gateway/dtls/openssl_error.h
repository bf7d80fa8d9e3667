/* OpenSSL reports failures through a per-thread error queue; Moat returns
 * them as strings. One transport's leftovers must never be blamed on the
 * next one handled by the same worker thread, so taking an error also
 * empties the queue. */
#ifndef MOAT_OPENSSL_ERROR_H
#define MOAT_OPENSSL_ERROR_H

#include <stddef.h>

/* Writes the earliest queued error's reason ("unsupported protocol") to out,
 * or fallback when the queue is empty, and clears the queue. */
void moat_openssl_error_take(char *out, size_t out_size, const char *fallback);

/* Empties the calling thread's queue, as OpenSSL asks before an SSL I/O call
 * whose result goes to SSL_get_error. Looks first: ERR_clear_error resets all
 * sixteen slots of the queue even when it is empty, and was 3-7% of a bulk
 * data channel's CPU when called around every record. */
void moat_openssl_error_reset(void);

#endif

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

#endif

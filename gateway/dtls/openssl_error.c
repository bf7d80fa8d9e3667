/* Turns the calling thread's OpenSSL error queue into a message and empties
 * it, so one transport's leftover errors are never blamed on the next. */
#include "openssl_error.h"

#include <stdio.h>

#include <openssl/err.h>

void moat_openssl_error_take(char *out, size_t out_size, const char *fallback)
{
    /* The earliest entry is the cause; later ones are callers unwinding. */
    unsigned long code = ERR_get_error();
    const char *reason = code ? ERR_reason_error_string(code) : NULL;
    if (out != NULL && out_size > 0) {
        if (reason != NULL)
            snprintf(out, out_size, "%s", reason);
        else if (code != 0)
            snprintf(out, out_size, "OpenSSL error 0x%lx", code);
        else
            snprintf(out, out_size, "%s", fallback ? fallback : "unknown error");
    }
    ERR_clear_error();
}

void moat_openssl_error_reset(void)
{
    if (ERR_peek_error() != 0)
        ERR_clear_error();
}

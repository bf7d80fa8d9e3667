/* libFuzzer target for the HTTPS listener's first look at a connection
 * (http/http_tls.h moat_http_tls_hello_state): the input is what a client
 * sends first, seen as the listener sees it, queued a byte more at a time
 * (its first five bytes peeked, the count queued). Checked: no read past the
 * peeked head (an exact-size copy, ASan); once a prefix is not TLS, no longer
 * one is; a prefix is complete exactly when it holds a whole first record
 * whose header is a handshake record of version 3.x and a length of 1 to
 * 2^14 + 2048, and stays complete as more bytes queue.
 *
 * The same bytes as a client's stream after its handshake, read by the
 * renegotiation guard (http/http_tls_guard.h moat_tls_records_pass) in one
 * read and a byte at a time: both stop at the same place, which is the
 * start of a record whose type is handshake (or the end); not armed,
 * everything passes. */
#include "http/http_tls.h"
#include "http/http_tls_guard.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static moat_tls_hello_state state_at(const uint8_t *data, size_t available)
{
    size_t head_length = available < 5 ? available : 5;
    unsigned char *head = malloc(head_length ? head_length : 1);
    if (!head)
        abort();
    memcpy(head, data, head_length);
    moat_tls_hello_state state = moat_http_tls_hello_state(head, head_length, available);
    free(head);
    return state;
}

/* Where the armed guard should stop: the first record of type handshake, or
 * the end. */
static size_t first_handshake_record(const uint8_t *data, size_t size)
{
    size_t at = 0;
    while (at < size && data[at] != MOAT_TLS_RECORD_HANDSHAKE) {
        if (size - at < MOAT_TLS_RECORD_HEADER)
            return size;
        at += MOAT_TLS_RECORD_HEADER + ((size_t)data[at + 3] << 8 | data[at + 4]);
    }
    return at < size ? at : size;
}

static size_t pass_split(const uint8_t *data, size_t size, size_t step)
{
    moat_tls_records records = {0};
    size_t passed = 0;
    while (passed < size) {
        size_t length = size - passed < step ? size - passed : step;
        unsigned char *copy = malloc(length);
        if (!copy)
            abort();
        memcpy(copy, data + passed, length);
        size_t n = moat_tls_records_pass(&records, copy, length, true);
        free(copy);
        if (n > length)
            abort();
        passed += n;
        if (n < length)
            break;
    }
    return passed;
}

static void check_guard(const uint8_t *data, size_t size)
{
    size_t expected = first_handshake_record(data, size);
    if (pass_split(data, size, size ? size : 1) != expected ||
        pass_split(data, size, 1) != expected)
        abort();
    moat_tls_records records = {0};
    if (moat_tls_records_pass(&records, data, size, false) != size)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 20000)
        return 0;
    bool header_ok = size >= 5 && data[0] == 22 && data[1] == 3;
    size_t record = size >= 5 ? ((size_t)data[3] << 8 | data[4]) : 0;
    header_ok = header_ok && record >= 1 && record <= 16384 + 2048;
    moat_tls_hello_state previous = MOAT_TLS_HELLO_INCOMPLETE;
    for (size_t n = 0; n <= size; n++) {
        moat_tls_hello_state state = state_at(data, n);
        if (previous != MOAT_TLS_HELLO_INCOMPLETE && state != previous)
            abort(); /* not TLS or complete stays so */
        bool whole = header_ok && n >= 5 + record;
        if ((state == MOAT_TLS_HELLO_COMPLETE) != whole)
            abort();
        previous = state;
    }
    check_guard(data, size);
    return 0;
}

/* libFuzzer target for the DTLS record pre-parser: arbitrary bytes as one
 * datagram. Beyond not crashing, scan() and a walk with next() must agree,
 * and every record handed out must lie inside the datagram. */
#include <stdint.h>
#include <stdlib.h>

#include "dtls/dtls_record.h"

#define GCM_OVERHEAD 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t count = 0;
    moat_dtls_record_result plain = moat_dtls_record_scan(data, size, 0, &count);
    size_t strict_count = 0;
    moat_dtls_record_result strict = moat_dtls_record_scan(data, size, GCM_OVERHEAD, &strict_count);
    if (moat_dtls_record_result_name(plain) == NULL)
        abort();
    /* The minimum only ever rejects more. */
    if (strict == MOAT_DTLS_RECORD_OK && (plain != MOAT_DTLS_RECORD_OK || strict_count != count))
        abort();

    size_t offset = 0, walked = 0;
    moat_dtls_record_result last = MOAT_DTLS_RECORD_OK;
    while (offset < size) {
        moat_dtls_record record;
        size_t before = offset;
        last = moat_dtls_record_next(data, size, &offset, &record);
        if (last != MOAT_DTLS_RECORD_OK) {
            if (offset != before)
                abort();
            break;
        }
        if (offset <= before || offset > size)
            abort();
        if (record.fragment < data + MOAT_DTLS_RECORD_HEADER_LENGTH ||
            record.fragment + record.length > data + size ||
            record.length > MOAT_DTLS_RECORD_MAX_LENGTH)
            abort();
        if (record.content_type < 20 || record.content_type > 25)
            abort();
        walked++;
    }
    if (size > 0 && plain != last)
        abort();
    if (plain == MOAT_DTLS_RECORD_OK && (walked != count || count == 0 || offset != size))
        abort();
    return 0;
}

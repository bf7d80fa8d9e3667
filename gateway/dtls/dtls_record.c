/* DTLS record-layer header parsing (RFC 6347 §4.1): walks a datagram's records
 * and checks content type, version and length before OpenSSL sees it, naming
 * the reason for a drop (worker thread, no allocation). */
#include "dtls_record.h"

#define CONTENT_TYPE_FIRST            20 /* change_cipher_spec */
#define CONTENT_TYPE_LAST             25 /* tls12_cid (RFC 9146) */
#define CONTENT_TYPE_APPLICATION_DATA 23
#define VERSION_DTLS_1_0              0xFEFF
#define VERSION_DTLS_1_2              0xFEFD

static uint16_t read_u16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

moat_dtls_record_result moat_dtls_record_next(const uint8_t *datagram, size_t length,
                                              size_t *offset, moat_dtls_record *record)
{
    size_t at = *offset;
    if (at > length || length - at < MOAT_DTLS_RECORD_HEADER_LENGTH)
        return MOAT_DTLS_RECORD_SHORT_HEADER;
    const uint8_t *h = datagram + at;
    if (h[0] < CONTENT_TYPE_FIRST || h[0] > CONTENT_TYPE_LAST)
        return MOAT_DTLS_RECORD_BAD_CONTENT_TYPE;
    uint16_t version = read_u16(h + 1);
    /* A ClientHello may use the 1.0 record version for compatibility
     * (RFC 6347 §4.2.1), so both are accepted here; OpenSSL enforces 1.2. */
    if (version != VERSION_DTLS_1_0 && version != VERSION_DTLS_1_2)
        return MOAT_DTLS_RECORD_BAD_VERSION;
    size_t fragment_length = read_u16(h + 11);
    if (fragment_length > MOAT_DTLS_RECORD_MAX_LENGTH)
        return MOAT_DTLS_RECORD_TOO_LONG;
    size_t available = length - at - MOAT_DTLS_RECORD_HEADER_LENGTH;
    if (fragment_length > available)
        return MOAT_DTLS_RECORD_BAD_LENGTH;

    record->content_type = h[0];
    record->version = version;
    record->epoch = read_u16(h + 3);
    record->sequence = 0;
    for (int i = 5; i < 11; i++)
        record->sequence = (record->sequence << 8) | h[i];
    record->fragment = h + MOAT_DTLS_RECORD_HEADER_LENGTH;
    record->length = fragment_length;
    *offset = at + MOAT_DTLS_RECORD_HEADER_LENGTH + fragment_length;
    return MOAT_DTLS_RECORD_OK;
}

moat_dtls_record_result moat_dtls_record_scan(const uint8_t *datagram, size_t length,
                                              size_t min_protected_length, size_t *record_count)
{
    if (datagram == NULL || length == 0)
        return MOAT_DTLS_RECORD_EMPTY;
    size_t offset = 0, count = 0;
    /* Every record consumes at least the header, so this ends. */
    while (offset < length) {
        moat_dtls_record record;
        moat_dtls_record_result r = moat_dtls_record_next(datagram, length, &offset, &record);
        if (r != MOAT_DTLS_RECORD_OK)
            return r;
        if (record.epoch != 0 && record.length < min_protected_length)
            return MOAT_DTLS_RECORD_SHORT_PROTECTED;
        count++;
    }
    if (record_count != NULL)
        *record_count = count;
    return MOAT_DTLS_RECORD_OK;
}

size_t moat_dtls_record_first_protected(const uint8_t *datagram, size_t length)
{
    size_t offset = 0;
    moat_dtls_record record;
    while (offset < length) {
        size_t at = offset;
        if (moat_dtls_record_next(datagram, length, &offset, &record) != MOAT_DTLS_RECORD_OK)
            break;
        if (record.epoch != 0)
            return at;
    }
    return length;
}

size_t moat_dtls_record_count_unread(const uint8_t *datagram, size_t length, uint16_t read_epoch)
{
    size_t offset = 0, count = 0;
    moat_dtls_record record;
    while (offset < length &&
           moat_dtls_record_next(datagram, length, &offset, &record) == MOAT_DTLS_RECORD_OK)
        count +=
            record.epoch > read_epoch || (read_epoch > 0 && record.epoch == read_epoch &&
                                          record.content_type == CONTENT_TYPE_APPLICATION_DATA);
    return count;
}

const char *moat_dtls_record_result_name(moat_dtls_record_result result)
{
    switch (result) {
    case MOAT_DTLS_RECORD_OK:
        return "ok";
    case MOAT_DTLS_RECORD_EMPTY:
        return "empty";
    case MOAT_DTLS_RECORD_SHORT_HEADER:
        return "short_header";
    case MOAT_DTLS_RECORD_BAD_CONTENT_TYPE:
        return "bad_content_type";
    case MOAT_DTLS_RECORD_BAD_VERSION:
        return "bad_version";
    case MOAT_DTLS_RECORD_BAD_LENGTH:
        return "bad_length";
    case MOAT_DTLS_RECORD_TOO_LONG:
        return "too_long";
    case MOAT_DTLS_RECORD_SHORT_PROTECTED:
        return "short_protected";
    case MOAT_DTLS_RECORD_EARLY_PROTECTED:
        return "early_protected";
    case MOAT_DTLS_RECORD_RESULT_COUNT:
        break;
    }
    return "unknown";
}

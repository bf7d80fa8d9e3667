/* A cheap structural check of DTLS records (RFC 6347 §4.1) run on every
 * datagram before OpenSSL sees it: hostile or stray datagrams are dropped,
 * with a named reason, without touching the TLS state machine. */
#ifndef MOAT_DTLS_RECORD_H
#define MOAT_DTLS_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define MOAT_DTLS_RECORD_HEADER_LENGTH 13
/* RFC 6347 §4.1: a record's length must not exceed 2^14 + 2048. */
#define MOAT_DTLS_RECORD_MAX_LENGTH (16384 + 2048)

/* Also an index into per-reason drop counters. */
typedef enum {
    MOAT_DTLS_RECORD_OK = 0,
    MOAT_DTLS_RECORD_EMPTY,            /* zero-length datagram */
    MOAT_DTLS_RECORD_SHORT_HEADER,     /* fewer than 13 bytes left for a header */
    MOAT_DTLS_RECORD_BAD_CONTENT_TYPE, /* not 20..25 */
    MOAT_DTLS_RECORD_BAD_VERSION,      /* not DTLS 1.0 (0xFEFF) or 1.2 (0xFEFD) */
    MOAT_DTLS_RECORD_BAD_LENGTH,       /* fragment runs past the datagram's end */
    MOAT_DTLS_RECORD_TOO_LONG,         /* fragment longer than 2^14 + 2048 */
    MOAT_DTLS_RECORD_SHORT_PROTECTED,  /* encrypted record shorter than its cipher's overhead */
    /* more encrypted records OpenSSL cannot read yet, while the handshake
     * runs, than any handshake makes it hold (the transport's cap; OpenSSL
     * would buffer each) */
    MOAT_DTLS_RECORD_EARLY_PROTECTED,
    MOAT_DTLS_RECORD_RESULT_COUNT
} moat_dtls_record_result;

typedef struct {
    uint8_t content_type; /* 20 change_cipher_spec .. 25 tls12_cid */
    uint16_t version;     /* on the wire, 0xFEFD for DTLS 1.2 */
    uint16_t epoch;
    uint64_t sequence;       /* 48 bits */
    const uint8_t *fragment; /* points into the datagram */
    size_t length;
} moat_dtls_record;

/* Reads the record at *offset and advances *offset past it. Call while
 * *offset < length. On error *offset and *record are left unchanged. */
moat_dtls_record_result moat_dtls_record_next(const uint8_t *datagram, size_t length,
                                              size_t *offset, moat_dtls_record *record);

/* Checks every record of a datagram; on MOAT_DTLS_RECORD_OK *record_count
 * (if not NULL) is the number of records, which is at least one.
 * min_protected_length applies to records of any epoch but 0, which are
 * encrypted: a legitimate one is never shorter than its cipher's explicit
 * nonce and tag. 0 disables that check. */
/* The offset of the first record of epoch > 0 (encrypted) in a datagram the
 * scan passed; length when it has none. */
size_t moat_dtls_record_first_protected(const uint8_t *datagram, size_t length);

/* The records of a datagram the scan passed that OpenSSL, reading epoch
 * read_epoch of a handshake, cannot read now and may keep until its epoch
 * turns or the handshake ends: those of a later epoch, and once the peer
 * turned to its first encrypted epoch (read_epoch > 0), application data of
 * that epoch (kept between the peer's ChangeCipherSpec and its Finished).
 * With read_epoch 0, every encrypted record. */
size_t moat_dtls_record_count_unread(const uint8_t *datagram, size_t length, uint16_t read_epoch);

moat_dtls_record_result moat_dtls_record_scan(const uint8_t *datagram, size_t length,
                                              size_t min_protected_length, size_t *record_count);

/* Short snake_case name for logs and metric labels ("bad_version"). */
const char *moat_dtls_record_result_name(moat_dtls_record_result result);

#endif

/* A BIO that gives OpenSSL datagram semantics without a socket. Each write
 * OpenSSL makes (with DTLS, one datagram: records packed up to the MTU) is
 * handed at once to a send callback, so flight boundaries survive; a memory
 * BIO would concatenate them. Each read returns one whole datagram that the
 * caller placed before calling into OpenSSL, so records never straddle two
 * datagrams. */
#ifndef MOAT_DTLS_DATAGRAM_BIO_H
#define MOAT_DTLS_DATAGRAM_BIO_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/bio.h>

/* The BIO's view of its owner; lives inside the owner, not the BIO. */
typedef struct {
    void (*send)(void *user, const uint8_t *datagram, size_t length);
    void *user;
    /* Set before an OpenSSL call, consumed by its first read. */
    const uint8_t *incoming;
    size_t incoming_length;
    uint64_t datagrams_sent;
    uint64_t bytes_sent;
} moat_dtls_datagram_link;

/* Made once per DTLS context and shared read-only; NULL on failure. */
BIO_METHOD *moat_dtls_datagram_bio_method_new(void);
void moat_dtls_datagram_bio_method_free(BIO_METHOD *method);

/* The link must outlive the BIO. */
BIO *moat_dtls_datagram_bio_new(const BIO_METHOD *method, moat_dtls_datagram_link *link);

#endif

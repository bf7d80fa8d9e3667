/* The socketless OpenSSL BIO of a DTLS transport: each write goes out as one
 * datagram through the owner's send callback, each read returns the one
 * datagram the caller placed before calling into OpenSSL. */
#include "dtls_datagram_bio.h"

#include <string.h>

static int datagram_write(BIO *bio, const char *data, int length)
{
    moat_dtls_datagram_link *link = BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    if (link == NULL || data == NULL || length < 0)
        return -1;
    if (length > 0) {
        link->send(link->user, (const uint8_t *)data, (size_t)length);
        link->datagrams_sent++;
        link->bytes_sent += (uint64_t)length;
    }
    /* The datagram is on the wire or lost, as with UDP: never a retry. */
    return length;
}

static int datagram_read(BIO *bio, char *out, int size)
{
    moat_dtls_datagram_link *link = BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    if (link == NULL || out == NULL || size < 0)
        return -1;
    if (link->incoming == NULL) {
        BIO_set_retry_read(bio);
        return -1;
    }
    /* Like recv() on UDP, a datagram larger than the buffer is truncated and
     * its rest discarded; OpenSSL's buffer holds any legal record. */
    size_t n = link->incoming_length < (size_t)size ? link->incoming_length : (size_t)size;
    memcpy(out, link->incoming, n);
    link->incoming = NULL;
    link->incoming_length = 0;
    return (int)n;
}

static long datagram_ctrl(BIO *bio, int cmd, long num, void *ptr)
{
    switch (cmd) {
    case BIO_CTRL_FLUSH:
        /* Writes are never buffered here; OpenSSL fails a flight whose
         * flush reports failure. */
        return 1;
    case BIO_CTRL_DGRAM_GET_MTU_OVERHEAD:
        /* The link MTU set on the SSL is the DTLS payload budget already. */
        return 0;
    case BIO_CTRL_PENDING: {
        moat_dtls_datagram_link *link = BIO_get_data(bio);
        return link && link->incoming ? (long)link->incoming_length : 0;
    }
    case BIO_CTRL_WPENDING:
        return 0;
    default:
        /* MTU queries, peer addresses and socket timeouts do not apply. */
        return 0;
    }
}

static int datagram_create(BIO *bio)
{
    BIO_set_init(bio, 1);
    BIO_set_data(bio, NULL);
    return 1;
}

static int datagram_destroy(BIO *bio)
{
    /* The link belongs to the BIO's owner. */
    BIO_set_data(bio, NULL);
    return 1;
}

BIO_METHOD *moat_dtls_datagram_bio_method_new(void)
{
    int index = BIO_get_new_index();
    if (index == -1)
        return NULL;
    BIO_METHOD *m = BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "moat datagram");
    if (m == NULL)
        return NULL;
    if (BIO_meth_set_write(m, datagram_write) != 1 || BIO_meth_set_read(m, datagram_read) != 1 ||
        BIO_meth_set_ctrl(m, datagram_ctrl) != 1 || BIO_meth_set_create(m, datagram_create) != 1 ||
        BIO_meth_set_destroy(m, datagram_destroy) != 1) {
        BIO_meth_free(m);
        return NULL;
    }
    return m;
}

void moat_dtls_datagram_bio_method_free(BIO_METHOD *method)
{
    BIO_meth_free(method);
}

BIO *moat_dtls_datagram_bio_new(const BIO_METHOD *method, moat_dtls_datagram_link *link)
{
    BIO *bio = BIO_new(method);
    if (bio != NULL)
        BIO_set_data(bio, link);
    return bio;
}

/* libFuzzer target for the receive path of a retired DTLS transport
 * (moat_dtls_retired_receive) with fixed keys: the first byte picks the AEAD
 * suite, the rest is one datagram. Beyond not crashing or reading out of
 * bounds, each record is counted at most once and a datagram that ends the
 * association holds an alert record of epoch 1. The seeds are a genuine
 * close_notify, fatal alert and warning alert for each suite under these keys
 * (tests/fuzz/seeds/fuzz_dtls_retired). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtls/dtls_record.h"
#include "dtls/dtls_retired.h"

static void fixed_keys(moat_dtls_retired *r, moat_dtls_aead aead)
{
    memset(r, 0, sizeof *r);
    r->aead = aead;
    for (int i = 0; i < MOAT_DTLS_RETIRED_KEY_MAX; i++)
        r->peer_key[i] = (uint8_t)(i + 1);
    for (int i = 0; i < MOAT_DTLS_RETIRED_IV_MAX; i++)
        r->peer_iv[i] = (uint8_t)(0x40 + i);
}

static int holds_epoch1_alert(const uint8_t *data, size_t size)
{
    size_t offset = 0;
    moat_dtls_record record;
    while (offset < size && moat_dtls_record_next(data, size, &offset, &record) == 0)
        if (record.content_type == 21 && record.epoch == 1)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    moat_dtls_retired r;
    fixed_keys(&r, (moat_dtls_aead)(data[0] % 3));
    const uint8_t *datagram = data + 1;
    size_t length = size - 1;
    uint64_t dropped[MOAT_DTLS_RETIRED_DROP_COUNT] = {0};
    uint8_t description = 0;
    moat_dtls_retired_verdict v =
        moat_dtls_retired_receive(&r, datagram, length, dropped, &description);
    uint64_t total = 0;
    for (int i = 0; i < MOAT_DTLS_RETIRED_DROP_COUNT; i++) {
        total += dropped[i];
        if (moat_dtls_retired_drop_name((moat_dtls_retired_drop)i) == NULL)
            abort();
    }
    /* Every counted record but a trailing fragment took a header. */
    if (total > length / MOAT_DTLS_RECORD_HEADER_LENGTH + 1)
        abort();
    if (v != MOAT_DTLS_RETIRED_DROPPED && !holds_epoch1_alert(datagram, length))
        abort();
    if (v == MOAT_DTLS_RETIRED_CLOSE_NOTIFY && description != 0)
        abort();
    return 0;
}

/* libFuzzer target for the SRTP session wrapper. The first byte picks the
 * profile and whether the rest is unprotected as received SRTP/SRTCP or
 * protected as outgoing RTP/RTCP. Protected packets must unprotect, at the
 * peer's mirrored session, to exactly what went in. Buffers are exactly as
 * large as the documented overhead requires, so ASan sees any overrun. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "srtp/srtp_session.h"

#define MAX_PACKET 2048

static const moat_srtp_profile profiles[] = {
    MOAT_SRTP_PROFILE_AES128_CM_SHA1_80,
    MOAT_SRTP_PROFILE_AES128_CM_SHA1_32,
    MOAT_SRTP_PROFILE_AEAD_AES_128_GCM,
};

static moat_srtp_keying keying(moat_srtp_profile profile, int mirrored)
{
    moat_srtp_keying k;
    memset(&k, 0, sizeof k);
    k.profile = profile;
    k.key_length = moat_srtp_profile_key_length(profile);
    k.salt_length = moat_srtp_profile_salt_length(profile);
    for (size_t i = 0; i < sizeof k.local_key; i++) {
        k.local_key[i] = (uint8_t)(mirrored ? 0xA0 + i : 0x10 + i);
        k.remote_key[i] = (uint8_t)(mirrored ? 0x10 + i : 0xA0 + i);
    }
    for (size_t i = 0; i < sizeof k.local_salt; i++) {
        k.local_salt[i] = (uint8_t)(mirrored ? 0xC0 + i : 0x30 + i);
        k.remote_salt[i] = (uint8_t)(mirrored ? 0x30 + i : 0xC0 + i);
    }
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size - 1 > MAX_PACKET)
        return 0;
    uint8_t selector = data[0];
    moat_srtp_profile profile = profiles[(selector & 0x0f) % 3];
    int rtcp = (selector >> 4) & 1;
    int outgoing = (selector >> 5) & 1;
    const uint8_t *packet = data + 1;
    size_t length = size - 1;

    char error[256];
    moat_srtp_keying ours = keying(profile, 0), theirs = keying(profile, 1);
    moat_srtp_session *us = moat_srtp_session_new(&ours, error, sizeof error);
    moat_srtp_session *peer = moat_srtp_session_new(&theirs, error, sizeof error);
    if (us == NULL || peer == NULL)
        abort();

    if (!outgoing) {
        uint8_t *buf = g_malloc(length ? length : 1);
        memcpy(buf, packet, length);
        size_t n = length;
        int rc =
            rtcp ? moat_srtp_unprotect_rtcp(us, buf, &n) : moat_srtp_unprotect_rtp(us, buf, &n);
        if (rc != MOAT_SRTP_OK && rc != MOAT_SRTP_ERR_AUTH && rc != MOAT_SRTP_ERR_REPLAY &&
            rc != MOAT_SRTP_ERR_OTHER)
            abort();
        if (rc == MOAT_SRTP_OK && n > length)
            abort();
        g_free(buf);
    } else {
        size_t overhead =
            rtcp ? moat_srtp_session_rtcp_overhead(us) : moat_srtp_session_rtp_overhead(us);
        size_t capacity = length + overhead;
        uint8_t *buf = g_malloc(capacity ? capacity : 1);
        memcpy(buf, packet, length);
        size_t n = length;
        int rc = rtcp ? moat_srtp_protect_rtcp(us, buf, &n, capacity)
                      : moat_srtp_protect_rtp(us, buf, &n, capacity);
        if (rc == MOAT_SRTP_OK) {
            if (n != capacity)
                abort();
            int back = rtcp ? moat_srtp_unprotect_rtcp(peer, buf, &n)
                            : moat_srtp_unprotect_rtp(peer, buf, &n);
            /* libsrtp checks some header fields only when receiving. */
            if (back == MOAT_SRTP_OK && (n != length || memcmp(buf, packet, length) != 0))
                abort();
            if (back == MOAT_SRTP_ERR_AUTH || back == MOAT_SRTP_ERR_REPLAY)
                abort();
        }
        g_free(buf);
    }
    moat_srtp_session_free(us);
    moat_srtp_session_free(peer);
    return 0;
}

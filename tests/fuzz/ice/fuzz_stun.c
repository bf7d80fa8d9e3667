/* libFuzzer target for everything the ICE code does with a STUN datagram
 * from the network: classification, USERNAME routing, the MESSAGE-INTEGRITY
 * check sessions run first (stun_integrity.c), and the full connectivity
 * check (libnice validation included) with fixed credentials, with the peer
 * seen as IPv4 and as v4-mapped IPv6.
 *
 * A fuzzer cannot forge HMAC-SHA1, so each input is also checked a second
 * time after re-signing it with the fixed password (MESSAGE-INTEGRITY and a
 * trailing FINGERPRINT recomputed): that reaches the code behind
 * authentication (ICE attributes, role conflict, reply building) with
 * arbitrary attributes. */
#include "ice/ice_checker.h"
#include "ice/stun_attributes.h"
#include "ice/stun_classify.h"
#include "ice/stun_integrity.h"
#include "ice/stun_username.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#define FUZZ_LOCAL_UFRAG  "Lk9fQm2x"
#define FUZZ_LOCAL_PWD    "p4ssw0rdP4SSW0RDpassw0rd"
#define FUZZ_REMOTE_UFRAG "rEmO"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static moat_ice_checker *checker(void)
{
    /* A fuzzer process is one worker: one checker for all inputs. */
    static moat_ice_checker *c;
    if (c == NULL) {
        c = moat_ice_checker_new();
        if (c == NULL)
            abort();
    }
    return c;
}

static moat_stun_integrity *integrity_key(void)
{
    static moat_stun_integrity *key;
    if (key == NULL) {
        key = moat_stun_integrity_new(FUZZ_LOCAL_PWD);
        if (key == NULL)
            abort();
    }
    return key;
}

static uint32_t crc32_of(const uint8_t *data, size_t length)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < length; i++) {
        crc ^= data[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* RFC 8489 §14.5/§14.7 over the first 20-byte MESSAGE-INTEGRITY, and the
 * FINGERPRINT if it directly follows and ends the message. Returns false if
 * the input has nothing to sign. */
static bool resign(uint8_t *m, size_t size)
{
    if (moat_stun_classify(m, size) != MOAT_STUN_BINDING_REQUEST)
        return false;
    moat_stun_attribute_iter it;
    moat_stun_attribute attribute;
    moat_stun_attribute_iter_init(&it, m, size);
    while (moat_stun_attribute_next(&it, &attribute) == 1) {
        if (attribute.type != MOAT_STUN_ATTR_MESSAGE_INTEGRITY || attribute.length != 20)
            continue;
        size_t at = (size_t)(attribute.value - m) - 4;
        uint8_t saved[2] = {m[2], m[3]};
        m[2] = (uint8_t)((at + 4) >> 8);
        m[3] = (uint8_t)(at + 4);
        unsigned int mac_length = 0;
        HMAC(EVP_sha1(), FUZZ_LOCAL_PWD, (int)strlen(FUZZ_LOCAL_PWD), m, at, m + at + 4,
             &mac_length);
        m[2] = saved[0];
        m[3] = saved[1];
        size_t fp = at + 24;
        if (fp + 8 == size && m[fp] == 0x80 && m[fp + 1] == 0x28 && m[fp + 2] == 0 &&
            m[fp + 3] == 4)
            put32(m + fp + 4, crc32_of(m, fp) ^ 0x5354554Eu);
        return true;
    }
    return false;
}

static void check_reply(moat_ice_check_result r, const uint8_t *reply, size_t reply_length)
{
    bool may_reply = r == MOAT_ICE_CHECK_OK || r == MOAT_ICE_CHECK_ROLE_CONFLICT;
    if (!may_reply && reply_length != 0)
        abort();
    if (may_reply && (reply_length < 20 || reply_length > MOAT_ICE_REPLY_CAPACITY ||
                      moat_stun_classify(reply, reply_length) != MOAT_STUN_BINDING_RESPONSE))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size heap copy, so that ASan flags any read past the end. */
    uint8_t *copy = malloc(size > 0 ? size : 1);
    if (copy == NULL)
        return 0;
    if (size > 0)
        memcpy(copy, data, size);

    moat_stun_kind kind = moat_stun_classify(copy, size);
    (void)moat_stun_kind_name(kind);

    moat_stun_attribute_iter it;
    moat_stun_attribute attribute;
    moat_stun_attribute_iter_init(&it, copy, size);
    if (kind != MOAT_STUN_NOT_STUN && kind != MOAT_STUN_MALFORMED) {
        while (moat_stun_attribute_next(&it, &attribute) == 1) {
            if (attribute.value + attribute.length > copy + size)
                abort();
        }
    }

    char ufrag[MOAT_ICE_MAX_UFRAG_LENGTH + 1];
    if (moat_stun_local_ufrag(copy, size, ufrag, sizeof ufrag) == 0 && strlen(ufrag) == 0)
        abort();

    uint8_t reply[MOAT_ICE_REPLY_CAPACITY];
    moat_ice_check_info info;
    struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = htons(40000)};
    v4.sin_addr.s_addr = htonl(0xC6336407u); /* 198.51.100.7 */
    struct sockaddr_in6 mapped = {.sin6_family = AF_INET6, .sin6_port = htons(5000)};
    inet_pton(AF_INET6, "::ffff:127.0.0.1", &mapped.sin6_addr);

    size_t reply_length = sizeof reply;
    moat_ice_check_result r = moat_ice_checker_handle_request(
        checker(), copy, size, FUZZ_LOCAL_UFRAG, FUZZ_LOCAL_PWD, FUZZ_REMOTE_UFRAG,
        (const struct sockaddr *)&v4, sizeof v4, reply, &reply_length, &info);
    check_reply(r, reply, reply_length);
    (void)moat_ice_check_result_name(r);

    reply_length = sizeof reply;
    r = moat_ice_checker_handle_request(checker(), copy, size, FUZZ_LOCAL_UFRAG, FUZZ_LOCAL_PWD,
                                        NULL, (const struct sockaddr *)&mapped, sizeof mapped,
                                        reply, &reply_length, &info);
    check_reply(r, reply, reply_length);

    if (size >= MOAT_STUN_HEADER_LENGTH)
        (void)moat_stun_integrity_verify(integrity_key(), copy, size);

    if (resign(copy, size)) {
        reply_length = sizeof reply;
        r = moat_ice_checker_handle_request(checker(), copy, size, FUZZ_LOCAL_UFRAG, FUZZ_LOCAL_PWD,
                                            NULL, (const struct sockaddr *)&v4, sizeof v4, reply,
                                            &reply_length, &info);
        check_reply(r, reply, reply_length);
        /* Sessions refuse before libnice what this check refuses: it must
         * pass everything libnice authenticates. */
        if ((r == MOAT_ICE_CHECK_OK || r == MOAT_ICE_CHECK_ROLE_CONFLICT) &&
            moat_stun_integrity_verify(integrity_key(), copy, size) != MOAT_STUN_INTEGRITY_OK)
            abort();
    }

    free(copy);
    return 0;
}

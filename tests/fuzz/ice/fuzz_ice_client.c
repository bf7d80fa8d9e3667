/* libFuzzer target for the controlling side's response checker
 * (ice/ice_client.h): whatever comes back to a check, from the endpoint or
 * anyone on the path. Each input gets the transaction ID of a request the
 * client is waiting for, so matching succeeds and libnice's validation and
 * the XOR-MAPPED-ADDRESS and ERROR-CODE readers see it; it is tried once as
 * is and once re-signed with the peer's password (a fuzzer cannot forge
 * HMAC-SHA1), which reaches the code behind authentication. */
#include "ice/ice_client.h"
#include "ice/stun_attributes.h"
#include "ice/stun_classify.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#define SERVER_PWD "p4ssw0rdP4SSW0RDpassw0rd"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

/* MESSAGE-INTEGRITY (the first 20-octet one) and a FINGERPRINT that
 * directly follows it and ends the message, recomputed as RFC 8489 §14.5 and
 * §14.7 say. False when there is nothing to sign. */
static bool resign(uint8_t *m, size_t size)
{
    if (moat_stun_classify(m, size) != MOAT_STUN_BINDING_RESPONSE)
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
        HMAC(EVP_sha1(), SERVER_PWD, (int)strlen(SERVER_PWD), m, at, m + at + 4, &mac_length);
        m[2] = saved[0];
        m[3] = saved[1];
        size_t fp = at + 24;
        if (fp + 8 == size && m[fp] == 0x80 && m[fp + 1] == 0x28 && m[fp + 2] == 0 &&
            m[fp + 3] == 4) {
            uint32_t crc = crc32_of(m, fp) ^ 0x5354554Eu;
            m[fp + 4] = (uint8_t)(crc >> 24);
            m[fp + 5] = (uint8_t)(crc >> 16);
            m[fp + 6] = (uint8_t)(crc >> 8);
            m[fp + 7] = (uint8_t)crc;
        }
        return true;
    }
    return false;
}

/* A client with one request outstanding; its transaction ID goes into id. */
static moat_ice_client *waiting_client(uint8_t id[12])
{
    moat_ice_client_credentials credentials = {
        .local_ufrag = "cLiE",
        .local_pwd = "clientpasswordclientpass",
        .remote_ufrag = "Lk9fQm2x",
        .remote_pwd = SERVER_PWD,
        .tie_breaker = 1,
    };
    moat_ice_client *client = moat_ice_client_new(&credentials);
    if (client == NULL)
        abort();
    uint8_t request[MOAT_ICE_CLIENT_REQUEST_CAPACITY];
    if (moat_ice_client_build_request(client, 1, true, true, request, sizeof request) < 20)
        abort();
    memcpy(id, request + 8, 12);
    return client;
}

static void check(uint8_t *copy, size_t size)
{
    uint8_t id[12];
    moat_ice_client *client = waiting_client(id);
    if (size >= 20)
        memcpy(copy + 8, id, 12);
    struct sockaddr_storage mapped;
    socklen_t mapped_length = sizeof mapped;
    moat_ice_response_result r =
        moat_ice_client_handle_response(client, copy, size, &mapped, &mapped_length);
    if (r == MOAT_ICE_RESPONSE_SUCCESS && mapped.ss_family != AF_INET &&
        mapped.ss_family != AF_INET6)
        abort();
    (void)moat_ice_response_result_name(r);
    if (size >= 20 && resign(copy, size)) {
        mapped_length = sizeof mapped;
        (void)moat_ice_client_handle_response(client, copy, size, &mapped, &mapped_length);
    }
    moat_ice_client_free(client);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size heap copy, so that ASan flags any read past the end. */
    uint8_t *copy = malloc(size > 0 ? size : 1);
    if (copy == NULL)
        return 0;
    if (size > 0)
        memcpy(copy, data, size);
    check(copy, size);
    free(copy);
    return 0;
}

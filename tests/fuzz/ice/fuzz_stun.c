/* libFuzzer target for everything the ICE code does with a STUN datagram
 * from the network: classification, USERNAME routing, and the full
 * connectivity check (libnice validation included) with fixed credentials,
 * with the peer seen as IPv4 and as v4-mapped IPv6. */
#include "ice/ice_checker.h"
#include "ice/stun_attributes.h"
#include "ice/stun_classify.h"
#include "ice/stun_username.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

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

    free(copy);
    return 0;
}

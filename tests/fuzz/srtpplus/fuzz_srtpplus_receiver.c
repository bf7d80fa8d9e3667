/* libFuzzer target for the SRTP+ receiver: every packet-facing call (check, confirm,
 * the chain block parser) on attacker-chosen bytes, in attacker-chosen order, under
 * every scheme and profile. The input is a configuration octet and then records
 * op (1) || length (1) || bytes. */
#include "srtpplus.h"
#include "srtpplus_byteorder.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t master_key[16] = {0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78,
                                       0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0};
static const uint8_t master_salt[14] = {1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 121};

enum op {
    OP_CHECK_RTP,
    OP_CHECK_THEN_CONFIRM_RTP,
    OP_CONFIRM_RTP,
    OP_CHECK_RTCP,
    OP_CONFIRM_RTCP,
    OP_MAINTAIN,
    OP_ADD_SSRC,
    OP_REMOVE_SSRC,
    OP_BUDGET,
    OP_CHAIN_PARSE,
    OP_COUNT,
};

static struct srtpplus_receiver *receiver_for(uint8_t config, struct srtpplus_chain_params *chain)
{
    enum srtpplus_profile profiles[] = {SRTPPLUS_PROFILE_AES128_CM_SHA1_80,
                                        SRTPPLUS_PROFILE_AES128_CM_SHA1_32,
                                        SRTPPLUS_PROFILE_AEAD_AES_128_GCM};
    enum srtpplus_profile profile = profiles[(config & 3) % 3];
    struct srtpplus_receiver_config cfg;
    srtpplus_receiver_config_init(&cfg, config & 4 ? SRTPPLUS_SCHEME_CHAIN : SRTPPLUS_SCHEME_PRN,
                                  profile);
    /* Small windows and depths too, so edges are reached with short inputs. */
    static const uint8_t depths[] = {1, 2, 4, 32};
    cfg.chain.depth = depths[(config >> 3) & 3];
    cfg.chain.copies = (uint8_t)(1 + ((config >> 5) & 3));
    if (cfg.chain.copies > cfg.chain.depth)
        cfg.chain.copies = cfg.chain.depth;
    if (config & 0x80) {
        cfg.window_behind = 16;
        cfg.window_ahead = 64;
    }
    *chain = cfg.chain;
    struct srtpplus_profile_sizes sizes;
    srtpplus_profile_sizes(profile, &sizes);
    struct srtpplus_receiver *rx = NULL;
    if (srtpplus_receiver_new(&cfg, master_key, sizes.master_key_len, master_salt,
                              sizes.master_salt_len, &rx) != SRTPPLUS_OK)
        abort();
    srtpplus_receiver_add_ssrc(rx, 0x5eed0001, 0);
    srtpplus_receiver_add_ssrc(rx, 0x5eed0002, 1);
    return rx;
}

/* The record's bytes in a buffer of exactly their size, so any read past the end is
 * caught by AddressSanitizer. */
static uint8_t *exact_copy(const uint8_t *data, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    if (!p)
        abort();
    if (len)
        memcpy(p, data, len);
    return p;
}

static uint64_t read_u64(const uint8_t *p, size_t len)
{
    uint64_t v = 0;
    for (size_t i = 0; i < len && i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static void confirm_rtp(struct srtpplus_receiver *rx, uint8_t *packet, size_t len, uint64_t index)
{
    size_t n = len;
    enum srtpplus_confirm c = srtpplus_receiver_confirm_rtp(rx, packet, &n, index);
    if (n > len || c >= SRTPPLUS_CONFIRM_COUNT)
        abort();
}

static void run_record(struct srtpplus_receiver *rx, const struct srtpplus_chain_params *chain,
                       enum op op, const uint8_t *data, size_t len, uint64_t *now)
{
    uint8_t *packet = exact_copy(data, len);
    struct srtpplus_check chk;
    *now += 7000000; /* 7 ms per record, so the budget refills now and then */
    switch (op) {
    case OP_CHECK_RTP:
    case OP_CHECK_THEN_CONFIRM_RTP: {
        enum srtpplus_verdict v = srtpplus_receiver_check_rtp(rx, packet, len, len & 1, *now, &chk);
        if (v >= SRTPPLUS_VERDICT_COUNT || (v != SRTPPLUS_DROP_MALFORMED && chk.len + 4 != len))
            abort();
        if (op == OP_CHECK_THEN_CONFIRM_RTP && !srtpplus_verdict_is_drop(v))
            confirm_rtp(rx, packet, chk.len, chk.index);
        break;
    }
    case OP_CONFIRM_RTP:
        /* Mostly an index that matches the sequence number, with a ROC from the bytes
         * after it, so confirm gets past its consistency check. */
        confirm_rtp(rx, packet, len,
                    len >= 8 ? (uint64_t)srtpplus_load_be16(data + 4) << 16 |
                                   srtpplus_load_be16(data + 2)
                             : read_u64(data, len));
        break;
    case OP_CHECK_RTCP: {
        enum srtpplus_verdict v =
            srtpplus_receiver_check_rtcp(rx, packet, len, len & 1, *now, &chk);
        if (v >= SRTPPLUS_VERDICT_COUNT)
            abort();
        if (!srtpplus_verdict_is_drop(v) && (len & 2))
            srtpplus_receiver_confirm_rtcp(rx, chk.ssrc, chk.index);
        break;
    }
    case OP_CONFIRM_RTCP:
        srtpplus_receiver_confirm_rtcp(rx, len >= 4 ? srtpplus_load_be32(data) : 0x5eed0001,
                                       read_u64(data + (len >= 4 ? 4 : 0), len >= 4 ? len - 4 : 0));
        break;
    case OP_MAINTAIN:
        srtpplus_receiver_maintain(rx);
        break;
    case OP_ADD_SSRC:
        srtpplus_receiver_add_ssrc(rx, len >= 4 ? srtpplus_load_be32(data) : (uint32_t)len,
                                   len >= 8 ? srtpplus_load_be32(data + 4) : 0);
        break;
    case OP_REMOVE_SSRC:
        srtpplus_receiver_remove_ssrc(rx, len >= 4 ? srtpplus_load_be32(data) : 0x5eed0001);
        break;
    case OP_BUDGET:
        srtpplus_receiver_set_budget(rx, len >= 2 ? srtpplus_load_be16(data) : 0,
                                     len >= 3 ? data[2] : 1);
        break;
    case OP_CHAIN_PARSE: {
        struct srtpplus_chain_block block = {0};
        if (srtpplus_chain_parse(packet, len, chain, &block) == SRTPPLUS_OK) {
            size_t n = len;
            srtpplus_chain_strip(packet, &n, &block);
            if (n >= len || n < 12 || block.copies != chain->copies)
                abort();
        }
        break;
    }
    default:
        break;
    }
    free(packet);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct srtpplus_chain_params chain;
    struct srtpplus_receiver *rx = receiver_for(data[0], &chain);
    uint64_t now = 0;
    size_t pos = 1;
    while (pos + 2 <= size) {
        enum op op = (enum op)(data[pos] % OP_COUNT);
        size_t len = data[pos + 1];
        pos += 2;
        if (len > size - pos)
            len = size - pos;
        run_record(rx, &chain, op, data + pos, len, &now);
        pos += len;
    }
    srtpplus_receiver_free(rx);
    return 0;
}

/* The SRTP+ bench's fixture, built before any timing: libsrtp sessions, SRTP+
 * senders and primed receivers, legitimate streams at each stage of protection,
 * and forged packets. */
#include "bench_srtpplus_fixture.h"
#include "srtpplus_byteorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_SSRC      0x5eed0001u
#define BENCH_FIRST_SEQ 1000
#define STREAM_LEN      (BENCH_WARMUP + BENCH_PACKETS)

_Noreturn void bench_fail(const char *what)
{
    fprintf(stderr, "bench-srtpplus: %s\n", what);
    exit(1);
}

static struct bench_packet *packets_new(size_t count)
{
    struct bench_packet *p = calloc(count, sizeof(*p));
    if (!p)
        bench_fail("out of memory");
    return p;
}

/* A fixed xorshift sequence: forged packets are the same in every run. */
static uint32_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (uint32_t)(*state >> 16);
}

srtp_t bench_session(const struct bench_fixture *b)
{
    srtp_policy_t policy;
    memset(&policy, 0, sizeof(policy));
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtp);
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtcp);
    uint8_t key[30];
    memcpy(key, b->key, 16);
    memcpy(key + 16, b->salt, 14);
    policy.key = key;
    policy.ssrc.type = ssrc_specific;
    policy.ssrc.value = BENCH_SSRC;
    srtp_t srtp;
    if (srtp_create(&srtp, &policy) != srtp_err_status_ok)
        bench_fail("srtp_create failed");
    return srtp;
}

struct srtpplus_receiver *bench_receiver(const struct bench_fixture *b, enum srtpplus_scheme scheme)
{
    struct srtpplus_receiver_config cfg;
    srtpplus_receiver_config_init(&cfg, scheme, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    cfg.chain = (struct srtpplus_chain_params){BENCH_CHAIN_DEPTH, BENCH_CHAIN_COPIES};
    /* No budget: a packet that would need one is dropped, so a legitimate packet that
     * was not verified by its tag shows up as a failure. */
    cfg.budget_rate = 0;
    struct srtpplus_receiver *rx;
    if (srtpplus_receiver_new(&cfg, b->key, 16, b->salt, 14, &rx) != SRTPPLUS_OK ||
        srtpplus_receiver_add_ssrc(rx, BENCH_SSRC, 0) != SRTPPLUS_OK)
        bench_fail("srtpplus_receiver_new failed");
    return rx;
}

struct srtpplus_sender *bench_sender(const struct bench_fixture *b, enum srtpplus_scheme scheme)
{
    struct srtpplus_sender_config cfg;
    srtpplus_sender_config_init(&cfg, scheme, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    cfg.chain = (struct srtpplus_chain_params){BENCH_CHAIN_DEPTH, BENCH_CHAIN_COPIES};
    struct srtpplus_sender *tx;
    if (srtpplus_sender_new(&cfg, b->key, 16, b->salt, 14, &tx) != SRTPPLUS_OK)
        bench_fail("srtpplus_sender_new failed");
    return tx;
}

void bench_protect(srtp_t srtp, struct bench_packet *packet)
{
    int len = (int)packet->len;
    if (srtp_protect(srtp, packet->data, &len) != srtp_err_status_ok)
        bench_fail("srtp_protect failed");
    packet->len = (size_t)len;
}

void bench_unprotect(srtp_t srtp, struct bench_packet *packet)
{
    int len = (int)packet->len;
    if (srtp_unprotect(srtp, packet->data, &len) != srtp_err_status_ok)
        bench_fail("srtp_unprotect rejected a legitimate packet");
    packet->len = (size_t)len;
}

void bench_copy_packets(struct bench_packet *to, const struct bench_packet *from, size_t count)
{
    memcpy(to, from, count * sizeof(*to));
}

static void g711_packet(struct bench_packet *p, uint16_t seq)
{
    memset(p, 0, sizeof(*p));
    p->data[0] = 0x80;
    p->data[1] = 0; /* PCMU */
    p->data[2] = (uint8_t)(seq >> 8);
    p->data[3] = (uint8_t)seq;
    srtpplus_store_be32(p->data + 4, (uint32_t)seq * 160);
    srtpplus_store_be32(p->data + 8, BENCH_SSRC);
    for (size_t i = 0; i < 160; i++)
        p->data[12 + i] = (uint8_t)(0xd5 ^ (seq + i));
    p->len = 172;
}

static void build_stream(struct bench_fixture *b, struct bench_stream *s,
                         enum srtpplus_scheme scheme)
{
    s->scheme = scheme;
    s->plain_before_protect = packets_new(STREAM_LEN);
    s->srtp = packets_new(STREAM_LEN);
    s->wire = packets_new(STREAM_LEN);
    s->plain_after_protect = packets_new(STREAM_LEN);
    struct srtpplus_sender *tx = bench_sender(b, scheme);
    srtp_t srtp = bench_session(b);
    for (size_t i = 0; i < STREAM_LEN; i++) {
        struct bench_packet p = b->plain[i];
        if (srtpplus_sender_prepare_rtp(tx, p.data, &p.len, sizeof(p.data)) != SRTPPLUS_OK)
            bench_fail("prepare failed");
        s->plain_before_protect[i] = p;
        s->plain_after_protect[i] = p;
        bench_protect(srtp, &p);
        s->srtp[i] = p;
        if (srtpplus_sender_append_tag_rtp(tx, p.data, &p.len, sizeof(p.data)) != SRTPPLUS_OK)
            bench_fail("append tag failed");
        s->wire[i] = p;
    }
    srtp_dealloc(srtp);
    srtpplus_sender_free(tx);
}

/* A receiver that has authenticated the whole stream, its window refilled. */
static struct srtpplus_receiver *primed_receiver(struct bench_fixture *b,
                                                 const struct bench_stream *s)
{
    struct srtpplus_receiver *rx = bench_receiver(b, s->scheme);
    srtp_t srtp = bench_session(b);
    for (size_t i = 0; i < STREAM_LEN; i++) {
        struct bench_packet p = s->wire[i];
        struct srtpplus_check chk;
        if (srtpplus_receiver_check_rtp(rx, p.data, p.len, true, 0, &chk) != SRTPPLUS_PASS)
            bench_fail("legitimate packet not passed");
        p.len = chk.len;
        bench_unprotect(srtp, &p);
        if (srtpplus_receiver_confirm_rtp(rx, p.data, &p.len, chk.index) != SRTPPLUS_CONFIRMED)
            bench_fail("legitimate packet not confirmed");
        srtpplus_receiver_maintain(rx);
    }
    srtp_dealloc(srtp);
    return rx;
}

/* Forged copies of a legitimate packet: sequence numbers from base + offset over span,
 * random payload, SRTP tag and (with_tag) SRTP+ tag. */
static void forge(struct bench_packet *out, const struct bench_packet *model, bool with_tag,
                  uint64_t base, uint32_t span, uint64_t seed)
{
    uint64_t state = seed;
    for (size_t i = 0; i < BENCH_FORGED; i++) {
        struct bench_packet *p = &out[i];
        *p = *model;
        if (!with_tag)
            p->len -= SRTPPLUS_TAG_LEN;
        uint16_t seq = (uint16_t)(base + next_random(&state) % span);
        p->data[2] = (uint8_t)(seq >> 8);
        p->data[3] = (uint8_t)seq;
        for (size_t j = 12; j + 4 <= p->len; j += 4)
            srtpplus_store_be32(p->data + j, next_random(&state));
        srtpplus_store_be32(p->data + p->len - 4, next_random(&state));
    }
}

struct bench_fixture *bench_fixture_new(void)
{
    if (srtp_init() != srtp_err_status_ok)
        bench_fail("srtp_init failed");
    struct bench_fixture *b = calloc(1, sizeof(*b));
    if (!b)
        bench_fail("out of memory");
    for (int i = 0; i < 16; i++)
        b->key[i] = (uint8_t)(0x11 * i + 3);
    for (int i = 0; i < 14; i++)
        b->salt[i] = (uint8_t)(0x07 * i + 1);
    b->plain = packets_new(STREAM_LEN);
    for (size_t i = 0; i < STREAM_LEN; i++)
        g711_packet(&b->plain[i], (uint16_t)(BENCH_FIRST_SEQ + i));
    b->work = packets_new(STREAM_LEN);
    build_stream(b, &b->prn, SRTPPLUS_SCHEME_PRN);
    build_stream(b, &b->chain, SRTPPLUS_SCHEME_CHAIN);
    b->prn_rx = primed_receiver(b, &b->prn);
    b->chain_rx = primed_receiver(b, &b->chain);

    uint64_t warm_highest = BENCH_FIRST_SEQ + BENCH_WARMUP - 1;
    uint64_t highest = BENCH_FIRST_SEQ + STREAM_LEN - 1;
    b->forged_srtp = packets_new(BENCH_FORGED);
    b->forged_prn = packets_new(BENCH_FORGED);
    b->forged_chain = packets_new(BENCH_FORGED);
    b->forged_chain_unlearned = packets_new(BENCH_FORGED);
    /* libsrtp: indexes ahead of the highest, which its replay check lets through to the
     * HMAC, as a flood that wants to cost the most does. */
    forge(b->forged_srtp, &b->prn.wire[0], false, warm_highest + 1, 4000, 1);
    /* prn: anywhere in the plausibility window. */
    forge(b->forged_prn, &b->prn.wire[0], true, highest - 1000, 5000, 2);
    /* chain: indexes whose tags are learned (1000 behind to D ahead) ... */
    forge(b->forged_chain, &b->chain.wire[0], true, highest - 1000, 1000 + BENCH_CHAIN_DEPTH, 3);
    /* ... and ahead of them, where no tag is known and only the budget could pass one. */
    forge(b->forged_chain_unlearned, &b->chain.wire[0], true, highest + BENCH_CHAIN_DEPTH + 1, 4000,
          4);
    return b;
}

static void stream_free(struct bench_stream *s)
{
    free(s->plain_before_protect);
    free(s->srtp);
    free(s->wire);
    free(s->plain_after_protect);
}

void bench_fixture_free(struct bench_fixture *b)
{
    srtpplus_receiver_free(b->prn_rx);
    srtpplus_receiver_free(b->chain_rx);
    stream_free(&b->prn);
    stream_free(&b->chain);
    free(b->plain);
    free(b->work);
    free(b->forged_srtp);
    free(b->forged_prn);
    free(b->forged_chain);
    free(b->forged_chain_unlearned);
    free(b);
    srtp_shutdown();
}

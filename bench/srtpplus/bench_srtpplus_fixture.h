/* Packets, sessions and primed receivers the SRTP+ bench measures with, built once
 * before any timing so that every timed loop does nothing but the work it names. */
#ifndef BENCH_SRTPPLUS_FIXTURE_H
#define BENCH_SRTPPLUS_FIXTURE_H

#include <srtp2/srtp.h>
#include <stddef.h>
#include <stdint.h>

#include "srtpplus.h"

#define BENCH_PACKETS         8192 /* timed legitimate packets per measurement */
#define BENCH_WARMUP          256  /* untimed packets that bring state to steady */
#define BENCH_FORGED          64   /* one recvmmsg batch, hot in cache */
#define BENCH_PACKET_CAPACITY 256
#define BENCH_CHAIN_DEPTH     SRTPPLUS_CHAIN_DEFAULT_DEPTH
#define BENCH_CHAIN_COPIES    SRTPPLUS_CHAIN_DEFAULT_COPIES

struct bench_packet {
    uint8_t data[BENCH_PACKET_CAPACITY];
    size_t len;
};

/* One legitimate stream of BENCH_WARMUP + BENCH_PACKETS packets under one scheme. */
struct bench_stream {
    enum srtpplus_scheme scheme;
    struct bench_packet *plain_before_protect; /* after srtpplus_sender_prepare_rtp */
    struct bench_packet *srtp;                 /* after srtp_protect, no SRTP+ tag */
    struct bench_packet *wire;                 /* with the SRTP+ tag */
    struct bench_packet *plain_after_protect;  /* what srtp_unprotect gives back */
};

struct bench_fixture {
    uint8_t key[16];
    uint8_t salt[14];
    struct bench_packet *plain; /* the 172-octet G.711 packets */
    struct bench_stream prn, chain;
    struct bench_packet *work; /* scratch the timed loops consume */
    struct bench_packet *forged_srtp;
    struct bench_packet *forged_prn;
    struct bench_packet *forged_chain;
    struct bench_packet *forged_chain_unlearned;
    /* Receivers that have seen the whole legitimate stream, for the forged floods. */
    struct srtpplus_receiver *prn_rx, *chain_rx;
};

struct bench_fixture *bench_fixture_new(void);
void bench_fixture_free(struct bench_fixture *b);

/* A libsrtp session for the bench SSRC (either direction). */
srtp_t bench_session(const struct bench_fixture *b);
struct srtpplus_receiver *bench_receiver(const struct bench_fixture *b,
                                         enum srtpplus_scheme scheme);
struct srtpplus_sender *bench_sender(const struct bench_fixture *b, enum srtpplus_scheme scheme);

void bench_protect(srtp_t srtp, struct bench_packet *packet);
void bench_unprotect(srtp_t srtp, struct bench_packet *packet);
void bench_copy_packets(struct bench_packet *to, const struct bench_packet *from, size_t count);

_Noreturn void bench_fail(const char *what);

#endif

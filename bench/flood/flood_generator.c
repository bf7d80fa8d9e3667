/* The flood bench's sender on one socket: forged SRTP at the highest rate
 * sendmmsg allows beside a legitimate 50 packet/s stream protected with the
 * session's real keys (and SRTP+), and paced or burst variants. */
#include "flood_generator.h"

#include "srtp/srtp_session.h"
#include "srtpplus.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define BATCH             64
#define LEGIT_INTERVAL_NS 20000000ull
#define LEGIT_SIZE        172
#define WARMUP_NS         1000000000ull

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Forged packets: the right SSRC, random sequence, timestamp, payload and
 * authentication tag (an off-path attacker that learned the SSRC). */
static void forge(uint8_t *packet, size_t size, uint32_t ssrc)
{
    RAND_bytes(packet, (int)size);
    packet[0] = 0x80;
    packet[1] = 0; /* PCMU */
    packet[8] = (uint8_t)(ssrc >> 24);
    packet[9] = (uint8_t)(ssrc >> 16);
    packet[10] = (uint8_t)(ssrc >> 8);
    packet[11] = (uint8_t)ssrc;
}

/* Sends one batch of forgeries. Fresh ones every few batches keep the cost
 * of RAND_bytes off the attack rate without resending identical packets
 * forever; between them, sequence numbers move. */
static void send_forged_batch(flood_generator *g, uint8_t (*packets)[2048], struct mmsghdr *headers,
                              int count, uint64_t round)
{
    if (round % 16 == 0) {
        for (int i = 0; i < count; i++)
            forge(packets[i], g->forged_size, g->ssrc);
    } else {
        for (int i = 0; i < count; i++) {
            packets[i][2] ^= (uint8_t)(round + 1);
            packets[i][3] += 1;
        }
    }
    int n = sendmmsg(g->fd, headers, (unsigned)count, 0);
    if (n > 0)
        g->forged_sent += (uint64_t)n;
}

static int send_legit(flood_generator *g, moat_srtp_session *srtp, uint16_t sequence)
{
    uint8_t packet[512] = {0x80, 0};
    packet[2] = (uint8_t)(sequence >> 8);
    packet[3] = (uint8_t)sequence;
    uint32_t timestamp = (uint32_t)sequence * 160u;
    memcpy(packet + 4, &timestamp, 4);
    packet[8] = (uint8_t)(g->ssrc >> 24);
    packet[9] = (uint8_t)(g->ssrc >> 16);
    packet[10] = (uint8_t)(g->ssrc >> 8);
    packet[11] = (uint8_t)g->ssrc;
    memset(packet + 12, 0xd5, LEGIT_SIZE - 12);
    size_t length = LEGIT_SIZE;
    if (g->srtpplus && srtpplus_sender_prepare_rtp(g->srtpplus, packet, &length, sizeof packet))
        return -1;
    if (moat_srtp_protect_rtp(srtp, packet, &length, sizeof packet) != MOAT_SRTP_OK)
        return -1;
    if (g->srtpplus &&
        srtpplus_sender_append_tag_rtp(g->srtpplus, packet, &length, sizeof packet) != 0)
        return -1;
    if (send(g->fd, packet, length, 0) == (ssize_t)length)
        g->legit_sent++;
    return 0;
}

int flood_generator_run(flood_generator *g)
{
    /* Our outbound key is the gateway's inbound one: swap the halves. */
    moat_srtp_keying mine = *g->keys;
    memcpy(mine.local_key, g->keys->remote_key, sizeof mine.local_key);
    memcpy(mine.local_salt, g->keys->remote_salt, sizeof mine.local_salt);
    memcpy(mine.remote_key, g->keys->local_key, sizeof mine.remote_key);
    memcpy(mine.remote_salt, g->keys->local_salt, sizeof mine.remote_salt);
    char error[128];
    moat_srtp_session *srtp = moat_srtp_session_new(&mine, error, sizeof error);
    if (!srtp) {
        fprintf(stderr, "generator: %s\n", error);
        return -1;
    }
    static uint8_t packets[BATCH][2048];
    struct mmsghdr headers[BATCH];
    struct iovec vectors[BATCH];
    memset(headers, 0, sizeof headers);
    for (int i = 0; i < BATCH; i++) {
        vectors[i].iov_base = packets[i];
        vectors[i].iov_len = g->forged_size;
        headers[i].msg_hdr.msg_iov = &vectors[i];
        headers[i].msg_hdr.msg_iovlen = 1;
    }
    uint16_t sequence = g->next_sequence ? g->next_sequence : 1;
    /* The call runs alone for a second first, so the gateway learns its
     * rate as it would for any call that was up before an attack. */
    uint64_t warmup_end = now_ns() + WARMUP_NS;
    for (uint64_t next = now_ns(); next < warmup_end; next += LEGIT_INTERVAL_NS) {
        while (now_ns() < next)
            ;
        send_legit(g, srtp, sequence++);
    }
    uint64_t start = now_ns();
    uint64_t end = start + (uint64_t)(g->seconds * 1e9);
    uint64_t next_legit = start;
    uint64_t rounds = 0;
    for (uint64_t now = start; now < end; now = now_ns()) {
        if (now >= next_legit) {
            send_legit(g, srtp, sequence++);
            next_legit += LEGIT_INTERVAL_NS;
        }
        send_forged_batch(g, packets, headers, BATCH, rounds++);
    }
    g->next_sequence = sequence;
    moat_srtp_session_free(srtp);
    return 0;
}

int flood_generator_warm(flood_generator *g, double seconds)
{
    moat_srtp_keying mine = *g->keys;
    memcpy(mine.local_key, g->keys->remote_key, sizeof mine.local_key);
    memcpy(mine.local_salt, g->keys->remote_salt, sizeof mine.local_salt);
    memcpy(mine.remote_key, g->keys->local_key, sizeof mine.remote_key);
    memcpy(mine.remote_salt, g->keys->local_salt, sizeof mine.remote_salt);
    char error[128];
    moat_srtp_session *srtp = moat_srtp_session_new(&mine, error, sizeof error);
    if (!srtp) {
        fprintf(stderr, "generator: %s\n", error);
        return -1;
    }
    uint16_t sequence = g->next_sequence ? g->next_sequence : 1;
    uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
    for (uint64_t next = now_ns(); next < end; next += LEGIT_INTERVAL_NS) {
        while (now_ns() < next)
            ;
        send_legit(g, srtp, sequence++);
    }
    g->next_sequence = sequence;
    moat_srtp_session_free(srtp);
    return 0;
}

int flood_generator_paced(flood_generator *g, double pps, double seconds)
{
    enum { PACED_BATCH = 16 };
    static uint8_t packets[PACED_BATCH][2048];
    struct mmsghdr headers[PACED_BATCH];
    struct iovec vectors[PACED_BATCH];
    memset(headers, 0, sizeof headers);
    for (int i = 0; i < PACED_BATCH; i++) {
        vectors[i].iov_base = packets[i];
        vectors[i].iov_len = g->forged_size;
        headers[i].msg_hdr.msg_iov = &vectors[i];
        headers[i].msg_hdr.msg_iovlen = 1;
    }
    uint64_t interval = (uint64_t)(PACED_BATCH * 1e9 / pps);
    uint64_t start = now_ns(), end = start + (uint64_t)(seconds * 1e9);
    uint64_t rounds = 0;
    for (uint64_t next = start; next < end; next += interval) {
        struct timespec at = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
        send_forged_batch(g, packets, headers, PACED_BATCH, rounds++);
    }
    return 0;
}

int flood_generator_burst(flood_generator *g, uint64_t count)
{
    static uint8_t packets[BATCH][2048];
    struct mmsghdr headers[BATCH];
    struct iovec vectors[BATCH];
    memset(headers, 0, sizeof headers);
    for (int i = 0; i < BATCH; i++) {
        forge(packets[i], g->forged_size, g->ssrc);
        vectors[i].iov_base = packets[i];
        vectors[i].iov_len = g->forged_size;
        headers[i].msg_hdr.msg_iov = &vectors[i];
        headers[i].msg_hdr.msg_iovlen = 1;
    }
    uint64_t sent = 0;
    while (sent < count) {
        unsigned n = count - sent < BATCH ? (unsigned)(count - sent) : BATCH;
        for (unsigned i = 0; i < n; i++) {
            packets[i][2] = (uint8_t)(sent >> 8) ^ packets[i][5];
            packets[i][3] = (uint8_t)(sent + i);
        }
        int done = sendmmsg(g->fd, headers, n, 0);
        if (done <= 0)
            break;
        sent += (uint64_t)done;
    }
    g->forged_sent += sent;
    return 0;
}

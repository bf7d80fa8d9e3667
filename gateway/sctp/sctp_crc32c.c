/* CRC32c for SCTP packets (sctp_crc32c.h): the SSE4.2 crc32 instruction,
 * eight bytes at a time on three interleaved streams, where the CPU has it;
 * a byte-wise table otherwise. */
#include "sctp/sctp_crc32c.h"

#include <pthread.h>
#include <string.h>

#define CRC32C_POLY_REFLECTED 0x82F63B78u

static uint32_t table[256];
static bool table_ready;

static void build_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY_REFLECTED : c >> 1;
        table[i] = c;
    }
    __atomic_store_n(&table_ready, true, __ATOMIC_RELEASE);
}

/* Running CRC without the initial value and final xor. */
static uint32_t update_table(uint32_t crc, const uint8_t *data, size_t length)
{
    /* Building it twice from two threads writes the same values. */
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE))
        build_table();
    for (size_t i = 0; i < length; i++)
        crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
/* The crc32 instruction has a latency of three cycles and a throughput of
 * one: a single chain of it runs at a third of the speed the CPU can give.
 * Three streams over adjacent blocks run side by side and are joined by
 * shifting the earlier CRCs over the later blocks' length (M. Adler's
 * crc32c.c, zlib's crc32_combine): a GF(2) matrix for "append n zero bytes",
 * applied with four 256-entry tables. The one serial chain was 13% of a
 * data channel sender's CPU with 16 KiB packets. */
#define LONG_BLOCK  2048u
#define SHORT_BLOCK 256u

static uint32_t long_shift[4][256];
static uint32_t short_shift[4][256];
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

static uint32_t gf2_matrix_times(const uint32_t *matrix, uint32_t vector)
{
    uint32_t sum = 0;
    for (; vector != 0; vector >>= 1, matrix++)
        if (vector & 1)
            sum ^= *matrix;
    return sum;
}

static void gf2_matrix_square(uint32_t *square, const uint32_t *matrix)
{
    for (int n = 0; n < 32; n++)
        square[n] = gf2_matrix_times(matrix, matrix[n]);
}

/* The operator that appends length zero bytes (a power of two) to a
 * running CRC. */
static void zeros_operator(uint32_t *even, size_t length)
{
    uint32_t odd[32];
    odd[0] = CRC32C_POLY_REFLECTED; /* one zero bit */
    for (int n = 1; n < 32; n++)
        odd[n] = 1u << (n - 1);
    gf2_matrix_square(even, odd); /* two bits */
    gf2_matrix_square(odd, even); /* four bits */
    /* Each square doubles: the first gives one byte, in even. */
    for (;;) {
        gf2_matrix_square(even, odd);
        length >>= 1;
        if (length == 0)
            return;
        gf2_matrix_square(odd, even);
        length >>= 1;
        if (length == 0)
            break;
    }
    memcpy(even, odd, sizeof odd);
}

static void build_shift(uint32_t shift[4][256], size_t length)
{
    uint32_t op[32];
    zeros_operator(op, length);
    for (uint32_t n = 0; n < 256; n++)
        for (int b = 0; b < 4; b++)
            shift[b][n] = gf2_matrix_times(op, n << (8 * b));
}

static void build_shifts(void)
{
    build_shift(long_shift, LONG_BLOCK);
    build_shift(short_shift, SHORT_BLOCK);
}

static uint32_t shift(uint32_t table[4][256], uint32_t crc)
{
    return table[0][crc & 0xFF] ^ table[1][(crc >> 8) & 0xFF] ^ table[2][(crc >> 16) & 0xFF] ^
           table[3][crc >> 24];
}

static uint64_t load64(const uint8_t *p)
{
    uint64_t word;
    memcpy(&word, p, sizeof word);
    return word;
}

/* Three blocks of block bytes each, side by side; returns the CRC over all
 * three. */
__attribute__((target("sse4.2"))) static uint32_t update_three(uint32_t crc, const uint8_t *data,
                                                               size_t block, uint32_t table[4][256])
{
    uint64_t c0 = crc, c1 = 0, c2 = 0;
    for (size_t at = 0; at < block; at += 8) {
        c0 = __builtin_ia32_crc32di(c0, load64(data + at));
        c1 = __builtin_ia32_crc32di(c1, load64(data + block + at));
        c2 = __builtin_ia32_crc32di(c2, load64(data + 2 * block + at));
    }
    uint32_t joined = shift(table, (uint32_t)c0) ^ (uint32_t)c1;
    return shift(table, joined) ^ (uint32_t)c2;
}

__attribute__((target("sse4.2"))) static uint32_t update_sse42(uint32_t crc, const uint8_t *data,
                                                               size_t length)
{
    if (length >= 3 * SHORT_BLOCK)
        pthread_once(&shift_once, build_shifts);
    while (length >= 3 * LONG_BLOCK) {
        crc = update_three(crc, data, LONG_BLOCK, long_shift);
        data += 3 * LONG_BLOCK;
        length -= 3 * LONG_BLOCK;
    }
    while (length >= 3 * SHORT_BLOCK) {
        crc = update_three(crc, data, SHORT_BLOCK, short_shift);
        data += 3 * SHORT_BLOCK;
        length -= 3 * SHORT_BLOCK;
    }
    uint64_t c = crc;
    while (length >= 8) {
        c = __builtin_ia32_crc32di(c, load64(data));
        data += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length-- > 0)
        c32 = __builtin_ia32_crc32qi(c32, *data++);
    return c32;
}

static bool have_sse42(void)
{
    static int cached = -1;
    int value = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (value < 0) {
        __builtin_cpu_init();
        value = __builtin_cpu_supports("sse4.2") ? 1 : 0;
        __atomic_store_n(&cached, value, __ATOMIC_RELAXED);
    }
    return value == 1;
}
#endif

static uint32_t update(uint32_t crc, const uint8_t *data, size_t length)
{
#if defined(__x86_64__)
    if (have_sse42())
        return update_sse42(crc, data, length);
#endif
    return update_table(crc, data, length);
}

uint32_t moat_sctp_crc32c(const uint8_t *data, size_t length)
{
    return ~update(0xFFFFFFFFu, data, length);
}

uint32_t moat_sctp_packet_checksum(const uint8_t *packet, size_t length)
{
    static const uint8_t zero[4] = {0, 0, 0, 0};
    uint32_t crc = update(0xFFFFFFFFu, packet, MOAT_SCTP_CHECKSUM_OFFSET);
    crc = update(crc, zero, sizeof zero);
    crc = update(crc, packet + MOAT_SCTP_COMMON_HEADER_SIZE, length - MOAT_SCTP_COMMON_HEADER_SIZE);
    return ~crc;
}

void moat_sctp_packet_set_checksum(uint8_t *packet, size_t length)
{
    uint32_t crc = moat_sctp_packet_checksum(packet, length);
    uint8_t *field = packet + MOAT_SCTP_CHECKSUM_OFFSET;
    field[0] = (uint8_t)crc;
    field[1] = (uint8_t)(crc >> 8);
    field[2] = (uint8_t)(crc >> 16);
    field[3] = (uint8_t)(crc >> 24);
}

bool moat_sctp_packet_checksum_ok(const uint8_t *packet, size_t length)
{
    if (length < MOAT_SCTP_COMMON_HEADER_SIZE)
        return false;
    const uint8_t *field = packet + MOAT_SCTP_CHECKSUM_OFFSET;
    uint32_t stored = (uint32_t)field[0] | (uint32_t)field[1] << 8 | (uint32_t)field[2] << 16 |
                      (uint32_t)field[3] << 24;
    return stored == moat_sctp_packet_checksum(packet, length);
}

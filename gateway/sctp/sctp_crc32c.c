/* CRC32c for SCTP packets (sctp_crc32c.h): the SSE4.2 crc32 instruction,
 * eight bytes at a time, where the CPU has it; a byte-wise table otherwise. */
#include "sctp/sctp_crc32c.h"

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
__attribute__((target("sse4.2"))) static uint32_t update_sse42(uint32_t crc, const uint8_t *data,
                                                               size_t length)
{
    uint64_t c = crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, data, sizeof word);
        c = __builtin_ia32_crc32di(c, word);
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

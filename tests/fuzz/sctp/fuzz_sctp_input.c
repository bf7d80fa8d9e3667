/* libFuzzer target: arbitrary packets into an established association's
 * receive path (usrsctp's input processing, then our notification, DCEP,
 * reassembly and channel handling).
 *
 * Each run builds a fresh pair of associations in memory, opens a DCEP
 * channel on stream 0 and exchanges a few messages, then feeds the input to
 * the server as if it came from the client. Random packets would die at the
 * checksum or verification tag, so the first input byte can ask for fix-ups:
 *   bit 0: overwrite ports and verification tag with the client's
 *   bit 1: add the client's next TSN to the TSN of every DATA/I-DATA chunk
 *          (the input then holds TSN offsets)
 *   bit 2: recompute the CRC32c
 *   bit 3: let the two ends exchange packets and timers after each packet
 * The rest is up to 8 packets, each a 2-byte big-endian length and bytes.
 * The server runs path MTU discovery, so HEARTBEAT ACKs that look like the
 * answers to its probes (alone or bundled) go through its own recogniser
 * first. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <usrsctp.h>

#include "sctp/sctp_stack.h"
#include "sctp_test_link.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
    FIX_HEADER = 1 << 0,
    REBASE_TSN = 1 << 1,
    FIX_CRC = 1 << 2,
    PUMP_BETWEEN = 1 << 3,
};

#define MAX_PACKETS     8
#define MAX_PACKET_SIZE 4096

typedef struct {
    uint8_t header[8]; /* ports and verification tag of the client's packets */
    bool have_header;
    bool have_tsn;
    uint32_t next_tsn; /* after the highest TSN the client sent */
} client_view;

static uint32_t read_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void write_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Calls fn on each chunk of DATA (0) or I-DATA (64) type whose TSN is in
 * the packet; chunks are walked with their lengths checked. */
static void for_each_data_chunk(uint8_t *packet, size_t length,
                                void (*fn)(uint8_t *tsn, void *user), void *user)
{
    size_t offset = 12;
    while (offset + 4 <= length) {
        uint8_t type = packet[offset];
        size_t chunk_length = (size_t)packet[offset + 2] << 8 | packet[offset + 3];
        if (chunk_length < 4 || offset + chunk_length > length)
            return;
        if ((type == 0 || type == 64) && chunk_length >= 8)
            fn(packet + offset + 4, user);
        offset += (chunk_length + 3) & ~(size_t)3;
    }
}

static void note_tsn(uint8_t *tsn, void *user)
{
    client_view *view = user;
    uint32_t next = read_u32(tsn) + 1;
    if (!view->have_tsn || (int32_t)(next - view->next_tsn) > 0)
        view->next_tsn = next;
    view->have_tsn = true;
}

static void tap(sctp_test_end *end, const uint8_t *packet, size_t length, void *user)
{
    client_view *view = user;
    if (length < 12)
        return;
    memcpy(view->header, packet, sizeof view->header);
    view->have_header = true;
    uint8_t *copy = g_memdup2(packet, length);
    for_each_data_chunk(copy, length, note_tsn, view);
    g_free(copy);
}

static void rebase_tsn(uint8_t *tsn, void *user)
{
    const client_view *view = user;
    write_u32(tsn, read_u32(tsn) + view->next_tsn);
}

static void feed(sctp_test_link *link, const client_view *view, uint8_t flags, const uint8_t *bytes,
                 size_t length)
{
    uint8_t *packet = malloc(length > 0 ? length : 1);
    if (packet == NULL)
        return;
    if (length > 0)
        memcpy(packet, bytes, length);
    if (length >= 12) {
        if ((flags & FIX_HEADER) && view->have_header)
            memcpy(packet, view->header, sizeof view->header);
        if (flags & REBASE_TSN)
            for_each_data_chunk(packet, length, rebase_tsn, (void *)view);
        if (flags & FIX_CRC) {
            memset(packet + 8, 0, 4);
            uint32_t crc = usrsctp_crc32c(packet, length);
            memcpy(packet + 8, &crc, sizeof crc);
        }
    }
    if (link->server.assoc != NULL)
        moat_sctp_association_receive(link->server.assoc, packet, length);
    free(packet);
    if (flags & PUMP_BETWEEN)
        sctp_test_link_pump(link, 2);
}

static void setup(sctp_test_link *link, client_view *view)
{
    memset(view, 0, sizeof *view);
    sctp_test_link_init(link, 0);
    link->client.tap = tap;
    link->client.tap_user = view;
    moat_sctp_association_enable_plpmtud(link->server.assoc, MOAT_SCTP_MAX_MTU);
    sctp_test_link_connect(link);
    uint16_t id = sctp_test_link_open(link, &link->client, "fuzz", "p", true, -1, -1);
    sctp_test_link_send(link, &link->client, id, 51, (const uint8_t *)"hello", 5);
    sctp_test_link_send(link, &link->server, id, 53, (const uint8_t *)"\x01\x02", 2);
    sctp_test_link_pump(link, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool initialised;
    if (!initialised) {
        if (moat_sctp_stack_init() != 0)
            abort();
        initialised = true;
    }
    if (size < 1)
        return 0;
    sctp_test_link link;
    client_view view;
    setup(&link, &view);
    uint8_t flags = data[0];
    size_t offset = 1;
    for (int n = 0; n < MAX_PACKETS && offset + 2 <= size; n++) {
        size_t length = (size_t)data[offset] << 8 | data[offset + 1];
        offset += 2;
        if (length > size - offset)
            length = size - offset;
        if (length > MAX_PACKET_SIZE)
            length = MAX_PACKET_SIZE;
        feed(&link, &view, flags, data + offset, length);
        offset += length;
    }
    /* Whatever state the input left, the ends keep working or end cleanly. */
    sctp_test_link_pump(&link, 5);
    sctp_test_link_clear(&link);
    /* Lets usrsctp finish freeing what the aborted associations left. */
    moat_sctp_stack_handle_timers(1000);
    return 0;
}

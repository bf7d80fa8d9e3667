/* malformed: datagrams the RFC 7983 demultiplexer or the STUN header check
 * rejects before any lookup: first octets in no range (4..19, 64..127,
 * 192..255), STUN headers without the magic cookie or with a length that
 * disagrees with the datagram, and Binding requests without USERNAME. None
 * is a STUN indication or response, which receivers ignore silently. */
#include "attack_generator.h"

#include "ice/stun_classify.h"
#include "rtp/rtp_bytes.h"

#include <glib.h>
#include <unistd.h>

#define VARIANTS 6

typedef struct {
    int fd;
    struct sockaddr_in6 target;
    unsigned next_variant;
    flood_random random;
} malformed_state;

static void *create_malformed(const attack_environment *env, char *error, size_t error_size)
{
    malformed_state *st = g_new0(malformed_state, 1);
    st->target = env->target;
    flood_random_seed(&st->random);
    st->fd = attack_udp_socket_open(error, error_size);
    if (st->fd < 0) {
        g_free(st);
        return NULL;
    }
    return st;
}

/* A Binding request header (type 0x0001) with a random transaction ID. */
static void stun_header(flood_random *r, uint8_t *out, uint16_t length_field, uint32_t cookie)
{
    moat_wr16(out, 0x0001);
    moat_wr16(out + 2, length_field);
    moat_wr32(out + 4, cookie);
    flood_random_fill(r, out + 8, 12);
}

static size_t build(malformed_state *st, uint8_t *out)
{
    flood_random *r = &st->random;
    unsigned variant = st->next_variant;
    st->next_variant = (st->next_variant + 1) % VARIANTS;
    size_t length = flood_random_range(r, 24, 200);
    flood_random_fill(r, out, length);
    switch (variant) {
    case 0:
        out[0] = (uint8_t)flood_random_range(r, 4, 19);
        break;
    case 1:
        out[0] = (uint8_t)flood_random_range(r, 64, 127);
        break;
    case 2:
        out[0] = (uint8_t)flood_random_range(r, 192, 255);
        break;
    case 3: /* STUN-looking, wrong magic cookie */
        stun_header(r, out, (uint16_t)((length - MOAT_STUN_HEADER_LENGTH) & ~3u),
                    MOAT_STUN_MAGIC_COOKIE ^ 0x01010101u);
        length = MOAT_STUN_HEADER_LENGTH + ((length - MOAT_STUN_HEADER_LENGTH) & ~3u);
        break;
    case 4: /* length field past the end of the datagram */
        stun_header(r, out, (uint16_t)(length + 64), MOAT_STUN_MAGIC_COOKIE);
        break;
    default: /* a well-formed request whose only attribute is PRIORITY */
        stun_header(r, out, 8, MOAT_STUN_MAGIC_COOKIE);
        moat_wr16(out + 20, 0x0024);
        moat_wr16(out + 22, 4);
        length = 28;
        break;
    }
    return length;
}

static size_t fill_malformed(void *state, attack_batch *batch, size_t max, uint64_t now_us)
{
    malformed_state *st = state;
    attack_batch_aim(batch, st->fd, &st->target);
    for (size_t i = 0; i < max; i++)
        batch->lengths[i] = build(st, batch->datagrams[i]);
    return max;
}

static void destroy_malformed(void *state)
{
    malformed_state *st = state;
    close(st->fd);
    g_free(st);
}

const attack_generator attack_malformed = {
    .kind = ATTACK_MALFORMED,
    .create = create_malformed,
    .fill = fill_malformed,
    .destroy = destroy_malformed,
};

/* Forward rewrites and the retransmission map of a forwarded stream: the
 * rewrite applied to a source packet (ids, extensions, header fields), and
 * a NACK of a subscriber's sequence number rebuilt from the shared source
 * copy byte for byte as first sent, across a simulcast layer switch; an
 * overwritten, evicted, gone, re-created or too old source is not found. */
#include <glib.h>
#include <string.h>

#include "rtp/retransmit_map.h"
#include "rtp/rtp_packet.h"
#include "rtp/rtp_rewrite.h"

#define LAYER_LOW  0x1111u
#define LAYER_HIGH 0x2222u
#define OUT_SSRC   0xabcdef01u

/* A VP8 packet of source `ssrc`: a one-byte header extension (a
 * transport-wide sequence number the publisher sent), then a descriptor
 * with a 15-bit picture id and a TL0PICIDX, then a payload derived from
 * seq. */
static size_t make_source(uint8_t *p, uint32_t ssrc, uint16_t seq, uint16_t picture)
{
    size_t n = 0;
    p[n++] = 0x90; /* V=2, X */
    p[n++] = 96;
    p[n++] = (uint8_t)(seq >> 8);
    p[n++] = (uint8_t)seq;
    uint32_t ts = 1000u * seq;
    p[n++] = (uint8_t)(ts >> 24), p[n++] = (uint8_t)(ts >> 16);
    p[n++] = (uint8_t)(ts >> 8), p[n++] = (uint8_t)ts;
    p[n++] = (uint8_t)(ssrc >> 24), p[n++] = (uint8_t)(ssrc >> 16);
    p[n++] = (uint8_t)(ssrc >> 8), p[n++] = (uint8_t)ssrc;
    /* extension: 0xBEDE, one word: id 5 len 2, value seq, pad */
    p[n++] = 0xbe, p[n++] = 0xde, p[n++] = 0, p[n++] = 1;
    p[n++] = 0x51, p[n++] = (uint8_t)(seq >> 8), p[n++] = (uint8_t)seq, p[n++] = 0;
    /* VP8 descriptor: X, S, PID 0; I, L; M + 15-bit picture; TL0PICIDX */
    p[n++] = 0x90;
    p[n++] = 0xc0;
    p[n++] = (uint8_t)(0x80 | (picture >> 8));
    p[n++] = (uint8_t)picture;
    p[n++] = (uint8_t)(picture & 0xff);
    for (int i = 0; i < 40 + seq % 7; i++)
        p[n++] = (uint8_t)(seq * 3 + i);
    return n;
}

/* The subscriber's rewrite of one packet. */
static moat_rtp_rewrite rewrite_of(uint16_t out_seq, uint32_t ts, uint16_t picture, uint8_t tl0)
{
    return (moat_rtp_rewrite){
        .ssrc = OUT_SSRC,
        .timestamp = ts,
        .sequence = out_seq,
        .payload_type = 100,
        .flags = MOAT_RTP_REWRITE_STRIP_EXTENSIONS | MOAT_RTP_REWRITE_PICTURE |
                 MOAT_RTP_REWRITE_TL0PICIDX,
        .picture_id_bits = 15,
        .picture_id_offset = 2,
        .picture_id = picture,
        .tl0picidx = tl0,
        .tl0picidx_offset = 4,
    };
}

static void test_apply(void)
{
    uint8_t p[200];
    size_t n = make_source(p, LAYER_LOW, 7, 0x1234);
    size_t before = n;
    moat_rtp_rewrite rw = rewrite_of(500, 99999, 0x0321, 42);
    g_assert_cmpint(moat_rtp_rewrite_apply(p, &n, &rw), ==, MOAT_RTP_OK);
    g_assert_cmpuint(n, ==, before - 8); /* the extension block went */
    moat_rtp_header h;
    g_assert_cmpint(moat_rtp_parse(p, n, &h), ==, MOAT_RTP_OK);
    g_assert_false(h.extension);
    g_assert_cmpuint(h.sequence, ==, 500);
    g_assert_cmpuint(h.timestamp, ==, 99999);
    g_assert_cmpuint(h.ssrc, ==, OUT_SSRC);
    g_assert_cmpuint(h.payload_type, ==, 100);
    const uint8_t *d = p + h.payload_offset;
    g_assert_cmpuint(d[2], ==, 0x83);
    g_assert_cmpuint(d[3], ==, 0x21);
    g_assert_cmpuint(d[4], ==, 42);
    g_assert_cmpuint(d[5], ==, (uint8_t)(7 * 3)); /* payload untouched */
    /* An offset past the payload: refused, nothing written. */
    uint8_t q[200];
    size_t m = make_source(q, LAYER_LOW, 7, 1);
    uint8_t copy[200];
    memcpy(copy, q, m);
    rw.picture_id_offset = 250;
    g_assert_cmpint(moat_rtp_rewrite_apply(q, &m, &rw), !=, MOAT_RTP_OK);
    g_assert_cmpmem(q, m, copy, m);
}

/* Two source caches (a simulcast publisher's layers) as a worker keeps
 * them: the resolver finds them by key and id. */
typedef struct {
    moat_retransmit_cache *caches[2];
    uint64_t keys[2];
    uint32_t ids[2];
} sources;

static const moat_retransmit_cache *resolve(void *user, uint64_t key, uint32_t id)
{
    sources *s = user;
    for (int i = 0; i < 2; i++) {
        if (s->caches[i] && s->keys[i] == key && s->ids[i] == id)
            return s->caches[i];
    }
    return NULL;
}

typedef struct {
    uint8_t bytes[200];
    size_t length;
} sent_packet;

/* The forward path: the source packet kept in its cache, the rewrite
 * applied to the subscriber's copy and recorded in the map. */
static void forward(sources *s, int source, moat_retransmit_map *map, uint16_t seq,
                    uint16_t source_picture, const moat_rtp_rewrite *rw, uint64_t now,
                    sent_packet *sent)
{
    uint8_t p[200];
    uint32_t ssrc = source == 0 ? LAYER_LOW : LAYER_HIGH;
    size_t n = make_source(p, ssrc, seq, source_picture);
    g_assert_cmpint(moat_retransmit_cache_store(s->caches[source], p, n, now), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtp_rewrite_apply(p, &n, rw), ==, MOAT_RTP_OK);
    moat_retransmit_map_record(map, s->keys[source], s->ids[source], seq, rw);
    memcpy(sent->bytes, p, n);
    sent->length = n;
}

static int rebuild(moat_retransmit_map *map, sources *s, uint16_t seq, uint64_t now, uint8_t *out,
                   size_t *n)
{
    return moat_retransmit_map_rebuild(map, seq, now, resolve, s, out, MOAT_RETRANSMIT_MAX_PACKET,
                                       n);
}

static void test_layer_switch(void)
{
    sources s = {
        .caches = {moat_retransmit_cache_new(64, 10000, 2000000),
                   moat_retransmit_cache_new(64, 10000, 2000000)},
        .keys = {(uint64_t)7 << 32 | LAYER_LOW, (uint64_t)7 << 32 | LAYER_HIGH},
        .ids = {1, 2},
    };
    moat_retransmit_map *map = moat_retransmit_map_new(64, 10000, 2000000);
    sent_packet sent[10];
    uint64_t now = 1000000;
    /* The low layer's 100..104 sent as 20..24, then the high layer's
     * 5003..5007 as 25..29 (new timestamp base, picture ids continued). */
    for (int i = 0; i < 5; i++) {
        moat_rtp_rewrite rw =
            rewrite_of((uint16_t)(20 + i), 3000u * (uint32_t)i, (uint16_t)(10 + i), 3);
        forward(&s, 0, map, (uint16_t)(100 + i), (uint16_t)(900 + i), &rw, now += 1000, &sent[i]);
    }
    for (int i = 0; i < 5; i++) {
        moat_rtp_rewrite rw =
            rewrite_of((uint16_t)(25 + i), 15000u + 3000u * (uint32_t)i, (uint16_t)(15 + i), 4);
        forward(&s, 1, map, (uint16_t)(5003 + i), (uint16_t)(77 + i), &rw, now += 1000,
                &sent[5 + i]);
    }
    /* Every subscriber sequence number rebuilds to the packet first sent,
     * before and after the switch. */
    for (int i = 0; i < 10; i++) {
        uint8_t out[MOAT_RETRANSMIT_MAX_PACKET];
        size_t n = 0;
        g_assert_cmpint(rebuild(map, &s, (uint16_t)(20 + i), now, out, &n), ==, MOAT_RTP_OK);
        g_assert_cmpmem(out, n, sent[i].bytes, sent[i].length);
    }
    /* A rebuild alone marks nothing (its resend may still be refused, or
     * fail): rebuilt again at once, not seen as resent. */
    uint8_t out[MOAT_RETRANSMIT_MAX_PACKET];
    size_t n;
    g_assert_cmpint(rebuild(map, &s, 22, now + 5000, out, &n), ==, MOAT_RTP_OK);
    g_assert_false(moat_retransmit_map_resent_after(map, 22, 0));
    /* Marked resent: within the resend interval rate limited; after it,
     * again. */
    moat_retransmit_map_mark_resent(map, 22, now);
    g_assert_true(moat_retransmit_map_resent_after(map, 22, now - 1));
    g_assert_false(moat_retransmit_map_resent_after(map, 22, now));
    g_assert_cmpint(rebuild(map, &s, 22, now + 5000, out, &n), ==, MOAT_RTP_ERR_RATE_LIMITED);
    g_assert_cmpint(rebuild(map, &s, 22, now + 10000, out, &n), ==, MOAT_RTP_OK);
    /* A sequence number the map does not hold is not marked. */
    moat_retransmit_map_mark_resent(map, 30, now);
    g_assert_false(moat_retransmit_map_resent_after(map, 30, 0));
    /* Never sent: not found. */
    g_assert_cmpint(rebuild(map, &s, 30, now, out, &n), ==, MOAT_RTP_ERR_NOT_FOUND);
    g_assert_cmpint(rebuild(map, &s, 19, now, out, &n), ==, MOAT_RTP_ERR_NOT_FOUND);
    /* The low layer's source is gone (publisher left, or idle past the
     * age and freed): its packets are gone, the high layer's are not. */
    moat_retransmit_cache_free(s.caches[0]);
    s.caches[0] = NULL;
    g_assert_cmpint(rebuild(map, &s, 21, now + 20000, out, &n), ==, MOAT_RTP_ERR_NO_SPACE);
    g_assert_cmpint(rebuild(map, &s, 26, now + 20000, out, &n), ==, MOAT_RTP_OK);
    g_assert_cmpmem(out, n, sent[6].bytes, sent[6].length);
    /* Re-created under the same key with another id (a new cache that may
     * hold other packets under those numbers): still gone. */
    s.caches[0] = moat_retransmit_cache_new(64, 10000, 2000000);
    s.ids[0] = 3;
    uint8_t other[200];
    size_t other_n = make_source(other, LAYER_LOW, 101, 1);
    moat_retransmit_cache_store(s.caches[0], other, other_n, now);
    g_assert_cmpint(rebuild(map, &s, 21, now + 40000, out, &n), ==, MOAT_RTP_ERR_NO_SPACE);
    /* Too old (max age 2 s). */
    g_assert_cmpint(rebuild(map, &s, 27, now + 2100000, out, &n), ==, MOAT_RTP_ERR_NO_SPACE);
    moat_retransmit_cache_free(s.caches[0]);
    moat_retransmit_cache_free(s.caches[1]);
    moat_retransmit_map_free(map);
}

/* The source cache overwrote the packet (its slot reused by a newer one)
 * or the map's slot holds a newer packet: not resent, nor a wrong one. */
static void test_evicted(void)
{
    sources s = {
        .caches = {moat_retransmit_cache_new(8, 10000, 0), NULL},
        .keys = {42, 0},
        .ids = {9, 0},
    };
    moat_retransmit_map *map = moat_retransmit_map_new(16, 10000, 0);
    sent_packet sent;
    uint64_t now = 1000000;
    for (int i = 0; i < 12; i++) {
        moat_rtp_rewrite rw = rewrite_of((uint16_t)(1000 + i), (uint32_t)i, (uint16_t)i, 0);
        forward(&s, 0, map, (uint16_t)(60000 + i), 5, &rw, now += 1000, &sent);
    }
    uint8_t out[MOAT_RETRANSMIT_MAX_PACKET];
    size_t n;
    /* 60000..60003 were overwritten in the 8-slot source cache. */
    g_assert_cmpint(rebuild(map, &s, 1001, now, out, &n), ==, MOAT_RTP_ERR_NO_SPACE);
    g_assert_cmpint(rebuild(map, &s, 1011, now, out, &n), ==, MOAT_RTP_OK);
    g_assert_cmpmem(out, n, sent.bytes, sent.length);
    /* The map's slot of 1000 now holds 1016. */
    moat_rtp_rewrite rw = rewrite_of(1016, 0, 0, 0);
    forward(&s, 0, map, 60020, 5, &rw, now += 1000, &sent);
    g_assert_cmpint(rebuild(map, &s, 1000, now, out, &n), ==, MOAT_RTP_ERR_NOT_FOUND);
    moat_retransmit_map_clear(map);
    g_assert_cmpint(rebuild(map, &s, 1016, now, out, &n), ==, MOAT_RTP_ERR_NOT_FOUND);
    moat_retransmit_cache_free(s.caches[0]);
    moat_retransmit_map_free(map);
}

static void test_arguments(void)
{
    g_assert_null(moat_retransmit_map_new(0, 0, 0));
    g_assert_null(moat_retransmit_map_new(48, 0, 0));
    g_assert_null(moat_retransmit_map_new(65536, 0, 0));
    moat_retransmit_map *map = moat_retransmit_map_new(512, 0, 0);
    g_assert_cmpuint(moat_retransmit_map_slots(map), ==, 512);
    /* Small next to a second of video copies (~250 KB at 2 Mbit/s). */
    g_assert_cmpuint(moat_retransmit_map_bytes(map), <=, 512 * 48 + 64);
    moat_retransmit_map_free(map);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/retransmit_map/apply", test_apply);
    g_test_add_func("/retransmit_map/layer_switch", test_layer_switch);
    g_test_add_func("/retransmit_map/evicted", test_evicted);
    g_test_add_func("/retransmit_map/arguments", test_arguments);
    return g_test_run();
}

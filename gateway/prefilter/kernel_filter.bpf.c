/* The kernel half of the prefilter: a socket filter (SO_ATTACH_BPF) on each
 * worker's UDP socket that drops forged datagrams before they are queued, so
 * they cost no wake-up and no copy. It reads only what the worker publishes
 * (kernel_filter_maps.h) and never decides anything the user-space prefilter
 * would not: STUN and DTLS always pass; everything else must come from a
 * 5-tuple a session owns; while that session (or the worker socket) enforces,
 * an RTP packet must name an allowed SSRC, carry an index inside the
 * plausibility window (without SRTP+, a few a window of those ahead of it
 * pass, as the stream guard's jump probe) and, where the expected SRTP+ tag is
 * known, that tag.
 * Whatever it cannot judge for free it passes on to user space.
 *
 * Why a socket filter and not SK_REUSEPORT or sk_lookup: the filter belongs to
 * the one socket the worker already owns (no netns-wide attachment, no
 * CAP_NET_ADMIN, nothing to clean up when the gateway dies: it goes with the
 * socket), it runs in the UDP receive path just before the datagram would be
 * queued, and it sees the payload; reuseport and sk_lookup programs exist to
 * pick a socket, which Moat (one socket per worker and port) never needs. */
#include <linux/bpf.h>
#include <linux/if_ether.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "kernel_filter_maps.h"

#define PASS       0xffffffffu /* keep the whole datagram */
#define DROP       0u
#define UDP_HEADER 8

/* Shared with the worker through the skeleton's memory-mapped .bss. */
struct moat_kf_control control;
struct moat_kf_session sessions[MOAT_KF_MAX_SESSIONS];
struct moat_kf_ring rings[MOAT_KF_MAX_RINGS];

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MOAT_KF_MAX_TUPLES);
    __type(key, struct moat_kf_tuple);
    __type(value, __u32);
} tuples SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, MOAT_KF_REASON_COUNT);
    __type(key, __u32);
    __type(value, __u64);
} drops SEC(".maps");

static __always_inline __u32 drop(struct moat_kf_session *session, __u32 reason)
{
    __u64 *count = bpf_map_lookup_elem(&drops, &reason);
    if (count)
        *count += 1;
    if (reason >= MOAT_KF_REASON_COUNT)
        return DROP;
    if (session)
        __sync_fetch_and_add(&session->dropped[reason], 1);
    else
        __sync_fetch_and_add(&control.unowned[reason], 1);
    return DROP;
}

static __always_inline int read_tuple(struct __sk_buff *skb, struct moat_kf_tuple *key)
{
    if (bpf_skb_load_bytes(skb, 0, &key->port, 2) < 0)
        return -1;
    if (skb->protocol == bpf_htons(ETH_P_IP)) {
        key->address[10] = 0xff;
        key->address[11] = 0xff;
        return bpf_skb_load_bytes_relative(skb, 12, &key->address[12], 4, BPF_HDR_START_NET);
    }
    if (skb->protocol == bpf_htons(ETH_P_IPV6))
        return bpf_skb_load_bytes_relative(skb, 8, key->address, 16, BPF_HDR_START_NET);
    return -1;
}

/* An index ahead of the window: without SRTP+ a few a window go to user
 * space, whose stream guard lets them reach srtp_unprotect (the jump probe),
 * so a stream back from an outage moves its window; each has the same
 * chance, MOAT_KF_JUMP_PER_WINDOW over the larger of the last window's
 * arrivals and this one's so far, so a legitimate stream keeps its share
 * however the forgeries there are timed; the rest dies here. */
static __always_inline __u32 ahead_of_window(struct moat_kf_session *session)
{
    if (session->scheme != MOAT_KF_SCHEME_NONE)
        return drop(session, MOAT_KF_DROP_INDEX);
    __u64 now = bpf_ktime_get_ns();
    __u64 age = now - session->jump_window_ns;
    if (age >= MOAT_KF_JUMP_WINDOW_NS) {
        /* A window that closed long ago says nothing about now. */
        session->jump_last_arrivals = age < 2 * MOAT_KF_JUMP_WINDOW_NS ? session->jump_arrivals : 0;
        session->jump_window_ns = now;
        session->jump_arrivals = 0;
    }
    __u32 arrivals = session->jump_arrivals + 1;
    session->jump_arrivals = arrivals;
    __u32 seen = arrivals > session->jump_last_arrivals ? arrivals : session->jump_last_arrivals;
    if (seen <= MOAT_KF_JUMP_PER_WINDOW || bpf_get_prandom_u32() % seen < MOAT_KF_JUMP_PER_WINDOW)
        return PASS;
    return drop(session, MOAT_KF_DROP_INDEX);
}

static __always_inline __u32 check_rtp(struct __sk_buff *skb, struct moat_kf_session *session,
                                       const __u8 *header, __u32 length)
{
    if (length < session->min_rtp_len)
        return drop(session, MOAT_KF_DROP_MALFORMED);
    __u32 n = session->n_ssrcs;
    if (n == 0)
        return PASS; /* nothing learned yet: user space's budgets decide */
    __u32 ssrc =
        (__u32)header[8] << 24 | (__u32)header[9] << 16 | (__u32)header[10] << 8 | header[11];
    struct moat_kf_ssrc *entry = 0;
    for (__u32 i = 0; i < MOAT_KF_SESSION_SSRCS; i++) {
        if (i >= n)
            break;
        if (session->ssrcs[i].ssrc == ssrc) {
            entry = &session->ssrcs[i];
            break;
        }
    }
    if (!entry) {
        /* Not followed (yet): a trickle goes to user space, whose budget
         * and authentication learn a genuine stream; the rest dies here. */
        __u64 now = bpf_ktime_get_ns();
        if (now >= session->unknown_next_ns) {
            session->unknown_next_ns = now + MOAT_KF_UNKNOWN_SSRC_INTERVAL_NS;
            return PASS;
        }
        return drop(session, MOAT_KF_DROP_UNKNOWN_SSRC);
    }
    if (!(entry->flags & MOAT_KF_SSRC_HAS_HIGHEST))
        return PASS;
    __u64 highest = entry->highest;
    __u16 sequence = (__u16)(header[2] << 8 | header[3]);
    __u64 index = moat_kf_estimate_index(highest, sequence);
    if (index + session->behind < highest)
        return drop(session, MOAT_KF_DROP_INDEX);
    if (index > highest + session->ahead)
        return ahead_of_window(session);
    __u32 ring = entry->ring;
    if (session->scheme == MOAT_KF_SCHEME_NONE || ring >= MOAT_KF_MAX_RINGS)
        return PASS;
    __u64 slot = rings[ring].slots[index & (MOAT_KF_RING_SIZE - 1)];
    if ((__u32)(slot >> 32) != moat_kf_ring_key(index))
        return PASS; /* not exported (yet): user space computes or budgets it */
    __u32 tag;
    if (bpf_skb_load_bytes(skb, UDP_HEADER + length - 4, &tag, 4) < 0)
        return PASS;
    if (bpf_ntohl(tag) != (__u32)slot)
        return drop(session, MOAT_KF_DROP_TAG);
    return PASS;
}

SEC("socket")
int moat_kernel_filter(struct __sk_buff *skb)
{
    if (!control.enabled || skb->len <= UDP_HEADER)
        return PASS;
    __u32 length = skb->len - UDP_HEADER;
    __u8 header[12] = {0};
    if (bpf_skb_load_bytes(skb, UDP_HEADER, header, length < 12 ? 1 : 12) < 0)
        return PASS;
    /* RFC 7983: STUN and DTLS go to user space whoever sends them. */
    if (header[0] < 4 || (header[0] >= 20 && header[0] <= 63))
        return PASS;
    /* Neither RTP nor RTCP: user space would drop it unread, whoever sent it. */
    if (header[0] < 128 || header[0] > 191)
        return drop(0, MOAT_KF_DROP_MALFORMED);
    struct moat_kf_tuple key = {0};
    if (read_tuple(skb, &key) < 0)
        return PASS;
    __u32 *slot = bpf_map_lookup_elem(&tuples, &key);
    if (!slot) {
        if (!control.strict_tuples)
            return PASS;
        return drop(0, MOAT_KF_DROP_UNKNOWN_TUPLE);
    }
    if (*slot >= MOAT_KF_MAX_SESSIONS)
        return PASS; /* a session the filter has no room to follow */
    struct moat_kf_session *session = &sessions[*slot];
    if (!(session->flags & MOAT_KF_SESSION_ACTIVE))
        return PASS;
    if (!(session->flags & MOAT_KF_SESSION_ENFORCING) && !control.worker_enforcing)
        return PASS;
    /* RTCP (RFC 5761 payload types 192..223) is left to user space's budget. */
    if (header[1] >= 192 && header[1] <= 223)
        return PASS;
    if (length < 12)
        return drop(session, MOAT_KF_DROP_MALFORMED);
    return check_rtp(skb, session, header, length);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";

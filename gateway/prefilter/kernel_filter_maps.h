/* The memory the kernel filter (kernel_filter.bpf.c) and its worker share:
 * included by both, so only fixed-width types and no libc. The worker is the
 * only writer of everything here except the drop counters, which only the
 * BPF program increments. Words the program reads while the worker writes
 * them are 32 or 64 bits wide and naturally aligned, so every read sees
 * either the old or the new value; a ring slot packs its index key and its
 * tag into one 64-bit word for that reason. */
#ifndef MOAT_KERNEL_FILTER_MAPS_H
#define MOAT_KERNEL_FILTER_MAPS_H

#ifdef __bpf__
typedef __u8 moat_kf_u8;
typedef __u16 moat_kf_u16;
typedef __u32 moat_kf_u32;
typedef __u64 moat_kf_u64;
#else
#include <stdint.h>
typedef uint8_t moat_kf_u8;
typedef uint16_t moat_kf_u16;
typedef uint32_t moat_kf_u32;
typedef uint64_t moat_kf_u64;
#endif

#define MOAT_KF_MAX_SESSIONS  256 /* transports per worker the filter knows */
#define MOAT_KF_MAX_RINGS     128 /* streams with exported SRTP+ tags */
#define MOAT_KF_SESSION_SSRCS 16  /* allowed SSRCs per transport */
#define MOAT_KF_RING_SHIFT    13
#define MOAT_KF_RING_SIZE     (1u << MOAT_KF_RING_SHIFT) /* >= 1024 behind + 4096 ahead */
#define MOAT_KF_MAX_TUPLES    4096
#define MOAT_KF_NO_RING       0xffffu
#define MOAT_KF_UNTRACKED     0xffffffffu /* tuple value: pass, no session slot */

/* Why the kernel dropped a datagram; names in kernel_filter.c. */
enum moat_kf_reason {
    MOAT_KF_DROP_UNKNOWN_TUPLE = 0, /* neither STUN nor DTLS, from a 5-tuple no session owns */
    MOAT_KF_DROP_UNKNOWN_SSRC,      /* SSRC the transport does not know (enforcing) */
    MOAT_KF_DROP_INDEX,             /* outside the plausibility window (enforcing) */
    MOAT_KF_DROP_TAG,               /* SRTP+ tag differs from the expected one (enforcing) */
    MOAT_KF_DROP_MALFORMED, /* first octet neither STUN, DTLS nor RTP; or (enforcing) too short */
    MOAT_KF_REASON_COUNT
};

enum moat_kf_scheme { MOAT_KF_SCHEME_NONE = 0, MOAT_KF_SCHEME_PRN = 1, MOAT_KF_SCHEME_CHAIN = 2 };

#define MOAT_KF_SESSION_ACTIVE    1u
#define MOAT_KF_SESSION_ENFORCING 2u

#define MOAT_KF_SSRC_HAS_HIGHEST 1u

/* Key of the tuple hash map: the remote address as the dual-stack socket
 * sees it (IPv4 v4-mapped) and the remote port, network order. */
struct moat_kf_tuple {
    moat_kf_u8 address[16];
    moat_kf_u16 port;
    moat_kf_u16 zero;
};

struct moat_kf_ssrc {
    moat_kf_u32 ssrc;
    moat_kf_u16 ring;    /* MOAT_KF_NO_RING or the index of its tag ring */
    moat_kf_u16 flags;   /* MOAT_KF_SSRC_* */
    moat_kf_u64 highest; /* highest authenticated RTP index, as of the last sync */
};

struct moat_kf_session {
    moat_kf_u32 flags;  /* MOAT_KF_SESSION_* */
    moat_kf_u32 scheme; /* enum moat_kf_scheme */
    moat_kf_u32 n_ssrcs;
    moat_kf_u32 behind;      /* plausibility window around the highest index */
    moat_kf_u32 ahead;       /* further ahead: MOAT_KF_JUMP_PER_WINDOW without SRTP+ */
    moat_kf_u32 min_rtp_len; /* shortest plausible SRTP packet (+ tag) */
    struct moat_kf_ssrc ssrcs[MOAT_KF_SESSION_SSRCS];
    moat_kf_u64 dropped[MOAT_KF_REASON_COUNT]; /* atomic adds by the program */
    /* When the next packet of an SSRC not in ssrcs[] may go to user space
     * (bpf_ktime_get_ns; written by the program only, racy by design). */
    moat_kf_u64 unknown_next_ns;
    /* RTP indexes ahead of the window (no SRTP+): the current 100 ms
     * window's start and arrivals, and the last window's arrivals (written
     * by the program only, racy by design). */
    moat_kf_u64 jump_window_ns;
    moat_kf_u32 jump_arrivals;
    moat_kf_u32 jump_last_arrivals;
};

/* One packet of SSRCs the filter does not follow per this interval goes to
 * user space, as its unknown-SSRC budget (20/s) would let it: a stream the
 * SDP did not declare (rid simulcast, an undeclared RTX, a later track) is
 * learned from its first authenticated packet instead of dying here. */
#define MOAT_KF_UNKNOWN_SSRC_INTERVAL_NS 50000000ull

/* Without SRTP+, packets whose index lies ahead of the window go to user
 * space at about MOAT_KF_JUMP_PER_WINDOW per window of a session, each with
 * the same chance, as the stream guard's jump probe (20/s a stream) would
 * let them: libsrtp accepts any index ahead of the highest, so one may be a
 * stream back from an outage, whose window moves only once one of its
 * packets authenticated (before, the kernel dropped such a stream for good
 * after a jump of more than `ahead`). SRTP+ drops them (SRTPPLUS.md 5). */
#define MOAT_KF_JUMP_WINDOW_NS  100000000ull
#define MOAT_KF_JUMP_PER_WINDOW 2u

/* Expected RTP tags by index: slot (index & (SIZE - 1)) holds
 * key << 32 | tag with key = (index >> SHIFT) + 1 (0: empty). */
struct moat_kf_ring {
    moat_kf_u64 slots[MOAT_KF_RING_SIZE];
};

struct moat_kf_control {
    moat_kf_u32 enabled;          /* 0: the program passes everything */
    moat_kf_u32 worker_enforcing; /* the worker socket's detector enforces */
    moat_kf_u32 strict_tuples;    /* drop unknown tuples (0 once the tuple map overflowed) */
    moat_kf_u32 reserved;
    moat_kf_u64 unowned[MOAT_KF_REASON_COUNT]; /* atomic adds: drops no session owns */
};

static inline moat_kf_u32 moat_kf_ring_key(moat_kf_u64 index)
{
    return (moat_kf_u32)(index >> MOAT_KF_RING_SHIFT) + 1;
}

/* RFC 3711 Appendix A: the index of `sequence` next to the highest index. */
static inline moat_kf_u64 moat_kf_estimate_index(moat_kf_u64 highest, moat_kf_u16 sequence)
{
    moat_kf_u64 roc = highest >> 16;
    moat_kf_u16 highest_seq = (moat_kf_u16)highest;
    moat_kf_u64 guess = roc;
    if (highest_seq < 32768) {
        if (sequence > highest_seq && sequence - highest_seq > 32768 && roc > 0)
            guess = roc - 1;
    } else if (highest_seq - 32768 > sequence) {
        guess = roc + 1;
    }
    return (guess << 16) | sequence;
}

#endif

/* Sizes and limits of Moat's SCTP associations, in one place so the stack's
 * sysctls, the socket options and the SDP (a=max-message-size) agree. */
#ifndef MOAT_SCTP_TUNING_H
#define MOAT_SCTP_TUNING_H

/* Largest message we accept from a peer; advertise it as
 * a=max-message-size (RFC 8841 §6). 256 KiB is what Chromium advertises. */
#define MOAT_SCTP_MAX_RECEIVE_MESSAGE_SIZE (256u * 1024u)

/* Send buffer every association starts with. It bounds the largest message
 * we can send (a whole message must fit the send buffer); four maximum-size
 * messages fit. It grows from here towards the bandwidth-delay product
 * (sctp_window.c), up to half of the session's data-channel memory; the
 * receive buffer is that half from the start. */
#define MOAT_SCTP_SOCKET_BUFFER_SIZE (1024u * 1024u)

/* Memory one session's association may hold in its send and receive buffers
 * together, when nobody says otherwise (moat_sctp_association_set_memory_limit).
 * This is the bound of the hardening issue's [limits] datachannel_session_bytes:
 * the integrator passes that setting to set_memory_limit. Each direction
 * gets half, up to MOAT_SCTP_MAX_WINDOW below (6 MiB: a 1 Gbit/s path's
 * bandwidth-delay product at 50 ms, or 100 Mbit/s at 500 ms). */
#define MOAT_SCTP_SESSION_BYTES_DEFAULT (16u * 1024u * 1024u)

/* Largest send or receive buffer, whatever the memory limit allows: what
 * Linux lets a TCP socket's receive window autotune to by default
 * (net.ipv4.tcp_rmem max, 6 MiB), so a data channel takes a path no harder
 * than a default TCP connection does. The peer's congestion window can then
 * not outgrow the window we advertise. Without this cap (8 MiB each way at
 * the default 16 MiB per session) usrsctp's slow start overshoots the
 * bench's 1 Gbit/s, 71 ms link (BDP 8.9 MB, 2.5 MB queue): cwnd reaches
 * about 6 MB, doubles once more in a burst at twice the link rate, loses
 * 1000-10000 packets, and its recovery cuts cwnd to flight + Max.Burst, a
 * few packets (build/bench/datachannel link 71 with MOAT_BENCH_TRACE=1).
 * Same run, 1200-byte packets, SCTP/TCP at 71 ms: 8 MiB each way 0.34 and
 * 0.41 (1281 and 2129 packets dropped), 5 MiB 0.91 and 0.91, 6 MiB 1.16
 * and 1.14 (none dropped), 4 MiB 0.69 and 0.68. */
#define MOAT_SCTP_MAX_WINDOW (6u * 1024u * 1024u)

/* Smallest buffer a memory limit can impose on either direction: below this
 * an association hardly moves data at all. */
#define MOAT_SCTP_MIN_WINDOW (64u * 1024u)

/* Streams asked for in INIT, both directions. A side may open channels only
 * on its own parity of stream ids (RFC 8832 §6), so 2048 streams give each
 * side 1024 channels. usrsctp allocates per-stream state for
 * min(ours, peer's) streams up front, which is why this is not 65535. */
#define MOAT_SCTP_STREAMS 2048

/* Chunks an association may hold in its send queue and for reassembly
 * (usrsctp's sctp_max_chunks_on_queue). */
#define MOAT_SCTP_MAX_CHUNKS_ON_QUEUE 16384

/* SCTP packet size: one packet is one DTLS record inside one UDP datagram,
 * and 1200 bytes leave room for DTLS, UDP and IPv6 headers under a 1280-byte
 * path MTU (the value browsers use). usrsctp's own path MTU discovery stays
 * off (it cannot see the path under DTLS): every association starts here;
 * moat_sctp_association_enable_plpmtud finds what the path carries (RFC
 * 8899, Moat's own probes), moat_sctp_association_set_mtu forces a size for
 * a path known to carry it. */
#define MOAT_SCTP_MTU 1200

/* Largest SCTP packet: a DTLS record's plaintext (2^14 bytes). */
#define MOAT_SCTP_MAX_MTU 16384

/* Largest SCTP packet path MTU discovery (RFC 8899, sctp_plpmtud.c) probes
 * unless told otherwise ([datachannel] max_packet). Not MOAT_SCTP_MAX_MTU:
 * aiortc (1.9) decrypts each datagram with one SSL_read into 1500 bytes, so
 * a larger record is not just lost there: its rest stays in OpenSSL and the
 * peer reads one record behind from then on (every message waits for the
 * next datagram, a retransmission timeout when none comes). Chromium takes
 * 16 KiB records, but the internet's 1500-byte links carry at most 1432
 * bytes of SCTP in DTLS over IPv4 anyway; loopback, gateway-to-gateway
 * links and native peers configure 16384. */
#define MOAT_SCTP_PLPMTUD_DEFAULT_MAX 1500

/* SACK policy (RFC 9260 §6.2) stays usrsctp's: a SACK for every second
 * packet, or after 200 ms. Fewer SACKs would save the receiver a DTLS record
 * and a datagram per pair of data packets; throughput gained nothing
 * measurable. (With sack_freq 4 or a 20 ms delay tests/unit/sctp
 * test_sctp_transfer unordered-lossy once stalled or lost track of a
 * message: that was the test's clock, not the stack; see the note on
 * MOAT_SCTP_CC_MODULE below.) */

/* Initial congestion window in packets (usrsctp's default is 3; TCP's is 10,
 * RFC 6928). */
#define MOAT_SCTP_INITIAL_CWND_PACKETS 10

/* Congestion control: H-TCP (usrsctp's SCTP_CC_HTCP): standard growth for
 * the first second after a loss, then faster, scaled to the round trip, and
 * a backoff set by the measured RTT range. HighSpeed TCP (RFC 3649,
 * SCTP_CC_HSTCP), chosen earlier to recover faster on long fat paths,
 * overshoots short ones: above 38 packets of window it grows faster and
 * backs off less, so at 7 ms it refilled the link's 20 ms queue every few
 * hundred milliseconds; each time thousands of packets were lost and
 * usrsctp's Max.Burst rule cut cwnd to flight + 4 packets, below ssthresh,
 * so slow start overshot again. Its reason to be (71 ms) went with the
 * express-SACK T3 fix and the 6 MiB window cap. build/bench/datachannel
 * link, same runs, idle machine, SCTP/TCP at 7 / 71 / 196 ms with
 * 1200-byte packets: HSTCP 0.21-0.32 / 0.37-1.14 / 1.07-1.11, H-TCP
 * 0.87-0.90 / 1.13-1.15 / 1.07-1.11, RFC 9260's own algorithm
 * (SCTP_CC_RFC2581) 0.86-0.89 / 0.74-1.14 / 1.09-1.10: within noise of each
 * other; H-TCP stays for its steadier 71 ms runs. With the standard
 * one tests/unit/sctp test_sctp_transfer unordered-lossy used to lose track
 * of one message (neither delivered nor reported abandoned); that was the
 * test: its ticks advanced usrsctp's timers without real time passing, and
 * usrsctp's T3-rtx expiry gives up or retransmits only chunks outstanding
 * for srtt + rttvar by the real clock (sctp_mark_all_for_resend), so a
 * message lost at the end of the burst, with too few packets after it to
 * be struck three times, was never taken. The test now sleeps per tick,
 * and unordered-lossy-rfc2581 runs it with this module (Moat's worker
 * drives the timers with real elapsed time, where the expiry always finds
 * such a chunk old enough). */
#define MOAT_SCTP_CC_MODULE 2

/* Max.Burst stays usrsctp's: 4 packets, applied by cutting cwnd to the
 * flight size plus 4 packets whenever a SACK leaves more room than that
 * (sctp_use_cwnd_based_maxburst, ssthresh keeps the old cwnd). On the
 * bench's 7 ms link that cut is what makes cwnd swing between 4 MB and
 * 20 KB with no packet lost (MOAT_BENCH_TRACE=1: srtt climbs from 7 to
 * 40 ms: queueing behind the receiver, whose window apparently closes
 * and reopens). Limiting bursts by packet count instead (the sysctl at 0)
 * was measured A/B on the 71 ms and 7 ms links, 8 pairs with the patched
 * library at -O2 and 3 before (load average 2.5-4.9): at 71 ms SCTP MB/s
 * 39.0 -> 42.6 with the library at -O2 (pairs from -39% to +64%), at 7 ms
 * no consistent difference; not kept. */

/* Fixed by a carried patch: usrsctp 0.9.5 (and its master as of this
 * writing) did not restart the T3-rtx timer on its fast SACK path
 * (sctp_express_handle_sack, every SACK without gap blocks) when the
 * cumulative ack moved (RFC 9260 §6.3.2 R3): it started the timer only when
 * it was not running and stopped it only when nothing was in flight. A bulk
 * transfer that keeps data in flight therefore took a spurious
 * retransmission timeout RTO.Min (1 s) after it started, and every RTO after
 * that; when queueing had made the oldest outstanding chunk older than
 * SRTT + RTTVAR, the timeout marked data for retransmission and set cwnd to
 * one packet and ssthresh to half of it, so at 71 ms the window grew back by
 * one packet per round trip from about 1 MB. Moat links usrsctp built by
 * scripts/build-usrsctp.sh from Debian's source with
 * scripts/patches/usrsctp-express-sack-t3-restart.patch, which stops the
 * SEND timers where the express path moves the cumulative ack, as the slow
 * path does, so the existing "assure a timer" loop restarts them.
 * tests/unit/sctp/test_sctp_long_rtt fails without the patch. */

#endif

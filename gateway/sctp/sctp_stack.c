/* The process-wide usrsctp stack: one-time init without usrsctp's threads and
 * its sysctls, and the timer tick every media worker calls (one thread drives
 * the clock; each delivers its own associations' mailboxes). */
#include "sctp/sctp_stack.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include <glib.h>
#include <usrsctp.h>

#include "sctp/sctp_association_private.h"
#include "sctp/sctp_mailbox.h"
#include "sctp/sctp_tuning.h"

/* pthread_once and a pthread mutex rather than GOnce and GMutex (futex
 * based): ThreadSanitizer (make tsan) sees the ordering they give, so
 * init_result, read after the once, is not reported as a race. */
static int init_result;
static gint initialized;
static pthread_once_t init_once_control = PTHREAD_ONCE_INIT;

static int apply_sysctls(void)
{
    int failed = 0;
    /* Browsers neither negotiate ECN nor AUTH on data channels (DTLS already
     * authenticates every packet), and with AUTH off usrsctp requires
     * dynamic address reconfiguration off first. */
    failed |= usrsctp_sysctl_set_sctp_ecn_enable(0);
    failed |= usrsctp_sysctl_set_sctp_asconf_enable(0);
    failed |= usrsctp_sysctl_set_sctp_auto_asconf(0);
    failed |= usrsctp_sysctl_set_sctp_auth_enable(0);
    failed |= usrsctp_sysctl_set_sctp_nrsack_enable(0);
    failed |= usrsctp_sysctl_set_sctp_pktdrop_enable(0);
    /* Partial reliability and stream reconfiguration are what data channels
     * are built on (RFC 8831 §6.1). */
    failed |= usrsctp_sysctl_set_sctp_pr_enable(1);
    failed |= usrsctp_sysctl_set_sctp_reconfig_enable(1);
    /* The chunk limit applies to each association's send queue and to what
     * it holds for reassembly; the default (512) stalls a 256 KiB message
     * split into ~1200-byte chunks next to other traffic, and thousands of
     * small queued messages. */
    failed |= usrsctp_sysctl_set_sctp_max_chunks_on_queue(MOAT_SCTP_MAX_CHUNKS_ON_QUEUE);
    failed |= usrsctp_sysctl_set_sctp_initial_cwnd(MOAT_SCTP_INITIAL_CWND_PACKETS);
    failed |= usrsctp_sysctl_set_sctp_default_cc_module(MOAT_SCTP_CC_MODULE);
    failed |= usrsctp_sysctl_set_sctp_sendspace(MOAT_SCTP_SOCKET_BUFFER_SIZE);
    failed |= usrsctp_sysctl_set_sctp_recvspace(MOAT_SCTP_SOCKET_BUFFER_SIZE);
    return failed != 0 ? -EINVAL : 0;
}

static void init_once(void)
{
    /* Port 0: no UDP encapsulation socket, and no threads of usrsctp's own;
     * every packet goes out through conn_output. */
    usrsctp_init_nothreads(0, moat_sctp_mailbox_conn_output, NULL);
    init_result = apply_sysctls();
    /* usrsctp neither computes nor checks SCTP's CRC32c: Moat does both,
     * several times faster (sctp_crc32c.h), in the mailbox on the way out
     * and in moat_sctp_association_receive on the way in. */
    usrsctp_enable_crc32c_offload();
    g_atomic_int_set(&initialized, 1);
}

int moat_sctp_stack_init(void)
{
    pthread_once(&init_once_control, init_once);
    return init_result;
}

/* The thread driving usrsctp's clock: the first caller of handle_timers. */
static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
static bool clock_claimed;
static pthread_t clock_thread;

static bool is_clock_thread(void)
{
    bool mine;
    pthread_mutex_lock(&clock_lock);
    if (!clock_claimed) {
        clock_thread = pthread_self();
        clock_claimed = true;
    }
    mine = pthread_equal(clock_thread, pthread_self());
    pthread_mutex_unlock(&clock_lock);
    return mine;
}

void moat_sctp_stack_handle_timers(uint32_t elapsed_ms)
{
    if (!g_atomic_int_get(&initialized))
        return;
    if (is_clock_thread() && elapsed_ms > 0)
        usrsctp_handle_timers(elapsed_ms);
    uintptr_t ids[64];
    size_t n;
    do {
        n = moat_sctp_mailbox_collect_owned(ids, G_N_ELEMENTS(ids));
        for (size_t i = 0; i < n; i++) {
            /* Looked up one at a time: a callback run for one association
             * may free another owned by this thread. */
            moat_sctp_association *a = moat_sctp_mailbox_find_owned(ids[i]);
            if (a != NULL)
                moat_sctp_association_deliver(a);
        }
    } while (n == G_N_ELEMENTS(ids));
}

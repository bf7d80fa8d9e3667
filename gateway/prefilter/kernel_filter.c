/* Loading, attaching and the tuple map of the kernel prefilter
 * (kernel_filter.h); the shared memory is written by kernel_filter_state.c. */
#include "prefilter/kernel_filter.h"

#include "base/log.h"
#include "prefilter/kernel_filter.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct moat_kernel_filter {
    struct moat_kernel_filter_bpf *skeleton;
    int socket_fd;
    int tuples_fd;
    int drops_fd;
    int ncpus;
    moat_kf_state state;
};

static int print_libbpf(enum libbpf_print_level level, const char *format, va_list args)
{
    if (level == LIBBPF_DEBUG || moat_log_get_level() < MOAT_LOG_DEBUG)
        return 0;
    char line[512];
    vsnprintf(line, sizeof line, format, args);
    line[strcspn(line, "\n")] = '\0';
    moat_log_debug("kernel-filter", "libbpf: %s", line);
    return 0;
}

static bool map_update(void *context, const struct moat_kf_tuple *key, uint32_t value);
static void map_remove(void *context, const struct moat_kf_tuple *key);

moat_kernel_filter *moat_kernel_filter_attach(int socket_fd, char *error, size_t error_size)
{
    libbpf_set_print(print_libbpf);
    int ncpus = libbpf_num_possible_cpus();
    if (ncpus <= 0) {
        snprintf(error, error_size, "cannot count CPUs: %s", strerror(-ncpus));
        return NULL;
    }
    struct moat_kernel_filter_bpf *skeleton = moat_kernel_filter_bpf__open_and_load();
    if (!skeleton) {
        int e = errno;
        snprintf(error, error_size, "cannot load the eBPF socket filter: %s%s", strerror(e),
                 e == EPERM ? " (needs CAP_BPF or CAP_SYS_ADMIN)" : "");
        return NULL;
    }
    if (!skeleton->bss) {
        snprintf(error, error_size, "the kernel cannot share the filter's maps (mmap)");
        moat_kernel_filter_bpf__destroy(skeleton);
        return NULL;
    }
    moat_kernel_filter *filter = g_new0(moat_kernel_filter, 1);
    filter->skeleton = skeleton;
    filter->socket_fd = socket_fd;
    filter->ncpus = ncpus;
    filter->tuples_fd = bpf_map__fd(skeleton->maps.tuples);
    filter->drops_fd = bpf_map__fd(skeleton->maps.drops);
    moat_kf_shared shared = {
        .control = &skeleton->bss->control,
        .sessions = skeleton->bss->sessions,
        .rings = skeleton->bss->rings,
    };
    moat_kf_state_init(&filter->state, shared);
    moat_kf_state_set_tuple_ops(&filter->state,
                                (moat_kf_tuple_ops){map_update, map_remove, filter});
    int program = bpf_program__fd(skeleton->progs.moat_kernel_filter);
    if (setsockopt(socket_fd, SOL_SOCKET, SO_ATTACH_BPF, &program, sizeof program) != 0) {
        snprintf(error, error_size, "cannot attach the eBPF socket filter: %s", strerror(errno));
        moat_kernel_filter_free(filter);
        return NULL;
    }
    __atomic_store_n(&shared.control->enabled, 1, __ATOMIC_RELEASE);
    return filter;
}

void moat_kernel_filter_free(moat_kernel_filter *filter)
{
    if (!filter)
        return;
    int unused = 0;
    if (filter->socket_fd >= 0)
        setsockopt(filter->socket_fd, SOL_SOCKET, SO_DETACH_BPF, &unused, sizeof unused);
    moat_kf_state_clear(&filter->state);
    moat_kernel_filter_bpf__destroy(filter->skeleton);
    g_free(filter);
}

moat_kf_state *moat_kernel_filter_state(moat_kernel_filter *filter)
{
    return &filter->state;
}

void moat_kernel_filter_set_worker_enforcing(moat_kernel_filter *filter, bool enforcing)
{
    moat_kf_u32 *word = &filter->state.shared.control->worker_enforcing;
    if (*word != (moat_kf_u32)enforcing)
        __atomic_store_n(word, (moat_kf_u32)enforcing, __ATOMIC_RELEASE);
}

static struct moat_kf_tuple tuple_key(const struct sockaddr_in6 *remote)
{
    struct moat_kf_tuple key;
    memset(&key, 0, sizeof key);
    memcpy(key.address, &remote->sin6_addr, sizeof key.address);
    key.port = remote->sin6_port;
    return key;
}

static bool map_update(void *context, const struct moat_kf_tuple *key, uint32_t value)
{
    moat_kernel_filter *filter = context;
    return bpf_map_update_elem(filter->tuples_fd, key, &value, BPF_ANY) == 0;
}

static void map_remove(void *context, const struct moat_kf_tuple *key)
{
    moat_kernel_filter *filter = context;
    bpf_map_delete_elem(filter->tuples_fd, key);
}

void moat_kernel_filter_bind_tuple(moat_kernel_filter *filter, const void *owner,
                                   const struct sockaddr_in6 *remote)
{
    struct moat_kf_tuple key = tuple_key(remote);
    bool was_strict =
        __atomic_load_n(&filter->state.shared.control->strict_tuples, __ATOMIC_ACQUIRE);
    if (!moat_kf_state_bind_tuple(&filter->state, owner, &key) && was_strict)
        /* Until room is made, the program cannot tell unknown tuples from
         * known ones, so it stops dropping them. */
        moat_log_warn("kernel-filter",
                      "tuple map full: unknown tuples pass to user space until there is room");
}

void moat_kernel_filter_pass_tuple(moat_kernel_filter *filter, const void *owner,
                                   const struct sockaddr_in6 *remote)
{
    struct moat_kf_tuple key = tuple_key(remote);
    if (!moat_kf_state_pass_tuple(&filter->state, owner, &key))
        moat_log_warn("kernel-filter",
                      "tuple map full: unknown tuples pass to user space until there is room");
}

void moat_kernel_filter_unbind_tuple(moat_kernel_filter *filter, const struct sockaddr_in6 *remote)
{
    struct moat_kf_tuple key = tuple_key(remote);
    moat_kf_state_unbind_tuple(&filter->state, &key);
}

void moat_kernel_filter_forget(moat_kernel_filter *filter, const void *owner)
{
    moat_kf_state_forget(&filter->state, owner);
}

void moat_kernel_filter_read_drops(const moat_kernel_filter *filter,
                                   uint64_t totals[MOAT_KF_REASON_COUNT])
{
    uint64_t per_cpu[filter->ncpus];
    for (uint32_t reason = 0; reason < MOAT_KF_REASON_COUNT; reason++) {
        totals[reason] = 0;
        if (bpf_map_lookup_elem(filter->drops_fd, &reason, per_cpu) != 0)
            continue;
        for (int cpu = 0; cpu < filter->ncpus; cpu++)
            totals[reason] += per_cpu[cpu];
    }
}

const char *moat_kernel_filter_reason_name(int reason)
{
    static const char *const names[MOAT_KF_REASON_COUNT] = {
        [MOAT_KF_DROP_UNKNOWN_TUPLE] = "unknown_tuple",
        [MOAT_KF_DROP_UNKNOWN_SSRC] = "unknown_ssrc",
        [MOAT_KF_DROP_INDEX] = "index",
        [MOAT_KF_DROP_TAG] = "tag",
        [MOAT_KF_DROP_MALFORMED] = "malformed",
    };
    return reason >= 0 && reason < MOAT_KF_REASON_COUNT ? names[reason] : "unknown";
}

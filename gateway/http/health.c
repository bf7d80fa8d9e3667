/* Owns /healthz: the checks and their JSON (health.h). */
#include "http/health.h"

#include "engine/worker.h"
#include "http/http_router.h"
#include "http/http_tls.h"
#include "record/record_dir.h"

#include <glib.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void add_problem(json_t *problems, const char *text)
{
    json_array_append_new(problems, json_string(text));
}

static json_t *check_workers(moat_gateway *gateway, json_t *problems)
{
    unsigned running = 0;
    for (unsigned i = 0; i < gateway->n_workers; i++) {
        uint64_t age = moat_worker_heartbeat_age_us(gateway->workers[i]);
        if (age <= MOAT_HEALTH_WORKER_STALL_US) {
            running++;
            continue;
        }
        char text[96];
        if (age == UINT64_MAX)
            snprintf(text, sizeof text, "media worker %u is not running", i);
        else
            snprintf(text, sizeof text, "media worker %u has not run for %.1f s", i,
                     (double)age / 1e6);
        add_problem(problems, text);
    }
    return json_pack("{s:i, s:i}", "configured", (int)gateway->n_workers, "running", (int)running);
}

static json_t *check_recording(moat_gateway *gateway, json_t *problems)
{
    const char *dir = gateway->config.record_dir;
    if (!dir || !*dir)
        return json_pack("{s:b}", "configured", 0);
    if (!gateway->record_health)
        gateway->record_health = moat_record_dir_health_new();
    char why[160] = "";
    const char *problem = "is not writable";
    bool writable = moat_record_dir_health_check(gateway->record_health, dir,
                                                 g_get_monotonic_time(), why, sizeof why);
    /* A file system short of [record] min_free_mib refuses a start, and one
     * with nothing free fails a recording at its first write. */
    if (writable &&
        !moat_record_dir_health_space(dir, (uint64_t)gateway->config.record_min_free_mib << 20, why,
                                      sizeof why)) {
        writable = false;
        problem = "is short of space";
    }
    if (!writable) {
        char text[224];
        snprintf(text, sizeof text, "[record] dir %s: %s", problem, why);
        add_problem(problems, text);
    }
    json_t *out = json_pack("{s:b, s:b}", "configured", 1, "writable", writable);
    if (!writable)
        json_object_set_new(out, "reason", json_string(why));
    return out;
}

static json_t *kernel_filter_state(moat_gateway *gateway)
{
    bool active = gateway->n_workers > 0;
    for (unsigned i = 0; i < gateway->n_workers; i++)
        active = active && moat_worker_kernel_filter(gateway->workers[i]) != NULL;
    json_t *out =
        json_pack("{s:s, s:b}", "mode", gateway->config.prefilter_kernel, "active", active);
    if (!active && gateway->kernel_filter_note[0])
        json_object_set_new(out, "reason", json_string(gateway->kernel_filter_note));
    return out;
}

void moat_http_health(moat_gateway *gateway, moat_http_response *response)
{
    json_t *problems = json_array();
    json_t *workers = check_workers(gateway, problems);
    json_t *recording = check_recording(gateway, problems);
    bool healthy = json_array_size(problems) == 0;
    json_t *body =
        json_pack("{s:s, s:i, s:I, s:o, s:o, s:o, s:b}", "status", healthy ? "ok" : "unhealthy",
                  "workers", (int)gateway->n_workers, "sessions",
                  (json_int_t)moat_session_registry_count(gateway->sessions), "worker_state",
                  workers, "recording", recording, "kernel_filter", kernel_filter_state(gateway),
                  "tls", moat_http_tls_configured(&gateway->config));
    if (!healthy) {
        json_object_set_new(body, "error", json_string("unhealthy"));
        json_object_set(body, "detail", json_array_get(problems, 0));
    }
    json_object_set_new(body, "problems", problems);
    moat_http_health_hook_fn hook = (moat_http_health_hook_fn)gateway->health_hook;
    json_t *feature = hook ? hook(gateway->health_hook_user) : NULL;
    json_object_set_new(body, "cluster", feature ? feature : json_pack("{s:b}", "configured", 0));
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    /* jansson allocates with malloc, the response frees with g_free. */
    char *copy = g_strdup(text ? text : "{\"status\":\"unhealthy\"}");
    free(text);
    moat_http_response_set(response, healthy ? 200 : 503, "application/json", copy, strlen(copy));
}

/* Owns PATCH and DELETE of WHIP/WHEP resources another node made, on the
 * node that forwarded their offers (signalling = proxy): that node answers
 * the client with a Location on itself that names the owner,
 * /whip/resource/via/<owner id in hex>/<id> (cluster_keys.h), and forwards
 * PATCH and DELETE on it to the owner's /whip/resource/<id> with
 * X-Moat-Forwarded, returning the owner's answer (status, ETag, Link,
 * Content-Type, body). Stateless: the owner is looked up in the registry,
 * never taken as a URL from the client, and the resource id stays the
 * capability the owner checks. Control thread. */
#include "cluster/cluster_private.h"

typedef struct {
    moat_cluster *cluster;
    char *url;
    char *method;
    char *body;
    size_t body_length;
    char *peer;
    char *content_type; /* NULL: none */
    char *if_match;     /* NULL: none */
    moat_http_respond_fn respond;
    void *respond_data;
} resource_forward;

static void forward_free(resource_forward *job)
{
    g_free(job->url);
    g_free(job->method);
    g_free(job->body);
    g_free(job->peer);
    g_free(job->content_type);
    g_free(job->if_match);
    g_free(job);
}

static const char *forward_header(const void *context, const char *name)
{
    const resource_forward *job = context;
    if (g_ascii_strcasecmp(name, "Content-Type") == 0)
        return job->content_type;
    if (g_ascii_strcasecmp(name, "If-Match") == 0)
        return job->if_match;
    return NULL;
}

static void owner_answered(void *user, moat_http_response *response)
{
    resource_forward *job = user;
    job->respond(job->respond_data, response);
    forward_free(job);
}

static void forward_start(void *data, moat_http_respond_fn respond, void *respond_data)
{
    resource_forward *job = data;
    job->respond = respond;
    job->respond_data = respond_data;
    moat_http_request request = {
        .method = job->method,
        .path = "",
        .body = job->body,
        .body_length = job->body_length,
        .peer = job->peer,
        .header = forward_header,
        .header_context = job,
    };
    moat_cluster *cluster = job->cluster;
    moat_cluster_proxy_forward(cluster->forwarder, job->url, &request, cluster->forward_token,
                               owner_answered, job);
}

static void forward_release(void *data)
{
    forward_free(data);
}

static bool refuse(moat_cluster *cluster, moat_http_response *response, unsigned status,
                   const char *code, const char *detail)
{
    cluster->resource_requests[RESOURCE_REFUSED]++;
    moat_http_response_error(response, status, code, "%s", detail);
    return true;
}

bool moat_cluster_resource_hook(void *user, const moat_http_request *request,
                                moat_http_response *response, const char *rest)
{
    moat_cluster *cluster = user;
    char node[MOAT_CLUSTER_NAME_MAX];
    char id[48];
    moat_cluster_via via = moat_cluster_via_parse(rest, node, sizeof node, id, sizeof id);
    /* This node's own resources; and in redirect mode no Location names
     * another node, so a via/ path is an unknown session here. */
    if (via == MOAT_CLUSTER_VIA_NONE || !cluster->proxy)
        return false;
    if (via == MOAT_CLUSTER_VIA_INVALID)
        return refuse(cluster, response, 404, "unknown_session", "no such WHIP resource");
    if (strcmp(request->method, "PATCH") != 0 && strcmp(request->method, "DELETE") != 0) {
        moat_http_response_header(response, "Allow", "PATCH, DELETE");
        return refuse(cluster, response, 405, "method_not_allowed",
                      "a WHIP resource accepts PATCH and DELETE");
    }
    if (strcmp(node, cluster->node_id) == 0) {
        moat_whip_handle_resource(cluster->gateway, request, response, id);
        return true;
    }
    const moat_cluster_node *owner = g_hash_table_lookup(cluster->nodes, node);
    if (!owner)
        return refuse(cluster, response, 404, "owner_gone",
                      "the node that holds this resource is not in the cluster (its sessions "
                      "ended with it)");
    cluster->resource_requests[RESOURCE_FORWARDED]++;
    resource_forward *job = g_new0(resource_forward, 1);
    job->cluster = cluster;
    job->url = g_strconcat(owner->http, "/whip/resource/", id, NULL);
    job->method = g_strdup(request->method);
    job->body = g_memdup2(request->body ? request->body : "", request->body_length + 1);
    job->body[request->body_length] = '\0';
    job->body_length = request->body_length;
    job->peer = g_strdup(request->peer ? request->peer : "");
    job->content_type = g_strdup(moat_http_request_header(request, "Content-Type"));
    job->if_match = g_strdup(moat_http_request_header(request, "If-Match"));
    response->deferred_reply = (moat_http_deferred_reply){forward_start, forward_release, job};
    return true;
}

void moat_cluster_resource_location(moat_http_response *response, const char *owner)
{
    const char *location = moat_http_response_get_header(response, "Location");
    const char *id = location ? strstr(location, "/whip/resource/") : NULL;
    char path[512];
    if (id && moat_cluster_via_path(owner, id + strlen("/whip/resource/"), path, sizeof path))
        moat_http_response_header(response, "Location", path);
}

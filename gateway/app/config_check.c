/* Owns the start-up checks that need more than the configuration itself
 * (config_check.h): files, bind addresses, networks, the plugin folder,
 * cluster settings. */
#include "app/config_check.h"

#include "call/call_address.h"
#include "cluster/cluster.h"
#include "dtls/certificate.h"
#include "http/http_tls.h"
#include "session/plugin_registry.h"

#include <arpa/inet.h>
#include <gio/gio.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

static void not_an_address(const char *option, const char *value, char *error, size_t error_size)
{
    char *shown = g_strescape(value, NULL);
    snprintf(error, error_size, "%s = \"%s\": not an IP address", option, shown);
    g_free(shown);
}

/* As http_listener.c parses it. */
static bool http_bind_ok(const char *text)
{
    GInetAddress *address = g_inet_address_new_from_string(text);
    if (address)
        g_object_unref(address);
    return address != NULL;
}

/* As the worker, call and ingest sockets parse it. */
static bool media_bind_ok(const char *text)
{
    unsigned char probe[16];
    return inet_pton(AF_INET6, text, probe) == 1 || inet_pton(AF_INET, text, probe) == 1;
}

/* As ng_server_socket.c parses it. */
static bool ng_bind_ok(const char *text)
{
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICHOST | AI_PASSIVE};
    struct addrinfo *found = NULL;
    if (getaddrinfo(text, NULL, &hints, &found) != 0)
        return false;
    freeaddrinfo(found);
    return true;
}

static int check_binds(const moat_config *config, char *error, size_t error_size)
{
    if (!http_bind_ok(config->http_bind)) {
        not_an_address("[http] bind", config->http_bind, error, error_size);
        return -1;
    }
    if (!media_bind_ok(config->media_bind)) {
        not_an_address("[media] bind", config->media_bind, error, error_size);
        return -1;
    }
    if (config->ng_port && !ng_bind_ok(config->ng_bind)) {
        not_an_address("[ng] bind", config->ng_bind, error, error_size);
        return -1;
    }
    return 0;
}

/* [dtls] certificate and private_key load (and match). */
static int check_certificate(const moat_config *config, char *error, size_t error_size)
{
    if (!config->certificate || !*config->certificate)
        return 0;
    char why[400] = "";
    moat_certificate *certificate =
        moat_certificate_load(config->certificate, config->private_key, why, sizeof why);
    if (!certificate) {
        snprintf(error, error_size, "[dtls] certificate: %s", why);
        return -1;
    }
    moat_certificate_free(certificate);
    return 0;
}

static int check_denied_networks(const moat_config *config, char *error, size_t error_size)
{
    moat_call_network *networks = NULL;
    size_t n = 0;
    int status =
        moat_call_networks_parse(config->call_denied_networks, &networks, &n, error, error_size);
    g_free(networks);
    return status;
}

/* [general] plugin_dir is a folder holding plugin modules (loading them is
 * the start's). */
static int check_plugin_dir(const moat_config *config, char *error, size_t error_size)
{
    char why[400] = "";
    if (moat_plugin_registry_check(config->plugin_dir, why, sizeof why) == 0)
        return 0;
    snprintf(error, error_size, "[general] plugin_dir: %s", why);
    return -1;
}

int moat_app_config_check(const moat_config *config, char *error, size_t error_size)
{
    if (moat_config_validate(config, error, error_size) != 0 ||
        check_binds(config, error, error_size) != 0 ||
        moat_http_tls_check(config, error, error_size) != 0 ||
        check_certificate(config, error, error_size) != 0 ||
        check_denied_networks(config, error, error_size) != 0 ||
        check_plugin_dir(config, error, error_size) != 0)
        return -1;
    if (moat_config_cluster_enabled(config))
        return moat_cluster_check_config(config, error, error_size);
    return 0;
}

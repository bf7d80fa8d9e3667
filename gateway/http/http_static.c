/* Owns the demo pages: GET and HEAD of plain file names below [http]
 * web_root, with their content types. */
#include "http/http_static.h"

#include <glib.h>
#include <string.h>

static const char *content_type_for(const char *path)
{
    if (g_str_has_suffix(path, ".html"))
        return "text/html; charset=utf-8";
    if (g_str_has_suffix(path, ".js"))
        return "text/javascript; charset=utf-8";
    if (g_str_has_suffix(path, ".css"))
        return "text/css; charset=utf-8";
    if (g_str_has_suffix(path, ".svg"))
        return "image/svg+xml";
    if (g_str_has_suffix(path, ".png"))
        return "image/png";
    return "application/octet-stream";
}

void moat_http_serve_static(moat_gateway *gateway, const moat_http_request *request,
                            moat_http_response *response)
{
    const char *path = request->path;
    if (strcmp(request->method, "GET") != 0 && strcmp(request->method, "HEAD") != 0) {
        moat_http_response_not_allowed(response, "GET, HEAD", "%s is not allowed on %s",
                                       request->method, path);
        return;
    }
    if (strcmp(path, "/") == 0)
        path = "/index.html";
    /* Only plain names below the web root: no "..", no hidden files. */
    if (path[0] != '/' || strstr(path, "..") || strstr(path, "/.") || strchr(path, '\\')) {
        moat_http_response_error(response, 400, "bad_path", "path not allowed");
        return;
    }
    char *file = g_build_filename(gateway->config.web_root, path + 1, NULL);
    char *contents = NULL;
    gsize length = 0;
    if (!g_file_test(file, G_FILE_TEST_IS_REGULAR) ||
        !g_file_get_contents(file, &contents, &length, NULL))
        moat_http_response_error(response, 404, "not_found", "no such page: %s", path);
    else
        moat_http_response_set(response, 200, content_type_for(file), contents, length);
    g_free(file);
}

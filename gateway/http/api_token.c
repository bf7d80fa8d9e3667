/* Owns the generated API token: the loopback test, the random token and the
 * 0600 file it is written to. */
#include "http/api_token.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN_BYTES 32

bool moat_api_token_bind_is_loopback(const char *bind)
{
    unsigned char address[16];
    if (!bind)
        return false;
    if (inet_pton(AF_INET, bind, address) == 1)
        return address[0] == 127;
    if (inet_pton(AF_INET6, bind, address) != 1)
        return false;
    static const unsigned char loopback6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(address, loopback6, sizeof loopback6) == 0)
        return true;
    return memcmp(address, v4_mapped, sizeof v4_mapped) == 0 && address[12] == 127;
}

char *moat_api_token_default_path(void)
{
    const char *runtime = g_getenv("XDG_RUNTIME_DIR");
    if (runtime && *runtime)
        return g_build_filename(runtime, "moat", "token", NULL);
    return g_strdup("moat-token");
}

static int make_folder(const char *path, char *error, size_t error_size)
{
    char *folder = g_path_get_dirname(path);
    int status = 0;
    if (!g_file_test(folder, G_FILE_TEST_IS_DIR) && g_mkdir_with_parents(folder, 0700) != 0) {
        snprintf(error, error_size, "[http] token_file: cannot make the folder %s: %s", folder,
                 g_strerror(errno));
        status = -1;
    }
    g_free(folder);
    return status;
}

/* A file already at `path` is replaced only when it is this user's own
 * regular file (lstat: a symbolic link is not followed). */
static const char *replaceable(const char *path)
{
    struct stat info;
    if (lstat(path, &info) != 0)
        return errno == ENOENT ? NULL : "cannot inspect it";
    if (!S_ISREG(info.st_mode))
        return "not a regular file";
    if (info.st_uid != geteuid())
        return "owned by another user";
    return NULL;
}

static const char *write_all(int fd, const char *token)
{
    size_t length = strlen(token);
    if (fchmod(fd, 0600) != 0)
        return "cannot make it private (chmod 0600)";
    if (write(fd, token, length) != (ssize_t)length || write(fd, "\n", 1) != 1)
        return "write failed";
    return NULL;
}

int moat_api_token_write(const char *path, const char *token, char *error, size_t error_size)
{
    if (make_folder(path, error, error_size) != 0)
        return -1;
    const char *problem = replaceable(path);
    if (problem) {
        snprintf(error, error_size, "[http] token_file: %s: %s", path, problem);
        return -1;
    }
    char *temporary = g_strconcat(path, ".XXXXXX", NULL);
    int fd = g_mkstemp_full(temporary, O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(error, error_size, "[http] token_file: cannot write beside %s: %s", path,
                 g_strerror(errno));
        g_free(temporary);
        return -1;
    }
    problem = write_all(fd, token);
    if (close(fd) != 0 && !problem)
        problem = "close failed";
    if (!problem && rename(temporary, path) != 0)
        problem = "cannot rename the new file over it";
    if (problem) {
        g_unlink(temporary);
        snprintf(error, error_size, "[http] token_file: %s: %s", path, problem);
    }
    g_free(temporary);
    return problem ? -1 : 0;
}

int moat_api_token_generate(moat_config *config, char **path, char *error, size_t error_size)
{
    *path = NULL;
    if ((config->token && *config->token) || moat_api_token_bind_is_loopback(config->http_bind))
        return 0;
    unsigned char bytes[TOKEN_BYTES];
    if (RAND_bytes(bytes, sizeof bytes) != 1) {
        snprintf(error, error_size, "cannot generate an API token: no random bytes");
        return -1;
    }
    char token[2 * TOKEN_BYTES + 1];
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf(token + 2 * i, 3, "%02x", bytes[i]);
    g_free(config->token);
    config->token = g_strdup(token);
    *path = config->token_file && *config->token_file ? g_strdup(config->token_file)
                                                      : moat_api_token_default_path();
    return 0;
}

/* The lane URLs of a tunnel peer and its random key (tunnel_lane_url.h). */
#include "tunnel_lane_url.h"

#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

/* 128 random bits as 32 hex digits and a NUL. */
static void peer_key(char key[33])
{
    uint8_t bytes[16];
    if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes) {
        for (size_t i = 0; i < sizeof bytes; i++)
            bytes[i] = (uint8_t)g_random_int_range(0, 256);
    }
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf(key + 2 * i, 3, "%02x", bytes[i]);
}

void tunnel_lane_urls(char **urls, unsigned n, const char *whip_url)
{
    if (n == 1) {
        urls[0] = g_strdup(whip_url);
        return;
    }
    char key[33];
    peer_key(key);
    size_t length = strlen(whip_url);
    while (length > 0 && whip_url[length - 1] == '/')
        length--;
    for (unsigned i = 0; i < n; i++)
        urls[i] = g_strdup_printf("%.*s/%s/%u", (int)length, whip_url, key, i);
}

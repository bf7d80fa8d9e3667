/* ICE short-term credentials (RFC 8839 §5.4): draws a session's ufrag and pwd
 * from getrandom over the ice-char alphabet, and says which bytes are
 * ice-chars. */
#include "ice/ice_credentials.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

/* 64 symbols, so each random byte's low six bits pick one without bias. */
static const char ice_chars[64] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "abcdefghijklmnopqrstuvwxyz"
                                  "0123456789+/";

bool moat_ice_char_valid(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
}

static int random_fill(uint8_t *out, size_t length)
{
    size_t done = 0;
    while (done < length) {
        ssize_t n = getrandom(out + done, length - done, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

int moat_ice_credentials_generate(char ufrag[MOAT_ICE_UFRAG_LENGTH + 1],
                                  char pwd[MOAT_ICE_PWD_LENGTH + 1])
{
    uint8_t random[MOAT_ICE_UFRAG_LENGTH + MOAT_ICE_PWD_LENGTH];

    if (random_fill(random, sizeof random) != 0) {
        ufrag[0] = '\0';
        pwd[0] = '\0';
        return -1;
    }
    for (size_t i = 0; i < MOAT_ICE_UFRAG_LENGTH; i++)
        ufrag[i] = ice_chars[random[i] & 63u];
    ufrag[MOAT_ICE_UFRAG_LENGTH] = '\0';
    for (size_t i = 0; i < MOAT_ICE_PWD_LENGTH; i++)
        pwd[i] = ice_chars[random[MOAT_ICE_UFRAG_LENGTH + i] & 63u];
    pwd[MOAT_ICE_PWD_LENGTH] = '\0';
    /* The password is a secret: do not leave its source bytes on the stack. */
    explicit_bzero(random, sizeof random);
    return 0;
}

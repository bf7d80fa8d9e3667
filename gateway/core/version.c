#include "core/version.h"

#include <jansson.h>
#include <nice/version.h>
#include <openssl/crypto.h>
#include <srtp2/srtp.h>
#include <stdio.h>
#include <usrsctp.h>

#ifndef MOAT_SRTP_CRYPTO_BACKEND
#define MOAT_SRTP_CRYPTO_BACKEND "unknown"
#endif

void moat_version_print(void)
{
    printf("moat %s\n", MOAT_VERSION);
    printf("libsrtp %s (crypto backend: %s)\n", srtp_get_version_string(),
           MOAT_SRTP_CRYPTO_BACKEND);
    printf("OpenSSL %s\n", OpenSSL_version(OPENSSL_VERSION));
    printf("libnice %s, jansson %s\n", NICE_VERSION_STRING, JANSSON_VERSION);
}

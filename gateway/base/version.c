/* The versions of Moat and of the libraries on its packet path (version.h). */
#include "base/version.h"

#include <jansson.h>
#include <openssl/crypto.h>
#include <srtp2/cipher.h>
#include <srtp2/srtp.h>
#include <string.h>
#include <stdio.h>

/* libsrtp names its cipher implementations; the AES-ICM one says which
 * crypto library does the work ("AES-128 counter mode using openssl"). */
extern const srtp_cipher_type_t srtp_aes_icm_128;

static const char *srtp_crypto_backend(void)
{
    const char *description = srtp_aes_icm_128.description;
    if (!description)
        return "unknown";
    if (strstr(description, "openssl"))
        return "openssl";
    if (strstr(description, "nss"))
        return "nss";
    return "builtin";
}

void moat_version_print(void)
{
    printf("moat %s\n", MOAT_VERSION);
    printf("%s (crypto backend: %s)\n", srtp_get_version_string(), srtp_crypto_backend());
    printf("%s\n", OpenSSL_version(OPENSSL_VERSION));
    printf("jansson %s\n", JANSSON_VERSION);
}

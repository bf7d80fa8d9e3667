/* DTLS-SRTP key export (RFC 5764 §4.2): reads the negotiated protection profile
 * and splits the "EXTRACTOR-dtls_srtp" exporter output into our keys and the
 * peer's, by which side of the handshake we were. */
#include "dtls_srtp_export.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/srtp.h>

#include "openssl_error.h"

#define EXPORTER_LABEL "EXTRACTOR-dtls_srtp"

moat_srtp_profile moat_dtls_srtp_selected_profile(SSL *ssl)
{
    const SRTP_PROTECTION_PROFILE *p = SSL_get_selected_srtp_profile(ssl);
    if (p == NULL)
        return 0;
    moat_srtp_profile profile = (moat_srtp_profile)p->id;
    return moat_srtp_profile_key_length(profile) != 0 ? profile : 0;
}

int moat_dtls_srtp_export(SSL *ssl, bool we_are_client, moat_srtp_keying *out, char *error,
                          size_t error_size)
{
    moat_srtp_profile profile = moat_dtls_srtp_selected_profile(ssl);
    if (profile == 0) {
        snprintf(error, error_size, "peer did not negotiate a supported DTLS-SRTP profile");
        return -1;
    }
    size_t key = moat_srtp_profile_key_length(profile);
    size_t salt = moat_srtp_profile_salt_length(profile);
    unsigned char material[2 * (MOAT_SRTP_MAX_KEY_LENGTH + MOAT_SRTP_MAX_SALT_LENGTH)];
    size_t material_length = 2 * (key + salt);

    if (SSL_export_keying_material(ssl, material, material_length, EXPORTER_LABEL,
                                   strlen(EXPORTER_LABEL), NULL, 0, 0) != 1) {
        char reason[160];
        moat_openssl_error_take(reason, sizeof reason, "exporter failed");
        snprintf(error, error_size, "cannot export SRTP keys: %s", reason);
        return -1;
    }

    /* RFC 5764 §4.2: client_write_key | server_write_key | client_salt |
     * server_salt. */
    const unsigned char *client_key = material;
    const unsigned char *server_key = material + key;
    const unsigned char *client_salt = material + 2 * key;
    const unsigned char *server_salt = material + 2 * key + salt;

    memset(out, 0, sizeof *out);
    out->profile = profile;
    out->key_length = key;
    out->salt_length = salt;
    memcpy(out->local_key, we_are_client ? client_key : server_key, key);
    memcpy(out->local_salt, we_are_client ? client_salt : server_salt, salt);
    memcpy(out->remote_key, we_are_client ? server_key : client_key, key);
    memcpy(out->remote_salt, we_are_client ? server_salt : client_salt, salt);
    OPENSSL_cleanse(material, sizeof material);
    return 0;
}

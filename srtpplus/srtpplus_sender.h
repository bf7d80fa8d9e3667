/* SRTP+ sender of one transport direction (SRTPPLUS.md sections 1, 3, 4). Around each
 * srtp_protect the caller does:
 *
 *   srtpplus_sender_prepare_rtp(tx, pkt, &len, cap);     plaintext: adds the chain block
 *   srtp_protect(srtp, pkt, &len);
 *   srtpplus_sender_append_tag_rtp(tx, pkt, &len, cap);  appends the 4-octet tag
 *
 * and srtpplus_sender_append_tag_rtcp after srtp_protect_rtcp. Per-SSRC state is made on
 * the first packet of an SSRC (our own packets, so no attacker can fill the table). */
#ifndef SRTPPLUS_SENDER_H
#define SRTPPLUS_SENDER_H

#include <stddef.h>
#include <stdint.h>

#include "srtpplus_profile.h"
#include "srtpplus_scheme.h"
#include "srtpplus_sender_stream.h"

#define SRTPPLUS_SENDER_DEFAULT_MAX_SSRCS 64

struct srtpplus_sender_config {
    enum srtpplus_scheme scheme;
    enum srtpplus_profile profile;
    struct srtpplus_chain_params chain; /* chain only */
    uint32_t max_ssrcs;                 /* 0: SRTPPLUS_SENDER_DEFAULT_MAX_SSRCS */
    srtpplus_random_fn random;          /* NULL: OpenSSL RAND_bytes */
    void *random_arg;
};

struct srtpplus_sender;

/* Defaults: the given scheme and profile, chain depth 32 and copies 2. */
void srtpplus_sender_config_init(struct srtpplus_sender_config *config, enum srtpplus_scheme scheme,
                                 enum srtpplus_profile profile);

/* master_key and master_salt are this direction's SRTP master key and salt; their
 * lengths must be the profile's. */
int srtpplus_sender_new(const struct srtpplus_sender_config *config, const uint8_t *master_key,
                        size_t key_len, const uint8_t *master_salt, size_t salt_len,
                        struct srtpplus_sender **out);
void srtpplus_sender_free(struct srtpplus_sender *sender);

/* Declares an SSRC whose first packet has roll-over counter roc (otherwise 0). */
int srtpplus_sender_add_ssrc(struct srtpplus_sender *sender, uint32_t ssrc, uint32_t roc);

/* Octets SRTP+ adds to an RTP packet at most (chain block + tag); buffers need this
 * plus SRTP_MAX_TRAILER_LEN of room. */
size_t srtpplus_sender_rtp_overhead(const struct srtpplus_sender *sender);

/* Before srtp_protect, on the plaintext RTP packet. For chain adds the chain block and
 * sets P. SRTPPLUS_ERR_PADDING means the existing padding leaves no room for a block:
 * the packet is unchanged and may still be protected and tagged. */
int srtpplus_sender_prepare_rtp(struct srtpplus_sender *sender, uint8_t *rtp, size_t *len,
                                size_t capacity);

/* After srtp_protect: appends the packet's tag. */
int srtpplus_sender_append_tag_rtp(struct srtpplus_sender *sender, uint8_t *srtp, size_t *len,
                                   size_t capacity);

/* After srtp_protect_rtcp: appends tag_prn(1, sender SSRC, SRTCP index). */
int srtpplus_sender_append_tag_rtcp(struct srtpplus_sender *sender, uint8_t *srtcp, size_t *len,
                                    size_t capacity);

#endif

/* The ng datagrams of bench/voip: commands encoded as `<cookie> <bencode
 * dictionary>`, and the few fields of a reply the load generator reads
 * (result, error-reason, the SDP's media address). Pure functions over
 * caller-owned buffers; no allocation. */
#ifndef NG_WIRE_H
#define NG_WIRE_H

#include <netinet/in.h>
#include <stddef.h>

typedef enum { NG_OFFER, NG_ANSWER, NG_DELETE } ng_command;

/* A slice of a datagram (not NUL-terminated). */
typedef struct {
    const char *data;
    size_t len;
} ng_text;

typedef struct {
    ng_text cookie, result, error_reason, sdp;
} ng_reply;

/* Writes the datagram for `command` on call `index` (side addresses from
 * voip_side_address, RTP on `media_port`) into `out`; returns its length,
 * or 0 when it does not fit. */
size_t ng_encode(char *out, size_t size, ng_command command, const char *run, unsigned index,
                 uint16_t media_port);

/* Splits `data` into its cookie and the reply's fields; 0 on success, -1
 * when it is not `<cookie> <dictionary>`. Slices point into `data`. */
int ng_decode(const char *data, size_t len, ng_reply *reply);

/* The audio m-line's address and port from `sdp` (its c= line, else the
 * session's); 0 on success. */
int ng_sdp_media(ng_text sdp, struct sockaddr_in *out);

/* Parses a cookie written by ng_encode; 0 and its call and command when it
 * is one of `run`'s. */
int ng_cookie_parse(ng_text cookie, const char *run, unsigned *index, ng_command *command);

#endif

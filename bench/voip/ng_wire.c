/* bench/voip's ng wire format: command encoding, a bencode reader that
 * only walks the reply's top-level dictionary, and the SDP lines that say
 * where the relay wants media. Input is the relay's reply: every length is
 * checked before a read. */
#include "ng_wire.h"
#include "voip_load.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char command_letter[] = {'o', 'a', 'd'};
static const char *const command_name[] = {"offer", "answer", "delete"};

typedef struct {
    char *data;
    size_t size, len;
    int overflow;
} writer;

static void put(writer *w, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    size_t left = w->size - w->len;
    int n = vsnprintf(w->data + w->len, left, format, args);
    va_end(args);
    if (n < 0 || (size_t)n >= left) {
        w->overflow = 1;
        return;
    }
    w->len += (size_t)n;
}

static void put_string(writer *w, const char *s)
{
    put(w, "%zu:%s", strlen(s), s);
}

static void put_sdp(writer *w, unsigned index, unsigned side, uint16_t port)
{
    char address[INET_ADDRSTRLEN], sdp[512];
    struct in_addr a = voip_side_address(index, side);
    inet_ntop(AF_INET, &a, address, sizeof address);
    snprintf(sdp, sizeof sdp,
             "v=0\r\no=- %u %u IN IP4 %s\r\ns=-\r\nc=IN IP4 %s\r\nt=0 0\r\n"
             "m=audio %u RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=ptime:20\r\na=sendrecv\r\n",
             index + 1, side + 1, address, address, (unsigned)port);
    put_string(w, sdp);
}

size_t ng_encode(char *out, size_t size, ng_command command, const char *run, unsigned index,
                 uint16_t media_port)
{
    writer w = {.data = out, .size = size};
    char call_id[64];
    snprintf(call_id, sizeof call_id, "voip-%s-%u", run, index);
    /* Keys in bencode's sorted order. */
    put(&w, "%s_%u_%c d7:call-id", run, index, command_letter[command]);
    put_string(&w, call_id);
    put(&w, "7:command");
    put_string(&w, command_name[command]);
    if (command == NG_DELETE)
        put(&w, "12:delete-delayi0e");
    put(&w, "8:from-tag");
    put_string(&w, "caller");
    if (command != NG_DELETE)
        put(&w, "3:sdp"), put_sdp(&w, index, command == NG_OFFER ? 0 : 1, media_port);
    if (command == NG_ANSWER) {
        put(&w, "6:to-tag");
        put_string(&w, "callee");
    }
    put(&w, "e");
    return w.overflow ? 0 : w.len;
}

/* Reads a bencode string at *p; 0 and its slice on success. */
static int read_string(const char **p, const char *end, ng_text *out)
{
    size_t len = 0;
    const char *q = *p;
    if (q >= end || *q < '0' || *q > '9')
        return -1;
    for (; q < end && *q >= '0' && *q <= '9'; q++) {
        if (len > 100000)
            return -1;
        len = len * 10 + (size_t)(*q - '0');
    }
    if (q >= end || *q != ':' || (size_t)(end - q - 1) < len)
        return -1;
    *out = (ng_text){q + 1, len};
    *p = q + 1 + len;
    return 0;
}

/* Skips one bencode value at *p, nesting at most `depth` deep. */
static int skip_value(const char **p, const char *end, int depth)
{
    ng_text ignored;
    if (*p >= end || depth <= 0)
        return -1;
    char lead = **p;
    if (lead == 'i') {
        const char *e = memchr(*p, 'e', (size_t)(end - *p));
        if (!e)
            return -1;
        *p = e + 1;
        return 0;
    }
    if (lead != 'l' && lead != 'd')
        return read_string(p, end, &ignored);
    (*p)++;
    while (*p < end && **p != 'e') {
        if (skip_value(p, end, depth - 1) < 0)
            return -1;
    }
    if (*p >= end)
        return -1;
    (*p)++;
    return 0;
}

static int is_key(ng_text key, const char *name)
{
    return key.len == strlen(name) && memcmp(key.data, name, key.len) == 0;
}

int ng_decode(const char *data, size_t len, ng_reply *reply)
{
    *reply = (ng_reply){0};
    const char *end = data + len, *space = memchr(data, ' ', len);
    if (!space || space == data)
        return -1;
    reply->cookie = (ng_text){data, (size_t)(space - data)};
    const char *p = space + 1;
    if (p >= end || *p != 'd')
        return -1;
    p++;
    while (p < end && *p != 'e') {
        ng_text key, value;
        if (read_string(&p, end, &key) < 0)
            return -1;
        if (p < end && *p >= '0' && *p <= '9') {
            if (read_string(&p, end, &value) < 0)
                return -1;
            if (is_key(key, "result"))
                reply->result = value;
            else if (is_key(key, "error-reason"))
                reply->error_reason = value;
            else if (is_key(key, "sdp"))
                reply->sdp = value;
            continue;
        }
        if (skip_value(&p, end, 32) < 0)
            return -1;
    }
    return p < end ? 0 : -1;
}

/* The next line of `sdp` from *pos, without its CR LF. */
static int next_line(ng_text sdp, size_t *pos, ng_text *line)
{
    if (*pos >= sdp.len)
        return 0;
    const char *start = sdp.data + *pos;
    const char *nl = memchr(start, '\n', sdp.len - *pos);
    size_t len = nl ? (size_t)(nl - start) : sdp.len - *pos;
    *pos += len + (nl ? 1 : 0);
    if (len && start[len - 1] == '\r')
        len--;
    *line = (ng_text){start, len};
    return 1;
}

static int starts(ng_text line, const char *prefix)
{
    size_t n = strlen(prefix);
    return line.len >= n && memcmp(line.data, prefix, n) == 0;
}

static int parse_address(ng_text line, struct in_addr *out)
{
    char text[INET_ADDRSTRLEN] = {0};
    size_t n = line.len - strlen("c=IN IP4 ");
    if (n >= sizeof text)
        return -1;
    memcpy(text, line.data + strlen("c=IN IP4 "), n);
    char *slash = strchr(text, '/');
    if (slash)
        *slash = 0;
    return inet_pton(AF_INET, text, out) == 1 ? 0 : -1;
}

int ng_sdp_media(ng_text sdp, struct sockaddr_in *out)
{
    struct in_addr session = {0}, media = {0};
    int have_session = 0, have_media = 0, in_audio = 0;
    long port = -1;
    size_t pos = 0;
    ng_text line;
    while (next_line(sdp, &pos, &line)) {
        if (starts(line, "m=")) {
            in_audio = port < 0 && starts(line, "m=audio ");
            if (in_audio) {
                char text[16] = {0};
                size_t n = line.len - 8 < sizeof text - 1 ? line.len - 8 : sizeof text - 1;
                memcpy(text, line.data + 8, n);
                port = strtol(text, NULL, 10);
            }
        } else if (starts(line, "c=IN IP4 ")) {
            struct in_addr a;
            if (parse_address(line, &a) < 0)
                return -1;
            if (in_audio)
                media = a, have_media = 1;
            else if (port < 0)
                session = a, have_session = 1;
        }
    }
    if (port <= 0 || port > 65535 || (!have_media && !have_session))
        return -1;
    *out = (struct sockaddr_in){.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr = have_media ? media : session};
    return 0;
}

int ng_cookie_parse(ng_text cookie, const char *run, unsigned *index, ng_command *command)
{
    /* Two zero bytes past the longest cookie: the checks below read up to
     * two bytes past the number, which may end at the cookie's last byte. */
    enum { MAX_COOKIE = 63 };
    char text[MAX_COOKIE + 3] = {0};
    size_t run_len = strlen(run);
    if (cookie.len > MAX_COOKIE || cookie.len < run_len + 4)
        return -1;
    memcpy(text, cookie.data, cookie.len);
    if (memcmp(text, run, run_len) != 0 || text[run_len] != '_' || text[run_len + 1] < '0' ||
        text[run_len + 1] > '9')
        return -1;
    char *end = NULL;
    unsigned long i = strtoul(text + run_len + 1, &end, 10);
    if (!end || end[0] != '_' || end[2] != 0 || i >= VOIP_MAX_CALLS)
        return -1;
    const char *letter = memchr(command_letter, end[1], sizeof command_letter);
    if (!letter)
        return -1;
    *index = (unsigned)i;
    *command = (ng_command)(letter - command_letter);
    return 0;
}

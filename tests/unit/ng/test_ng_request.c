/* ng requests: dictionaries shaped like Kamailio's rtpengine module sends
 * them, keys with spaces / hyphens / underscores, flags as plain strings
 * and "key=value" strings, and values of the wrong shape. Inputs are
 * written as JSON (ng_test_json.h) and bencoded. */
#include <glib.h>
#include <string.h>

#include "ng/ng_request.h"
#include "ng_test_json.h"

typedef struct {
    moat_bencode *dictionary;
    moat_ng_request request;
} parsed;

static moat_bencode *bencode_of(const char *json)
{
    GByteArray *bytes = ng_test_bencode(json);
    char error[160] = "";
    moat_bencode *value = moat_bencode_parse(bytes->data, bytes->len, NULL, error, sizeof error);
    if (!value)
        g_error("bencode: %s", error);
    g_byte_array_free(bytes, TRUE);
    return value;
}

static void parse_ok(parsed *p, const char *json)
{
    char error[160] = "";
    p->dictionary = bencode_of(json);
    if (moat_ng_request_parse(p->dictionary, &p->request, error, sizeof error) != 0)
        g_error("request: %s", error);
}

static void parsed_clear(parsed *p)
{
    moat_ng_request_clear(&p->request);
    moat_bencode_free(p->dictionary);
}

static void parse_fails(const char *json, const char *expected)
{
    char error[160] = "";
    moat_bencode *dictionary = bencode_of(json);
    moat_ng_request request;
    g_assert_cmpint(moat_ng_request_parse(dictionary, &request, error, sizeof error), ==, -1);
    if (strstr(error, expected) == NULL)
        g_error("error \"%s\" does not contain \"%s\" (%s)", error, expected, json);
    moat_ng_request_clear(&request);
    moat_bencode_free(dictionary);
}

/* What Kamailio 5.6 sends for rtpengine_offer("replace-origin
 * replace-session-connection ICE=force DTLS=passive RTP/SAVPF rtcp-mux-offer
 * SDES-off trust-address direction=internal direction=external
 * codec-strip=PCMA"): its own keys in its own order, then the ones derived
 * from the flags (unsorted). */
static const char kamailio_offer[] =
    "{\"sdp\": \"v=0\\r\\no=- 1 1 IN IP4\", \"flags\": [\"trust-address\"],"
    " \"replace\": [\"origin\", \"session-connection\"], \"rtcp-mux\": [\"offer\"],"
    " \"direction\": [\"internal\", \"external\"], \"ICE\": \"force\", \"DTLS\": \"passive\","
    " \"SDES\": [\"off\"], \"codec-strip\": \"PCMA\", \"transport-protocol\": \"RTP/SAVPF\","
    " \"call-id\": \"abc@10.0.0.1\", \"via-branch\": \"z9hG4bK.1234\","
    " \"received-from\": [\"IP4\", \"10.0.0.1\"], \"from-tag\": \"ft-123\","
    " \"command\": \"offer\"}";

static void test_kamailio_offer(void)
{
    parsed p;
    parse_ok(&p, kamailio_offer);
    const moat_ng_request *r = &p.request;
    g_assert_cmpint(r->command, ==, MOAT_NG_OFFER);
    g_assert_cmpstr(r->command_name, ==, "offer");
    g_assert_cmpstr(r->call_id, ==, "abc@10.0.0.1");
    g_assert_cmpstr(r->from_tag, ==, "ft-123");
    g_assert_null(r->to_tag);
    g_assert_cmpstr(r->via_branch, ==, "z9hG4bK.1234");
    g_assert_cmpuint(r->sdp_length, ==, 19);
    g_assert_true(r->trust_address);
    g_assert_true(r->replace_origin);
    g_assert_true(r->replace_session_connection);
    g_assert_cmpuint(r->rtcp_mux, ==, MOAT_NG_RTCP_MUX_OFFER);
    g_assert_cmpstr(r->direction[0], ==, "internal");
    g_assert_cmpstr(r->direction[1], ==, "external");
    g_assert_cmpint(r->ice, ==, MOAT_NG_ICE_FORCE);
    g_assert_cmpint(r->dtls, ==, MOAT_NG_DTLS_PASSIVE);
    g_assert_true(r->sdes_off);
    g_assert_cmpuint(r->codec_strip.count, ==, 1);
    g_assert_cmpstr(r->codec_strip.names[0], ==, "PCMA");
    g_assert_cmpstr(r->transport_protocol, ==, "RTP/SAVPF");
    g_assert_cmpstr(r->received_from_family, ==, "IP4");
    g_assert_cmpstr(r->received_from_address, ==, "10.0.0.1");
    g_assert_cmpint(r->delete_delay_s, ==, -1);
    g_assert_true(r->dictionary == p.dictionary);
    char error[64] = "";
    g_assert_cmpint(moat_ng_request_check(r, error, sizeof error), ==, 0);
    parsed_clear(&p);
}

/* The same meanings with rtpengine's spelling of the keys (spaces), other
 * case and underscores, and everything else as strings inside "flags". */
static void test_spellings(void)
{
    parsed p;
    parse_ok(&p, "{\"command\": \"answer\", \"call-id\": \"c\", \"from_tag\": \"f\","
                 " \"To-Tag\": \"t\", \"sdp\": \"v=0\", \"transport protocol\": \"rtp/avp\","
                 " \"received from\": \"IP4 1.2\", \"address family\": \"ip6\","
                 " \"delete delay\": \"15\", \"media address\": \"192.0.2.1\","
                 " \"flags\": [\"ICE=force\", \"DTLS=passive\", \"SDES-off\", \"SDES-no-AES\","
                 " \"codec-strip-G722,PCMA\", \"codec-offer-PCMU\", \"replace-origin\","
                 " \"rtcp-mux-demux\", \"FATAL\", \"symmetric\", \"asymmetric\","
                 " \"strict source\", \"port_latching\", \"record-call\", \"internal\","
                 " \"direction=external\", \"codec-transcode=opus\", \"codec_mask_all\","
                 " \"flags=x=1\", \"unknown-flag\", \"SDES-only-AEAD_AES_128_GCM\"]}");
    const moat_ng_request *r = &p.request;
    g_assert_cmpint(r->command, ==, MOAT_NG_ANSWER);
    g_assert_cmpstr(r->from_tag, ==, "f");
    g_assert_cmpstr(r->to_tag, ==, "t");
    g_assert_cmpstr(r->transport_protocol, ==, "RTP/AVP");
    g_assert_cmpstr(r->received_from_family, ==, "IP4");
    g_assert_cmpstr(r->received_from_address, ==, "1.2");
    g_assert_cmpstr(r->address_family, ==, "IP6");
    g_assert_cmpint(r->delete_delay_s, ==, 15);
    g_assert_cmpstr(r->media_address, ==, "192.0.2.1");
    g_assert_cmpint(r->ice, ==, MOAT_NG_ICE_FORCE);
    g_assert_cmpint(r->dtls, ==, MOAT_NG_DTLS_PASSIVE);
    g_assert_true(r->sdes_off);
    g_assert_cmpuint(r->n_sdes_no, ==, 0); /* "AES" is no suite name */
    g_assert_cmpuint(r->n_sdes_only, ==, 1);
    g_assert_cmpstr(r->sdes_only[0], ==, "AEAD_AES_128_GCM");
    g_assert_cmpuint(r->codec_strip.count, ==, 2);
    g_assert_cmpstr(r->codec_strip.names[0], ==, "G722");
    g_assert_cmpstr(r->codec_strip.names[1], ==, "PCMA");
    g_assert_cmpstr(r->codec_offer.names[0], ==, "PCMU");
    g_assert_cmpstr(r->codec_transcode.names[0], ==, "opus");
    g_assert_cmpstr(r->codec_mask.names[0], ==, "all");
    g_assert_true(r->replace_origin);
    g_assert_false(r->replace_session_connection);
    g_assert_cmpuint(r->rtcp_mux, ==, MOAT_NG_RTCP_MUX_DEMUX);
    g_assert_true(r->fatal && r->symmetric && r->asymmetric && r->strict_source);
    g_assert_true(r->port_latching && r->record_call);
    g_assert_cmpstr(r->direction[0], ==, "internal");
    g_assert_cmpstr(r->direction[1], ==, "external");
    parsed_clear(&p);
}

static void test_lists_and_dicts(void)
{
    parsed p;
    parse_ok(&p,
             "{\"command\": \"offer\", \"call-id\": \"c\","
             " \"codec\": {\"strip\": [\"all\", \"G722\"], \"offer\": [\"PCMU\"],"
             " \"transcode\": [\"opus\", \"PCMA\"], \"mask\": [\"PCMA\"], \"except\": \"G729\"},"
             " \"rtcp-mux\": [\"accept\", \"require\", \"reject\", \"foo\", 1],"
             " \"SDES\": [\"only-AES_CM_128_HMAC_SHA1_80\", \"no-AES_CM_128_HMAC_SHA1_32\","
             " \"AES_256_CM_HMAC_SHA1_80\"], \"ICE\": \"remove\", \"DTLS\": \"no\","
             " \"delete-delay\": 0, \"record call\": \"yes\"}");
    const moat_ng_request *r = &p.request;
    g_assert_cmpuint(r->codec_strip.count, ==, 2);
    g_assert_cmpstr(r->codec_strip.names[0], ==, "all");
    g_assert_cmpuint(r->codec_transcode.count, ==, 2);
    g_assert_cmpstr(r->codec_mask.names[0], ==, "PCMA");
    g_assert_cmpuint(r->rtcp_mux, ==,
                     MOAT_NG_RTCP_MUX_ACCEPT | MOAT_NG_RTCP_MUX_REQUIRE | MOAT_NG_RTCP_MUX_REJECT);
    g_assert_cmpuint(r->n_sdes_only, ==, 2);
    g_assert_cmpstr(r->sdes_only[0], ==, "AES_CM_128_HMAC_SHA1_80");
    g_assert_cmpstr(r->sdes_only[1], ==, "AES_256_CM_HMAC_SHA1_80");
    g_assert_cmpuint(r->n_sdes_no, ==, 1);
    g_assert_cmpstr(r->sdes_no[0], ==, "AES_CM_128_HMAC_SHA1_32");
    g_assert_false(r->sdes_off);
    g_assert_cmpint(r->ice, ==, MOAT_NG_ICE_REMOVE);
    g_assert_cmpint(r->dtls, ==, MOAT_NG_DTLS_OFF);
    g_assert_cmpint(r->delete_delay_s, ==, 0);
    g_assert_true(r->record_call);
    char error[64] = "";
    g_assert_cmpint(moat_ng_request_check(r, error, sizeof error), ==, -1);
    g_assert_cmpstr(error, ==, "missing from-tag");
    parsed_clear(&p);
}

static void test_bounds(void)
{
    /* More codecs, directions and suites than the request holds: the first
     * ones are kept. */
    GString *json = g_string_new("{\"command\": \"offer\", \"codec-strip\": [");
    for (int i = 0; i < 40; i++)
        g_string_append_printf(json, "%s\"C%d\"", i ? ", " : "", i);
    g_string_append(json, "], \"direction\": [\"a\", \"b\", \"c\"], \"SDES\": [");
    for (int i = 0; i < 20; i++)
        g_string_append_printf(json, "%s\"AES_CM_128_HMAC_SHA1_80\"", i ? ", " : "");
    g_string_append(json, "]}");
    parsed p;
    parse_ok(&p, json->str);
    g_assert_cmpuint(p.request.codec_strip.count, ==, MOAT_NG_MAX_CODECS);
    g_assert_cmpstr(p.request.codec_strip.names[15], ==, "C15");
    g_assert_cmpstr(p.request.direction[1], ==, "b");
    g_assert_cmpuint(p.request.n_sdes_only, ==, MOAT_NG_MAX_SUITES);
    parsed_clear(&p);
    g_string_free(json, TRUE);
}

static void test_commands(void)
{
    const struct {
        const char *json;
        moat_ng_command command;
    } cases[] = {
        {"{\"command\": \"ping\"}", MOAT_NG_PING},
        {"{\"command\": \"delete\"}", MOAT_NG_DELETE},
        {"{\"command\": \"query\"}", MOAT_NG_QUERY},
        {"{\"command\": \"list\"}", MOAT_NG_LIST},
        {"{\"command\": \"PING\"}", MOAT_NG_PING},
        {"{\"command\": \"start recording\"}", MOAT_NG_UNKNOWN},
        {"{\"command\": \"foo\"}", MOAT_NG_UNKNOWN},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        parsed p;
        parse_ok(&p, cases[i].json);
        g_assert_cmpint(p.request.command, ==, cases[i].command);
        parsed_clear(&p);
    }
    g_assert_cmpstr(moat_ng_command_name(MOAT_NG_DELETE), ==, "delete");
    g_assert_cmpstr(moat_ng_command_name((moat_ng_command)99), ==, "unknown");
}

static void test_checks(void)
{
    const struct {
        const char *json;
        const char *error;
    } cases[] = {
        {"{\"command\": \"delete\"}", "missing call-id"},
        {"{\"command\": \"query\", \"call-id\": \"\"}", "missing call-id"},
        {"{\"command\": \"offer\", \"call-id\": \"c\", \"from-tag\": \"f\"}", "missing sdp"},
        {"{\"command\": \"answer\", \"call-id\": \"c\", \"from-tag\": \"f\", \"sdp\": \"\"}",
         "missing sdp"},
        {"{\"command\": \"delete\", \"call-id\": \"c\"}", ""},
        {"{\"command\": \"ping\"}", ""},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        parsed p;
        parse_ok(&p, cases[i].json);
        char error[64] = "";
        int status = moat_ng_request_check(&p.request, error, sizeof error);
        g_assert_cmpint(status, ==, cases[i].error[0] ? -1 : 0);
        g_assert_cmpstr(error, ==, cases[i].error);
        parsed_clear(&p);
    }
}

static void test_refusals(void)
{
    parse_fails("{\"call\": {}}", "missing command");
    parse_fails("{\"command\": 1}", "invalid command");
    parse_fails("{\"command\": \"\"}", "invalid command");
    parse_fails("{\"command\": \"pi\\u0000ng\"}", "invalid command");
    parse_fails("{\"command\": \"offer\", \"call-id\": 5}", "invalid value for call-id");
    parse_fails("{\"command\": \"offer\", \"call-id\": \"a\\u0000b\"}",
                "invalid value for call-id");
    parse_fails("{\"command\": \"offer\", \"from-tag\": []}", "invalid value for from-tag");
    parse_fails("{\"command\": \"offer\", \"transport-protocol\": \"TCP\"}",
                "unsupported transport");
    parse_fails("{\"command\": \"offer\", \"flags\": [\"transport-protocol=X\"]}",
                "unsupported transport");
    parse_fails("{\"command\": \"delete\", \"delete-delay\": \"abc\"}",
                "invalid value for delete-delay");
    parse_fails("{\"command\": \"delete\", \"delete-delay\": -1}",
                "invalid value for delete-delay");
    parse_fails("{\"command\": \"delete\", \"delete-delay\": 999999999999}",
                "invalid value for delete-delay");
    parse_fails("{\"command\": \"offer\", \"address family\": \"IPX\"}",
                "invalid value for address-family");
    parse_fails("{\"command\": \"offer\", \"received-from\": [\"a\"]}",
                "invalid value for received-from");
    parse_fails("{\"command\": \"offer\", \"received-from\": \"IP\"}",
                "invalid value for received-from");
    parse_fails("{\"command\": \"offer\", \"codec\": \"PCMA\"}", "invalid value for codec");
    parse_fails("{\"command\": \"offer\", \"codec\": {\"strip\": 1}}", "invalid value for codec");
    parse_fails("{\"command\": \"offer\", \"flags\": 1}", "invalid value for flags");
    parse_fails("{\"command\": \"offer\", \"replace\": {\"a\": \"b\"}}",
                "invalid value for replace");

    moat_ng_request request;
    char error[64] = "";
    moat_bencode *list = moat_bencode_new_list();
    g_assert_cmpint(moat_ng_request_parse(list, &request, error, sizeof error), ==, -1);
    g_assert_cmpstr(error, ==, "command is not a dictionary");
    moat_ng_request_clear(&request);
    moat_bencode_free(list);
}

static void test_ignored(void)
{
    /* Unknown keys, unknown flags, odd list items and unknown enumeration
     * values change nothing. */
    parsed p;
    parse_ok(&p, "{\"command\": \"offer\", \"TOS\": 184, \"label\": {\"a\": 1},"
                 " \"flags\": [1, \"loud!\", [], \"\"], \"ICE\": \"optional\", \"DTLS\": \"wild\","
                 " \"SDES\": [\"unencrypted_srtp\", \"only\"],"
                 " \"replace\": [\"username\", \"SDP-version\"]}");
    const moat_ng_request *r = &p.request;
    g_assert_cmpint(r->ice, ==, MOAT_NG_ICE_DEFAULT);
    g_assert_cmpint(r->dtls, ==, MOAT_NG_DTLS_DEFAULT);
    g_assert_false(r->sdes_off);
    g_assert_cmpuint(r->n_sdes_only, ==, 0);
    g_assert_false(r->replace_origin || r->replace_session_connection);
    g_assert_false(r->trust_address);
    parsed_clear(&p);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ng-request/kamailio-offer", test_kamailio_offer);
    g_test_add_func("/ng-request/spellings", test_spellings);
    g_test_add_func("/ng-request/lists-and-dicts", test_lists_and_dicts);
    g_test_add_func("/ng-request/bounds", test_bounds);
    g_test_add_func("/ng-request/commands", test_commands);
    g_test_add_func("/ng-request/checks", test_checks);
    g_test_add_func("/ng-request/refusals", test_refusals);
    g_test_add_func("/ng-request/ignored", test_ignored);
    return g_test_run();
}

/* Server text on the tools' outputs (tool_text.h): control bytes (ESC, BEL,
 * CR), DEL and every byte from 0x80 become '?'; a quoted summary field
 * escapes '"' and '\\' and is never cut inside an escape; and moat-flood's
 * --json keeps a session's "error" key when the text is not UTF-8 (an
 * honest message cut inside a character: jansson refuses it, and the key
 * used to vanish). */
#include "flood_reports.h"
#include "tool_text.h"

#include <glib.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

static void test_printable(void)
{
    char text[] = "\x1b]0;PWNED\x07\x1b[2Jred\" end=\"x\xff\xfe caf\xc3\xa9\r\n\x7f ok";
    tool_text_printable(text);
    g_assert_cmpstr(text, ==, "?]0;PWNED??[2Jred\" end=\"x?? caf????? ok");
    for (const char *p = text; *p; p++)
        g_assert_true(*p >= 0x20 && *p < 0x7f);
    char empty[] = "";
    tool_text_printable(empty);
    g_assert_cmpstr(empty, ==, "");
}

static void test_quoted(void)
{
    char out[64];
    tool_text_quoted("HTTP 400 red\" packets_in=999 end=\"fake\\", out, sizeof out);
    g_assert_cmpstr(out, ==, "HTTP 400 red\\\" packets_in=999 end=\\\"fake\\\\");
    tool_text_quoted("\x1b[31m\xc3", out, sizeof out);
    g_assert_cmpstr(out, ==, "?[31m?");
    /* Cut to fit, never between a backslash and what it escapes. */
    char small[5];
    tool_text_quoted("ab\"cd", small, sizeof small);
    g_assert_cmpstr(small, ==, "ab\\\"");
    char smaller[4];
    tool_text_quoted("ab\"cd", smaller, sizeof smaller);
    g_assert_cmpstr(smaller, ==, "ab");
    tool_text_quoted("x", out, 1);
    g_assert_cmpstr(out, ==, "");
}

static void test_json_keeps_an_error_that_is_not_utf8(void)
{
    flood_options options;
    memset(&options, 0, sizeof options);
    flood_session sessions[2];
    memset(sessions, 0, sizeof sessions);
    sessions[0].state = FLOOD_SESSION_FAILED;
    /* "... café" cut inside the é, then an invalid byte. */
    g_strlcpy(sessions[0].error, "WHIP POST: HTTP 400 caf\xc3", sizeof sessions[0].error);
    sessions[1].index = 1;
    sessions[1].state = FLOOD_SESSION_FAILED;
    g_strlcpy(sessions[1].error, "plain", sizeof sessions[1].error);
    flood_result result;
    memset(&result, 0, sizeof result);
    result.options = &options;
    result.sessions = sessions;
    result.n_sessions = 2;
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    char error[128];
    g_assert_cmpint(report_json(out, &result, error, sizeof error), ==, 0);
    fclose(out);
    json_error_t parse_error;
    json_t *root = json_loads(text, 0, &parse_error);
    g_assert_nonnull(root);
    json_t *each = json_object_get(root, "sessions");
    g_assert_cmpstr(json_string_value(json_object_get(json_array_get(each, 0), "error")), ==,
                    "WHIP POST: HTTP 400 caf?");
    g_assert_cmpstr(json_string_value(json_object_get(json_array_get(each, 1), "error")), ==,
                    "plain");
    json_decref(root);
    free(text);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tool_text/printable", test_printable);
    g_test_add_func("/tool_text/quoted", test_quoted);
    g_test_add_func("/tool_text/json_keeps_the_error", test_json_keeps_an_error_that_is_not_utf8);
    return g_test_run();
}

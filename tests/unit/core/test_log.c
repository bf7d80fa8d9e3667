/* The log line: a message carrying a peer's text (a data channel's label,
 * logged at debug) stays inside its quotes and on its one line, whatever
 * bytes it holds; valid UTF-8 is written as it is. */
#include "base/log.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The whole line moat_log_write writes to stderr for `message`. */
static char *log_line(const char *message)
{
    fflush(stderr);
    FILE *capture = tmpfile();
    g_assert_nonnull(capture);
    int saved = dup(STDERR_FILENO);
    g_assert_cmpint(dup2(fileno(capture), STDERR_FILENO), ==, STDERR_FILENO);
    moat_log_write(MOAT_LOG_ERROR, "test", NULL, "%s", message);
    fflush(stderr);
    g_assert_cmpint(dup2(saved, STDERR_FILENO), ==, STDERR_FILENO);
    close(saved);
    rewind(capture);
    char buffer[4096];
    size_t length = fread(buffer, 1, sizeof buffer - 1, capture);
    fclose(capture);
    buffer[length] = '\0';
    return g_strdup(buffer);
}

/* What stands between msg=" and the closing quote, after checking that the
 * line is one line with no control byte but its newline. */
static char *logged_message(const char *message)
{
    char *line = log_line(message);
    size_t length = strlen(line);
    g_assert_cmpuint(length, >, 0);
    g_assert_cmpint(line[length - 1], ==, '\n');
    for (size_t i = 0; i + 1 < length; i++) {
        unsigned char c = (unsigned char)line[i];
        g_assert_true(c >= 0x20 && c != 0x7f);
    }
    const char *start = strstr(line, " msg=\"");
    g_assert_nonnull(start);
    start += strlen(" msg=\"");
    g_assert_cmpstr(line + length - 2, ==, "\"\n");
    char *out = g_strndup(start, (gsize)(line + length - 2 - start));
    g_free(line);
    return out;
}

static void expect_message(const char *message, const char *expected)
{
    char *logged = logged_message(message);
    g_assert_cmpstr(logged, ==, expected);
    g_free(logged);
}

/* The review's label: ESC sequences, a CR and a forged line, a BEL. */
static void test_forged_line_stays_in_its_quotes(void)
{
    expect_message("channel \"x\x1b[2J\x1b[31mRED\rts=2099-01-01T00:00:00.000Z level=error "
                   "component=gateway msg=\"forged\"\x07\" open",
                   "channel \\\"x\\x1b[2J\\x1b[31mRED\\rts=2099-01-01T00:00:00.000Z level=error "
                   "component=gateway msg=\\\"forged\\\"\\x07\\\" open");
}

static void test_control_bytes(void)
{
    expect_message("a\nb\rc\td", "a\\nb\\rc\\td");
    expect_message("\x01\x08\x0b\x0c\x1f\x7f", "\\x01\\x08\\x0b\\x0c\\x1f\\x7f");
    expect_message("back\\slash", "back\\\\slash");
    /* C1 controls are valid UTF-8 some terminals obey (U+009B is CSI). */
    expect_message("\xc2\x9b"
                   "31m \xc2\x85",
                   "\\xc2\\x9b31m \\xc2\\x85");
}

static void test_invalid_utf8_is_escaped(void)
{
    expect_message("\xff\xfe", "\\xff\\xfe");
    expect_message("\x80 lone", "\\x80 lone");
    expect_message("\xc0\xaf overlong", "\\xc0\\xaf overlong");
    expect_message("\xe0\x80\xaf overlong", "\\xe0\\x80\\xaf overlong");
    expect_message("\xed\xa0\x80 surrogate", "\\xed\\xa0\\x80 surrogate");
    expect_message("\xf4\x90\x80\x80 beyond", "\\xf4\\x90\\x80\\x80 beyond");
    expect_message("cut \xe2\x82", "cut \\xe2\\x82");
    expect_message("\xe2\x82 cut", "\\xe2\\x82 cut");
}

static void test_valid_utf8_is_kept(void)
{
    const char *text = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e \xc2\xa0 \xef\xbf\xbd";
    expect_message(text, text);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/log/forged-line", test_forged_line_stays_in_its_quotes);
    g_test_add_func("/log/control-bytes", test_control_bytes);
    g_test_add_func("/log/invalid-utf8", test_invalid_utf8_is_escaped);
    g_test_add_func("/log/valid-utf8", test_valid_utf8_is_kept);
    return g_test_run();
}

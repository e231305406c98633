/*
 * Unit tests of lib/strbuf.c: the one text buffer and its encodings.
 * Expected texts are spelt out byte by byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* Finishes `buf` and checks its text is `want`. */
static void assert_finished(struct strbuf *buf, const char *want)
{
	char *got = NULL;
	size_t len = 0;

	assert_int_equal(strbuf_finish(&got, &len, buf), 0);
	assert_string_equal(got, want);
	assert_int_equal(len, strlen(want));
	free(got);
}

static void test_strbuf_append_printf_and_empty(void **state)
{
	struct strbuf buf = STRBUF_INIT;

	(void)state;
	assert_finished(&buf, "");
	strbuf_append(&buf, "a");
	strbuf_appendn(&buf, "bcd", 2);
	strbuf_printf(&buf, "-%d-%s", 42, "x");
	assert_false(strbuf_failed(&buf));
	assert_finished(&buf, "abc-42-x");
}

static void test_strbuf_grows_past_its_first_block(void **state)
{
	struct strbuf buf = STRBUF_INIT;
	char *got = NULL;
	size_t len = 0, i;

	(void)state;
	for (i = 0; i < 1000; i++)
		strbuf_append(&buf, "0123456789");
	assert_int_equal(strbuf_finish(&got, &len, &buf), 0);
	assert_int_equal(len, 10000);
	assert_int_equal(strlen(got), 10000);
	assert_memory_equal(got + 9990, "0123456789", 10);
	free(got);
}

static void test_strbuf_html_and_url(void **state)
{
	struct strbuf buf = STRBUF_INIT;
	const char *text = "a&b<c>\"d'e";

	(void)state;
	strbuf_html(&buf, text, strlen(text));
	assert_finished(&buf, "a&amp;b&lt;c&gt;&quot;d&#39;e");
	strbuf_url(&buf, "a b/c~-._\xc3\xa9", 11);
	assert_finished(&buf, "a%20b%2Fc~-._%C3%A9");
}

static void test_strbuf_hex_is_lower_case(void **state)
{
	struct strbuf buf = STRBUF_INIT;
	const unsigned char bytes[] = {0x00, 0x0f, 0xa5, 0xff};

	(void)state;
	strbuf_hex(&buf, bytes, sizeof(bytes));
	assert_finished(&buf, "000fa5ff");
	strbuf_hex(&buf, bytes, 0);
	assert_finished(&buf, "");
}

/* The RFC 4648 test vectors. */
static void test_strbuf_hex_value_reads_both_cases_only(void **state)
{
	const char *digits = "0123456789abcdef", *upper = "ABCDEF";
	int c, i;

	(void)state;
	for (i = 0; i < 16; i++)
		assert_int_equal(strbuf_hex_value(digits[i]), i);
	for (i = 0; i < 6; i++)
		assert_int_equal(strbuf_hex_value(upper[i]), 10 + i);
	for (c = -1; c < 256; c++)
		if (strchr("0123456789abcdefABCDEF", c) == NULL || c == 0)
			assert_int_equal(strbuf_hex_value(c), -1);
}

static void test_strbuf_base64_rfc4648_vectors(void **state)
{
	static const char *const vectors[][2] = {
	    {"", ""},
	    {"f", "Zg=="},
	    {"fo", "Zm8="},
	    {"foo", "Zm9v"},
	    {"foob", "Zm9vYg=="},
	    {"fooba", "Zm9vYmE="},
	    {"foobar", "Zm9vYmFy"},
	    {"\xff\xfe", "//4="},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		struct strbuf buf = STRBUF_INIT;

		strbuf_base64(&buf, vectors[i][0], strlen(vectors[i][0]));
		assert_finished(&buf, vectors[i][1]);
	}
}

static void test_strbuf_shell_quote(void **state)
{
	struct strbuf buf = STRBUF_INIT;

	(void)state;
	strbuf_shell_quote(&buf, "https://host:8080/x/repo.git");
	assert_finished(&buf, "https://host:8080/x/repo.git");
	strbuf_shell_quote(&buf, "");
	assert_finished(&buf, "''");
	strbuf_shell_quote(&buf, "a b");
	assert_finished(&buf, "'a b'");
	strbuf_shell_quote(&buf, "it's $HOME `x`");
	assert_finished(&buf, "'it'\\''s $HOME `x`'");
	strbuf_shell_quote(&buf, "''");
	assert_finished(&buf, "''\\'''\\'''");
}

static void test_strbuf_crlf_makes_every_line_end_crlf(void **state)
{
	struct strbuf buf = STRBUF_INIT;
	const char *text = "a\nb\r\nc\rd";

	(void)state;
	assert_int_equal(strbuf_crlf(&buf, text, strlen(text), 998), 0);
	assert_finished(&buf, "a\r\nb\r\nc\r\nd\r\n");
	assert_int_equal(strbuf_crlf(&buf, "x\n\n", 3, 998), 0);
	assert_finished(&buf, "x\r\n\r\n");
	assert_int_equal(strbuf_crlf(&buf, "", 0, 998), 0);
	assert_finished(&buf, "");
}

static void test_strbuf_crlf_refuses_a_long_line(void **state)
{
	struct strbuf buf = STRBUF_INIT;

	(void)state;
	assert_int_equal(strbuf_crlf(&buf, "abc\nabcd\nx", 10, 3), -1);
	assert_finished(&buf, "abc\r\n");
	assert_int_equal(strbuf_crlf(&buf, "abc", 3, 3), 0);
	assert_finished(&buf, "abc\r\n");
}

static void test_strbuf_lf_keeps_lone_line_ends(void **state)
{
	struct strbuf buf = STRBUF_INIT;
	const char *text = "a\r\nb\nc\rd\r\n\r\n";

	(void)state;
	strbuf_lf(&buf, text, strlen(text));
	assert_finished(&buf, "a\nb\nc\rd\n\n");
	strbuf_lf(&buf, "\r", 1);
	assert_finished(&buf, "\r");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_strbuf_append_printf_and_empty),
	    cmocka_unit_test(test_strbuf_grows_past_its_first_block),
	    cmocka_unit_test(test_strbuf_html_and_url),
	    cmocka_unit_test(test_strbuf_hex_is_lower_case),
	    cmocka_unit_test(test_strbuf_hex_value_reads_both_cases_only),
	    cmocka_unit_test(test_strbuf_base64_rfc4648_vectors),
	    cmocka_unit_test(test_strbuf_shell_quote),
	    cmocka_unit_test(test_strbuf_crlf_makes_every_line_end_crlf),
	    cmocka_unit_test(test_strbuf_crlf_refuses_a_long_line),
	    cmocka_unit_test(test_strbuf_lf_keeps_lone_line_ends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

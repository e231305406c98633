/*
 * Unit tests of lib/utf8.c: commit text made valid UTF-8.  Expected
 * results are spelt out byte by byte; "\xef\xbf\xbd" is U+FFFD.  One test
 * also checks every two-byte start against jansson's own UTF-8 check, the
 * one json_string() applies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

#define FFFD "\xef\xbf\xbd"

/* utf8_sanitize of the `len` bytes at `text` is `want`. */
static void assert_sanitized_n(const char *text, size_t len, const char *want)
{
	char *got = NULL;

	assert_int_equal(utf8_sanitize(&got, text, len), 0);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void assert_sanitized(const char *text, const char *want)
{
	assert_sanitized_n(text, strlen(text), want);
}

/* utf8_from_encoding of `text` declared as `encoding` is `want`. */
static void assert_decoded_n(const char *text, size_t len,
			     const char *encoding, const char *want)
{
	char *got = NULL;

	assert_int_equal(utf8_from_encoding(&got, text, len, encoding), 0);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void assert_decoded(const char *text, const char *encoding,
			   const char *want)
{
	assert_decoded_n(text, strlen(text), encoding, want);
}

static void test_utf8__valid_text_is_unchanged(void **state)
{
	static const char *const valid[] = {
	    "net: fix a leak in the socket layer",
	    "tab\there, newline\nthere, escape \x1b[0m, delete \x7f",
	    "caf\xc3\xa9 cr\xc3\xa8me br\xc3\xbbl\xc3\xa9"
	    "e",					      /* 2 bytes */
	    "\xe2\x82\xac 5, \xe6\x97\xa5\xe6\x9c\xac " FFFD, /* 3 bytes */
	    "\xf0\x9f\x98\x80 \xf0\x9d\x84\x9e",	      /* 4 bytes */
	    /* both sides of every boundary of the encoding */
	    "\x7f \xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xee\x80\x80"
	    " \xef\xbf\xbf \xf0\x90\x80\x80 \xf4\x8f\xbf\xbf",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		assert_sanitized(valid[i], valid[i]);
		assert_decoded(valid[i], NULL, valid[i]);
		assert_decoded(valid[i], "UTF-8", valid[i]);
		assert_decoded(valid[i], "utf8", valid[i]);
	}
}

static void test_utf8__empty_input_is_an_empty_string(void **state)
{
	(void)state;
	assert_sanitized_n("", 0, "");
	assert_sanitized_n("ignored", 0, "");
	assert_decoded_n("", 0, NULL, "");
	assert_decoded_n("", 0, "ISO-8859-1", "");
	assert_decoded_n("\xe9", 0, "ISO-8859-1", "");
}

static void test_utf8__stray_and_impossible_bytes_are_replaced(void **state)
{
	(void)state;
	/* Latin-1 read as UTF-8: each lone byte is one U+FFFD */
	assert_sanitized("caf\xe9", "caf" FFFD);
	assert_sanitized("\xe9t\xe9", FFFD "t" FFFD);
	/* continuation bytes without a lead */
	assert_sanitized("a\x80\xbf"
			 "b",
			 "a" FFFD FFFD "b");
	/* bytes that never start a sequence */
	assert_sanitized("\xc0\xc1\xf5\xf8\xfe\xff",
			 FFFD FFFD FFFD FFFD FFFD FFFD);
	/* a lead followed by something else than a continuation */
	assert_sanitized("\xc3(x", FFFD "(x");
	assert_sanitized("\xe2\x82(", FFFD "(");
}

static void test_utf8__overlong_forms_are_replaced(void **state)
{
	(void)state;
	/* '/' as 2, 3 and 4 bytes; each byte is its own maximal subpart */
	assert_sanitized("\xc0\xaf", FFFD FFFD);
	assert_sanitized("\xe0\x80\xaf", FFFD FFFD FFFD);
	assert_sanitized("\xf0\x80\x80\xaf", FFFD FFFD FFFD FFFD);
	/* the longest overlong forms: U+007F, U+07FF, U+FFFF */
	assert_sanitized("\xc1\xbf", FFFD FFFD);
	assert_sanitized("\xe0\x9f\xbf", FFFD FFFD FFFD);
	assert_sanitized("\xf0\x8f\xbf\xbf", FFFD FFFD FFFD FFFD);
}

static void test_utf8__surrogates_and_beyond_unicode_are_replaced(void **state)
{
	(void)state;
	assert_sanitized("\xed\xa0\x80", FFFD FFFD FFFD); /* U+D800 */
	assert_sanitized("\xed\xbf\xbf", FFFD FFFD FFFD); /* U+DFFF */
	/* a surrogate pair, as CESU-8 writes U+1F600 */
	assert_sanitized("\xed\xa0\xbd\xed\xb8\x80",
			 FFFD FFFD FFFD FFFD FFFD FFFD);
	assert_sanitized("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD); /* 110000 */
	assert_sanitized("x\xf7\xbf\xbf\xbfy", "x" FFFD FFFD FFFD FFFD "y");
}

static void test_utf8__truncated_sequences_become_one_fffd(void **state)
{
	(void)state;
	assert_sanitized("\xc3", FFFD);
	assert_sanitized("\xe2\x82", FFFD);
	assert_sanitized("\xf0\x9f\x98", FFFD);
	assert_sanitized("ends with \xf0\x9f", "ends with " FFFD);
	assert_sanitized("\xf0\x9f\x98x", FFFD "x");
	/* a cut sequence, then a whole one */
	assert_sanitized("\xe2\x82\xe2\x82\xac", FFFD "\xe2\x82\xac");
	assert_sanitized("\xf0\x9f\x98\xf0\x9f\x98\x80",
			 FFFD "\xf0\x9f\x98\x80");
}

static void test_utf8__reads_len_bytes_and_replaces_nul(void **state)
{
	static const char unterminated[3] = {'a', 'b', 'c'};

	(void)state;
	assert_sanitized_n(unterminated, sizeof(unterminated), "abc");
	assert_sanitized_n("abc", 1, "a");
	/* a whole sequence in memory, but only its start in the text */
	assert_sanitized_n("\xe2\x82\xac", 2, FFFD);
	assert_sanitized_n("\xf0\x9f\x98\x80", 3, FFFD);
	/* NUL is neither in a C string nor in PostgreSQL text */
	assert_sanitized_n("a\0b", 3, "a" FFFD "b");
	assert_sanitized_n("\0\0", 2, FFFD FFFD);
	assert_decoded_n("a\0\xe9", 3, "ISO-8859-1", "a" FFFD "\xc3\xa9");
}

static void test_utf8__long_text_is_converted_whole(void **state)
{
	size_t n = 5000, i;
	char *in = malloc(n), *want = malloc(3 * n + 1), *got = NULL;

	(void)state;
	assert_non_null(in);
	assert_non_null(want);
	memset(in, 0xe9, n);
	for (i = 0; i < n; i++)
		memcpy(want + 2 * i, "\xc3\xa9", 2);
	want[2 * n] = '\0';
	assert_int_equal(utf8_from_encoding(&got, in, n, "latin1"), 0);
	assert_string_equal(got, want);
	free(got);
	for (i = 0; i < n; i++)
		memcpy(want + 3 * i, FFFD, 3);
	want[3 * n] = '\0';
	assert_int_equal(utf8_sanitize(&got, in, n), 0);
	assert_string_equal(got, want);
	free(got);
	free(want);
	free(in);
}

static void test_utf8__latin1_is_converted_when_declared(void **state)
{
	static const char *const spellings[] = {
	    "ISO-8859-1", "iso-8859-1", "ISO8859-1", "iso_8859-1",
	    "ISO_8859_1", "latin1",	"LATIN1",    "Latin-1",
	};
	char in[256], want[512], *got = NULL;
	size_t i, n = 0;

	(void)state;
	for (i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
		assert_decoded("net: caf\xe9 cr\xe8me", spellings[i],
			       "net: caf\xc3\xa9 cr\xc3\xa8me");
		assert_decoded("Fran\xe7ois M\xfcller", spellings[i],
			       "Fran\xc3\xa7ois M\xc3\xbcller");
	}
	/* every byte is the code point of the same number */
	for (i = 1; i < 256; i++) {
		in[i - 1] = (char)i;
		if (i < 0x80) {
			want[n++] = (char)i;
		} else {
			want[n++] = (char)(0xc0 | i >> 6);
			want[n++] = (char)(0x80 | (i & 0x3f));
		}
	}
	want[n] = '\0';
	assert_int_equal(utf8_from_encoding(&got, in, 255, "ISO-8859-1"), 0);
	assert_string_equal(got, want);
	free(got);
	/* UTF-8 declared as Latin-1 is read as Latin-1, as git log does */
	assert_decoded("caf\xc3\xa9", "ISO-8859-1", "caf\xc3\x83\xc2\xa9");
}

static void test_utf8__other_single_byte_sets_are_converted(void **state)
{
	(void)state;
	assert_decoded("\x80 5, \x93quoted\x94", "cp1252",
		       "\xe2\x82\xac 5, \xe2\x80\x9cquoted\xe2\x80\x9d");
	assert_decoded("\x80", "windows-1252", "\xe2\x82\xac");
	assert_decoded("\xa4", "ISO-8859-15", "\xe2\x82\xac");
	assert_decoded("\xa4", "latin9", "\xe2\x82\xac");
	assert_decoded("\xb1", "ISO-8859-2", "\xc4\x85");
	assert_decoded("\xb1", "latin2", "\xc4\x85");
	assert_decoded("\xc1", "KOI8-R", "\xd0\xb0");
	assert_decoded("\xa6", "koi8-u", "\xd1\x96");
	assert_decoded("\xe0", "cp1251", "\xd0\xb0");
	/* bytes the set leaves undefined */
	assert_decoded("a\x81"
		       "b",
		       "cp1252", "a" FFFD "b");
	assert_decoded("\xa5\xa5x", "ISO-8859-3", FFFD FFFD "x");
}

static void test_utf8__other_sets_and_odd_names_are_read_as_utf8(void **state)
{
	static const char *const names[] = {
	    "UTF-8",
	    "utf8",
	    "x-klingon",
	    "",
	    "EUC-JP",
	    "Shift_JIS",
	    "UTF-16",
	    "ISO-8859-1//TRANSLIT",
	    "ISO-8859-1 ",
	    "ISO-8859-12",
	    "ISO-8859-17",
	    "latin11",
	    "cp1255",
	    "cp437",
	    "ISO-8859-1:1987",
	    "ISO-8859-4294967297",
	    "cp4294968548",
	    "ISO-8859-1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_decoded("caf\xe9", names[i], "caf" FFFD);
		assert_decoded("caf\xc3\xa9", names[i], "caf\xc3\xa9");
	}
	/* EUC-JP "a" (hiragana): two bytes that are no UTF-8 */
	assert_decoded("\xa4\xa2", "EUC-JP", FFFD FFFD);
}

/*
 * Every two-byte start, followed by two continuation bytes: the result is
 * text jansson accepts, and text jansson accepts (without NUL) comes back
 * as it was.
 */
static void test_utf8__every_two_byte_start_agrees_with_jansson(void **state)
{
	unsigned first, second;

	(void)state;
	for (first = 0; first < 256; first++) {
		for (second = 0; second < 256; second++) {
			char in[4] = {(char)first, (char)second, '\x80',
				      '\x80'};
			char *got = NULL;
			json_t *s;

			assert_int_equal(utf8_sanitize(&got, in, 4), 0);
			s = json_string(got);
			if (s == NULL)
				fail_msg("%02x %02x 80 80 gave invalid UTF-8",
					 first, second);
			json_decref(s);
			s = json_stringn(in, 4);
			if (s != NULL && first != 0 && second != 0 &&
			    memcmp(got, in, 4) != 0)
				fail_msg("valid %02x %02x 80 80 was changed",
					 first, second);
			json_decref(s);
			free(got);
		}
	}
}

/* utf8_char_len: a character's length, 0 for an ill-formed start, and
 * never a read past a NUL. */
static void test_utf8__char_len_measures_one_character(void **state)
{
	/* every byte after the NUL would make the sequence longer */
	static const char cut[] = {(char)0xe2, (char)0x82, '\0', (char)0xac,
				   (char)0xac};

	(void)state;
	assert_int_equal(utf8_char_len("a", 4), 1);
	assert_int_equal(utf8_char_len("", 4), 1);
	assert_int_equal(utf8_char_len("\xc3\xa9", 4), 2);
	assert_int_equal(utf8_char_len("\xe2\x82\xac", 4), 3);
	assert_int_equal(utf8_char_len("\xf0\x9f\x98\x80", 4), 4);
	assert_int_equal(utf8_char_len("\xf0\x9f\x98\x80", 3), 0);
	assert_int_equal(utf8_char_len("\xc0\xaf", 4), 0);     /* overlong */
	assert_int_equal(utf8_char_len("\xed\xa0\x80", 4), 0); /* surrogate */
	assert_int_equal(utf8_char_len("\xf4\x90\x80\x80", 4), 0);
	assert_int_equal(utf8_char_len("\x80", 4), 0);
	assert_int_equal(utf8_char_len("\xe9 ", 4), 0); /* Latin-1 e acute */
	assert_int_equal(utf8_char_len(cut, sizeof(cut)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_utf8__valid_text_is_unchanged),
	    cmocka_unit_test(test_utf8__char_len_measures_one_character),
	    cmocka_unit_test(test_utf8__empty_input_is_an_empty_string),
	    cmocka_unit_test(
		test_utf8__stray_and_impossible_bytes_are_replaced),
	    cmocka_unit_test(test_utf8__overlong_forms_are_replaced),
	    cmocka_unit_test(
		test_utf8__surrogates_and_beyond_unicode_are_replaced),
	    cmocka_unit_test(test_utf8__truncated_sequences_become_one_fffd),
	    cmocka_unit_test(test_utf8__reads_len_bytes_and_replaces_nul),
	    cmocka_unit_test(test_utf8__long_text_is_converted_whole),
	    cmocka_unit_test(test_utf8__latin1_is_converted_when_declared),
	    cmocka_unit_test(test_utf8__other_single_byte_sets_are_converted),
	    cmocka_unit_test(
		test_utf8__other_sets_and_odd_names_are_read_as_utf8),
	    cmocka_unit_test(
		test_utf8__every_two_byte_start_agrees_with_jansson),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

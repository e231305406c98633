/*
 * Unit tests of lib/url.c: URLs shown to people reveal nothing of a
 * password, whatever its shape, and every other URL stays as written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "url.h"

static void assert_redacted(const char *url, const char *want)
{
	char *got = (char *)1;

	assert_int_equal(url_redact(&got, url), 0);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* url_redact(url) shows none of `password`, not even one of its parts
 * split at '@', ':' or '/'. */
static void assert_hides(const char *url, const char *password)
{
	char *got = NULL, *parts, *part, *save = NULL;

	assert_int_equal(url_redact(&got, url), 0);
	assert_null(strstr(got, password));
	parts = strdup(password);
	assert_non_null(parts);
	for (part = strtok_r(parts, "@:/#?", &save); part != NULL;
	     part = strtok_r(NULL, "@:/#?", &save)) {
		/* The password's pieces must not follow the user's ':'. */
		char needle[64];

		snprintf(needle, sizeof(needle), ":%s", part);
		assert_null(strstr(got, needle));
		snprintf(needle, sizeof(needle), "@%s@", part);
		assert_null(strstr(got, needle));
	}
	free(parts);
	free(got);
}

static void test_url__password_with_at_sign_hidden(void **state)
{
	(void)state;
	/* issue 9: the old repository list showed "u:***@w@host". */
	assert_redacted("https://u:p@w@host/x", "https://u:***@host/x");
	assert_hides("https://u:p@w@host/x", "p@w");
	assert_hides("https://ci:a@b@c@git.example.org/r.git", "a@b@c");
	assert_redacted("smtp://u:p@w@host", "smtp://u:***@host");
}

static void test_url__password_masked_in_place(void **state)
{
	(void)state;
	assert_redacted("https://ci:hunter2@git.example.org/x.git",
			"https://ci:***@git.example.org/x.git");
	assert_redacted("smtps://user:secret@host:465",
			"smtps://user:***@host:465");
	assert_redacted("smtp+starttls://a%40b.org:s3cr%40t@mx:587/x",
			"smtp+starttls://a%40b.org:***@mx:587/x");
	assert_redacted("HTTPS://u:pw@Host.Example/Path?q=1",
			"HTTPS://u:***@Host.Example/Path?q=1");
	assert_redacted("http://u:p@[::1]:8/x", "http://u:***@[::1]:8/x");
	assert_redacted("https://:token@host/x", "https://:***@host/x");
	assert_redacted("https://u:@host/x", "https://u:***@host/x");
	assert_hides("https://u:p#q@host/x", "p#q");
	assert_hides("https://u:p/q@host/x", "p/q");
	assert_hides("https://u:p?q@host/x", "p?q");
	assert_hides("ssh://git:pw@host:notaport/x", "pw");
}

static void test_url__no_password_unchanged(void **state)
{
	static const char *const kept[] = {
	    "https://host",	   "https://git.example.org/x.git",
	    "HTTPS://Host/x",	   "ssh://git@host/x",
	    "https://user@host/x", "smtp://host:25",
	    "smtp://host/p:q@r",   "file:///srv/git/x.git",
	    "git://host/x",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		assert_redacted(kept[i], kept[i]);
}

static void test_url__scp_like_and_paths(void **state)
{
	(void)state;
	assert_redacted("git@host:x", "git@host:x");
	assert_redacted("git@github.com:team@x/repo.git",
			"git@github.com:team@x/repo.git");
	assert_redacted("/srv/git/a:b@c.git", "/srv/git/a:b@c.git");
	assert_redacted("./repo", "./repo");
	assert_redacted("~/src/x:y@z", "~/src/x:y@z");
	assert_redacted("relative/dir", "relative/dir");
	assert_redacted("u:p@host:x", "u:***@host:x");
	assert_hides("u:sec@ret@host:path", "sec@ret");
	assert_redacted("no scheme:pw@x", "no scheme:***@x");
}

static void test_url__bad_arguments(void **state)
{
	char *got = (char *)1;

	(void)state;
	assert_int_equal(url_redact(&got, NULL), -EINVAL);
	assert_null(got);
	assert_int_equal(url_redact(NULL, "https://host"), -EINVAL);
}

static void test_url__unescape_keeps_encoded_nul(void **state)
{
	static const char *const cases[][2] = {
	    {"/api/v1/jobs/1", "/api/v1/jobs/1"},
	    {"/a%20b%2Fc", "/a b/c"},
	    {"/jobs/1%00", "/jobs/1%00"},
	    {"/jobs/1%00x%41", "/jobs/1%00xA"},
	    {"%2500", "%00"},
	    {"%", "%"},
	    {"%4", "%4"},
	    {"%zz%4g", "%zz%4g"},
	    {"a+b", "a+b"},
	    {"%e2%82%ac", "\xe2\x82\xac"},
	    {"", ""},
	};
	char text[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%s", cases[i][0]);
		assert_int_equal(url_unescape(text), strlen(cases[i][1]));
		assert_string_equal(text, cases[i][1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_url__password_with_at_sign_hidden),
	    cmocka_unit_test(test_url__password_masked_in_place),
	    cmocka_unit_test(test_url__no_password_unchanged),
	    cmocka_unit_test(test_url__scp_like_and_paths),
	    cmocka_unit_test(test_url__bad_arguments),
	    cmocka_unit_test(test_url__unescape_keeps_encoded_nul),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../server/mailer.h"

static void expect_url(const char *url, const char *want, long want_ssl)
{
	char *curl_url = NULL, *cause = (char *)1;
	long use_ssl = -1;

	assert_int_equal(mailer_smtp_url(url, &curl_url, &use_ssl, &cause), 0);
	assert_null(cause);
	assert_string_equal(curl_url, want);
	assert_int_equal(use_ssl, want_ssl);
	free(curl_url);
}

static void expect_refused(const char *url)
{
	char *curl_url = (char *)1, *cause = NULL;
	long use_ssl = -1;

	assert_int_equal(mailer_smtp_url(url, &curl_url, &use_ssl, &cause),
			 -EINVAL);
	assert_null(curl_url);
	assert_non_null(cause);
	free(cause);
}

static void test_mailer__smtp_url_schemes(void **state)
{
	(void)state;
	expect_url("smtp://127.0.0.1:2525", "smtp://127.0.0.1:2525",
		   CURLUSESSL_NONE);
	expect_url("smtps://mail.example.org", "smtps://mail.example.org",
		   CURLUSESSL_ALL);
	expect_url("smtp+starttls://u%40x.org:p%3Aw@mail.example.org:587",
		   "smtp://u%40x.org:p%3Aw@mail.example.org:587",
		   CURLUSESSL_ALL);
	expect_url("SMTP+StartTLS://host:587/client.example.org",
		   "smtp://host:587/client.example.org", CURLUSESSL_ALL);
	expect_url("smtp://user@host", "smtp://user@host", CURLUSESSL_NONE);
}

static void test_mailer__smtp_url_refused(void **state)
{
	char *curl_url = NULL;
	long use_ssl;

	(void)state;
	expect_refused("http://host");
	expect_refused("smtp:/host");
	expect_refused("host:25");
	expect_refused("smtp://");
	expect_refused("smtp://:25");
	expect_refused("smtp://user:pw@");
	expect_refused("smtp://host\r\nRCPT TO:<x@y>");
	expect_refused("smtp://ho st");
	expect_refused("smtp+starttls:///path");
	assert_int_equal(mailer_smtp_url(NULL, &curl_url, &use_ssl, NULL),
			 -EINVAL);
}

/* A Maildir file ends its lines in LF: the message's CRLF (SMTP's line
 * end) is not kept, and nothing else changes. */
static void test_mailer__maildir_file_has_lf_line_ends(void **state)
{
	char dir[] = "/tmp/test_mailer.XXXXXX", path[4200], got[256];
	const char *message = "Subject: x\r\nTo: a@b.c\r\n\r\nbody\rline\r\n";
	struct dirent *entry;
	char *err = NULL;
	size_t n = 0;
	DIR *d;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(mailer_maildir_deliver(dir, message, 7, &err), 0);
	assert_null(err);
	snprintf(path, sizeof(path), "%s/new", dir);
	d = opendir(path);
	assert_non_null(d);
	while ((entry = readdir(d)) != NULL) {
		if (entry->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/new/%s", dir, entry->d_name);
		f = fopen(path, "rb");
		assert_non_null(f);
		n = fread(got, 1, sizeof(got) - 1, f);
		fclose(f);
		unlink(path);
	}
	closedir(d);
	got[n] = '\0';
	assert_string_equal(got, "Subject: x\nTo: a@b.c\n\nbody\rline\n");
	snprintf(path, sizeof(path), "%s/new", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/cur", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/tmp", dir);
	rmdir(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mailer__smtp_url_schemes),
	    cmocka_unit_test(test_mailer__smtp_url_refused),
	    cmocka_unit_test(test_mailer__maildir_file_has_lf_line_ends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

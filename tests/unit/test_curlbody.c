/*
 * Unit tests of lib/curlbody.c: a reply body collected up to its limit,
 * through libcurl itself (a file:// URL, so no network is needed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "curlbody.h"

static void test_curlbody__appends_and_terminates(void **state)
{
	struct curlbody body = CURLBODY_INIT(10);
	char a[] = "abc", b[] = "defg";

	(void)state;
	assert_int_equal(curlbody_write(a, 1, 3, &body), 3);
	assert_int_equal(curlbody_write(b, 2, 2, &body), 4);
	assert_int_equal(body.len, 7);
	assert_string_equal(body.data, "abcdefg");
	assert_false(body.too_large);
	/* 7 + 4 > 10: refused whole, nothing appended. */
	assert_int_equal(curlbody_write(b, 1, 4, &body), 0);
	assert_true(body.too_large);
	assert_string_equal(body.data, "abcdefg");
	curlbody_clear(&body);
	assert_null(body.data);
	assert_int_equal(body.len, 0);
	assert_false(body.too_large);
	curlbody_clear(NULL);
}

/* A file of `size` bytes of x fetched by libcurl into `body`. */
static CURLcode fetch(struct curlbody *body, size_t size)
{
	char path[] = "/tmp/test_curlbody_XXXXXX", url[64];
	int fd = mkstemp(path);
	char *data = malloc(size);
	CURL *curl = curl_easy_init();
	CURLcode rc;

	assert_true(fd >= 0 && data != NULL && curl != NULL);
	memset(data, 'x', size);
	assert_int_equal(write(fd, data, size), (ssize_t)size);
	close(fd);
	snprintf(url, sizeof(url), "file://%s", path);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, curlbody_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
	rc = curl_easy_perform(curl);
	curl_easy_cleanup(curl);
	unlink(path);
	free(data);
	return rc;
}

static void test_curlbody__collects_a_libcurl_transfer(void **state)
{
	struct curlbody body = CURLBODY_INIT(1u << 20);

	(void)state;
	assert_int_equal(fetch(&body, 300000), CURLE_OK);
	assert_int_equal(body.len, 300000);
	assert_int_equal(strspn(body.data, "x"), 300000);
	assert_false(body.too_large);
	curlbody_clear(&body);
}

static void test_curlbody__stops_a_transfer_over_the_limit(void **state)
{
	struct curlbody body = CURLBODY_INIT(1000);

	(void)state;
	assert_int_equal(fetch(&body, 5000), CURLE_WRITE_ERROR);
	assert_true(body.too_large);
	assert_true(body.len <= 1000);
	curlbody_clear(&body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_curlbody__appends_and_terminates),
	    cmocka_unit_test(test_curlbody__collects_a_libcurl_transfer),
	    cmocka_unit_test(test_curlbody__stops_a_transfer_over_the_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

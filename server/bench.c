#include "bench.h"

#include <ctype.h>
#include <string.h>

#include "scheduler.h"
#include "validate.h"

/* The longest bench_error a worker may send. */
#define BENCH_ERROR_MAX 2000

static json_t *text_or_null(const char *text)
{
	return text != NULL && text[0] != '\0' ? json_string(text)
					       : json_null();
}

int bench_claim_fill(json_t *task, const struct store_claim *claim)
{
	json_t *testcase = json_object_get(task, "testcase");

	if (testcase == NULL ||
	    json_object_set_new(testcase, "bench_repo",
				text_or_null(claim->bench_repo)) < 0 ||
	    json_object_set_new(testcase, "bench_rev",
				text_or_null(claim->bench_rev)) < 0 ||
	    json_object_set_new(task, "bench_commit",
				text_or_null(claim->bench_sha)) < 0)
		return -1;
	return 0;
}

static bool is_sha(const char *s)
{
	size_t i;

	for (i = 0; s != NULL && s[i] != '\0'; i++) {
		if (!isxdigit((unsigned char)s[i]) ||
		    isupper((unsigned char)s[i]))
			return false;
	}
	return s != NULL && i == 40;
}

int bench_upload(struct http_response *res, PGconn *conn, long long job_id,
		 json_t *body, const char *base_url)
{
	json_t *failure = json_object_get(body, "bench_error");
	json_t *commit = json_object_get(body, "bench_commit");
	int error;

	if (failure != NULL && !json_is_null(failure)) {
		if (!json_is_string(failure) ||
		    !validate_text(json_string_value(failure), BENCH_ERROR_MAX,
				   false)) {
			http_error(res, 400, "invalid_field",
				   "'bench_error' must be one line of text");
			return -1;
		}
		if (sched_fail(conn, job_id, json_string_value(failure),
			       base_url) < 0) {
			http_db_failed(res);
			return -1;
		}
		return 0;
	}
	if (commit != NULL && !json_is_null(commit)) {
		if (!is_sha(json_string_value(commit))) {
			http_error(res, 400, "invalid_field",
				   "'bench_commit' must be a full commit id "
				   "(40 lower-case hex digits)");
			return -1;
		}
		error = store_tasks_bench_pin(conn, job_id,
					      json_string_value(commit));
		if (error == STORE_CONFLICT) {
			http_error(res, 400, "invalid_field",
				   "'bench_commit' %s is not the bench commit "
				   "job %lld runs",
				   json_string_value(commit), job_id);
			return -1;
		}
		if (error < 0) {
			http_db_failed(res);
			return -1;
		}
	}
	if (sched_advance(conn, job_id, base_url) < 0) {
		http_db_failed(res);
		return -1;
	}
	return 0;
}

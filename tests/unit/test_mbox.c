/*
 * Unit tests of the mbox reader (lib/mbox.c) and of applying a series as
 * commits (lib/patchapply.c), on series that the tests make with real
 * `git format-patch` from a repository they create, and on hostile input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gitrepo.h"
#include "mbox.h"
#include "patchapply.h"

static char tmp_root[64];
static char repo_path[PATH_MAX];
static char *series_text; /* 4 patches and a cover letter */
static size_t series_len;

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fail_msg("command failed (%d): %s", rc, cmd);
}

static void capture(char *out, size_t size, const char *cmd)
{
	FILE *p = popen(cmd, "r");

	assert_non_null(p);
	if (fgets(out, (int)size, p) == NULL)
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	assert_int_equal(pclose(p), 0);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *text;
	long size;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	rewind(f);
	text = malloc((size_t)size + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	text[size] = '\0';
	fclose(f);
	*len = (size_t)size;
	return text;
}

/*
 * A repository whose base commit holds a.txt and a Latin-1 file, then four
 * commits by an author with a non-ASCII name, each adding a line, the
 * third also touching the Latin-1 file; the series is their format-patch
 * with a cover letter, threaded, sent to a list and Cc'd to a person whose
 * name holds a comma.
 */
static int group_setup(void **state)
{
	char path[PATH_MAX];

	(void)state;
	snprintf(tmp_root, sizeof(tmp_root), "/tmp/test_mbox.XXXXXX");
	if (mkdtemp(tmp_root) == NULL)
		return -1;
	snprintf(repo_path, sizeof(repo_path), "%s/src", tmp_root);
	run("cd '%s' && git -c init.defaultBranch=main init -q src && cd src"
	    " && git config user.name 'J\xc3\xb6hn D\xc3\xb8"
	    "e'"
	    " && git config user.email john@example.org"
	    " && export GIT_AUTHOR_DATE='@1700000000 +0100'"
	    " GIT_COMMITTER_DATE='@1700000000 +0100'"
	    " && echo base > a.txt && printf 'caf\\351\\n' > latin1.txt"
	    " && git add -A && git commit -qm base"
	    " && for i in 1 2 3 4; do echo \"line $i\" >> a.txt;"
	    " if [ $i = 3 ]; then printf 'na\\357ve\\n' >> latin1.txt; fi;"
	    " export GIT_AUTHOR_DATE=\"@170000${i}000 +0200\";"
	    " git commit -qam \"sub: change number $i\" -m \"Body $i.\";"
	    " done"
	    " && git format-patch -q --stdout --cover-letter --thread=shallow"
	    " --base=HEAD~4 --to='List <list@example.org>'"
	    " --cc='\"Last, First\" <lf@example.org>' HEAD~4 > ../series.mbox",
	    tmp_root);
	snprintf(path, sizeof(path), "%s/series.mbox", tmp_root);
	series_text = slurp(path, &series_len);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	free(series_text);
	run("rm -rf '%s'", tmp_root);
	return 0;
}

static void test_mbox__format_patch_series_is_read(void **state)
{
	const struct mbox_message **patches = NULL, *cover = NULL;
	struct mbox_series series;
	char *err = NULL;
	size_t count, i;

	(void)state;
	assert_int_equal(mbox_parse(&series, series_text, series_len, &err),
			 0);
	assert_int_equal(series.count, 5);
	assert_int_equal(
	    mbox_series_patches(&patches, &count, &cover, &series, &err), 0);
	assert_int_equal(count, 4);
	assert_non_null(cover);
	assert_int_equal(cover->number, 0);
	assert_int_equal(cover->total, 4);
	for (i = 0; i < 4; i++) {
		const struct mbox_message *m = patches[i];
		char subject[64], title[64], body[16];

		snprintf(subject, sizeof(subject),
			 "[PATCH %zu/4] sub: change number %zu", i + 1, i + 1);
		snprintf(title, sizeof(title), "sub: change number %zu",
			 i + 1);
		snprintf(body, sizeof(body), "Body %zu.", i + 1);
		assert_string_equal(m->subject, subject);
		assert_string_equal(m->title, title);
		assert_string_equal(m->body, body);
		assert_int_equal(m->number, (int)i + 1);
		assert_int_equal(m->total, 4);
		assert_string_equal(m->author_name, "J\xc3\xb6hn D\xc3\xb8"
						    "e");
		assert_string_equal(m->author_email, "john@example.org");
		assert_int_equal(m->date,
				 1700000000 + (int64_t)(i + 1) * 1000);
		assert_int_equal(m->date_offset, 120);
		assert_string_equal(m->in_reply_to, cover->message_id);
		assert_non_null(strstr(m->references, cover->message_id));
		assert_int_equal(m->to_count, 1);
		assert_string_equal(m->to[0], "list@example.org");
		assert_int_equal(m->cc_count, 1);
		assert_string_equal(m->cc[0], "lf@example.org");
		assert_non_null(m->diff);
		assert_memory_equal(m->diff, "diff --git a/", 13);
		/* the signature "-- \n2.39.5" is not part of the diff */
		assert_null(strstr(m->diff, "\n-- \n"));
		assert_non_null(m->message_id);
		assert_null(strchr(m->message_id, '<'));
	}
	assert_non_null(cover->base_commit);
	free(patches);
	mbox_series_free(&series);
}

/* The diffs read from the mbox, applied with libgit2, give the trees of
 * the commits they were made from, and the same SHAs every time. */
static void test_patchapply__series_gives_original_trees(void **state)
{
	const struct mbox_message **patches = NULL;
	struct patchapply_patch apply[4];
	struct mbox_series series;
	git_repository *repo = NULL;
	git_oid base, out[4], again[4];
	char *err = NULL, *messages[4], want[64], got[GITREPO_SHA_LEN + 1];
	char cmd[2 * PATH_MAX];
	size_t count, failed, i;

	(void)state;
	assert_int_equal(mbox_parse(&series, series_text, series_len, &err),
			 0);
	assert_int_equal(
	    mbox_series_patches(&patches, &count, NULL, &series, &err), 0);
	for (i = 0; i < count; i++) {
		messages[i] = mbox_commit_message(patches[i]);
		apply[i] = (struct patchapply_patch){patches[i]->diff,
						     patches[i]->diff_len,
						     messages[i],
						     patches[i]->author_name,
						     patches[i]->author_email,
						     patches[i]->date,
						     patches[i]->date_offset};
	}
	assert_int_equal(git_repository_open(&repo, repo_path), 0);
	snprintf(cmd, sizeof(cmd), "git -C '%s' rev-parse HEAD~4", repo_path);
	capture(want, sizeof(want), cmd);
	assert_string_equal(patches[0]->base_commit == NULL
				? series.messages[0].base_commit
				: patches[0]->base_commit,
			    want);
	assert_int_equal(git_oid_fromstr(&base, want), 0);
	assert_int_equal(
	    patchapply_series(out, repo, &base, apply, 4, &failed, &err), 0);
	assert_int_equal(
	    patchapply_series(again, repo, &base, apply, 4, &failed, &err), 0);
	for (i = 0; i < 4; i++) {
		git_commit *commit;

		assert_true(git_oid_equal(&out[i], &again[i]));
		snprintf(cmd, sizeof(cmd),
			 "git -C '%s' rev-parse HEAD~%zu^{tree}", repo_path,
			 3 - i);
		capture(want, sizeof(want), cmd);
		assert_int_equal(git_commit_lookup(&commit, repo, &out[i]), 0);
		git_oid_tostr(got, sizeof(got), git_commit_tree_id(commit));
		assert_string_equal(got, want);
		assert_string_equal(git_commit_summary(commit),
				    patches[i]->title);
		assert_int_equal(git_commit_author(commit)->when.offset, 120);
		git_commit_free(commit);
		free(messages[i]);
	}
	git_repository_free(repo);
	free(patches);
	mbox_series_free(&series);
}

/* A message with the given subject and diff (NULL: none). */
static void message(char *out, size_t size, const char *subject,
		    const char *diff)
{
	snprintf(out, size,
		 "From 0000000000000000000000000000000000000000 Mon Sep 17 "
		 "00:00:00 2001\n"
		 "From: A <a@example.org>\n"
		 "Date: Thu, 3 Dec 2026 10:00:00 +0000\n"
		 "Subject: %s\n\nWhy.\n---\n%s\n",
		 subject, diff != NULL ? diff : "");
}

#define DIFF_OK                                                               \
	"diff --git a/x b/x\nindex 0000000..1111111 100644\n--- a/x\n"        \
	"+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"

/* What mbox_series_patches says of the mbox made of `subjects`. */
static char *series_error_of(const char *const *subjects, size_t n,
			     bool with_diff)
{
	char text[8192], one[1024];
	const struct mbox_message **patches = NULL;
	struct mbox_series series;
	char *err = NULL;
	size_t count, i, used = 0;

	for (i = 0; i < n; i++) {
		message(one, sizeof(one), subjects[i],
			with_diff ? DIFF_OK : NULL);
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "%s\n", one);
	}
	assert_int_equal(mbox_parse(&series, text, used, &err), 0);
	assert_int_equal(
	    mbox_series_patches(&patches, &count, NULL, &series, &err), -1);
	assert_null(patches);
	mbox_series_free(&series);
	assert_non_null(err);
	return err;
}

static void assert_error_has(char *err, const char *want)
{
	if (strstr(err, want) == NULL)
		fail_msg("error '%s' does not say '%s'", err, want);
	free(err);
}

static void
test_mbox__bad_numbering_is_refused_with_the_patch_named(void **state)
{
	const char *gap[] = {"[PATCH 1/3] a", "[PATCH 3/3] c"};
	const char *disagree[] = {"[PATCH 1/2] a", "[PATCH 2/3] b"};
	const char *outside[] = {"[PATCH 5/4] e"};
	const char *repeated[] = {"[PATCH 1/2] a", "[PATCH 1/2] a2",
				  "[PATCH 2/2] b"};
	const char *no_diff[] = {"[PATCH 1/1] nothing here"};

	(void)state;
	assert_error_has(series_error_of(gap, 2, true),
			 "patch 2/3 is missing");
	assert_error_has(series_error_of(disagree, 2, true),
			 "'[PATCH 2/3] b'");
	assert_error_has(series_error_of(outside, 1, true),
			 "numbered outside its series: '[PATCH 5/4] e'");
	assert_error_has(series_error_of(repeated, 3, true),
			 "repeated: '[PATCH 1/2] a2'");
	assert_error_has(series_error_of(no_diff, 1, false),
			 "holds no diff: '[PATCH 1/1] nothing here'");
}

static void test_mbox__text_that_is_no_mail_is_refused(void **state)
{
	struct mbox_series series;
	char *err = NULL;
	const char *garbage = "just some text\nno headers here\n";

	(void)state;
	assert_int_equal(mbox_parse(&series, "", 0, &err), -1);
	assert_non_null(err);
	free(err);
	assert_int_equal(mbox_parse(&series, garbage, strlen(garbage), &err),
			 -1);
	assert_non_null(strstr(err, "not an mbox"));
	assert_int_equal(series.count, 0);
	free(err);
}

/* Headers in other character sets become UTF-8; raw bytes that are not
 * UTF-8 become U+FFFD; nothing invalid gets through. */
static void test_mbox__non_utf8_headers_become_valid_utf8(void **state)
{
	const char *text =
	    "From: =?ISO-8859-1?Q?Ren=E9_Caf=E9?= <rene@example.org>\n"
	    "Subject: [PATCH] =?iso-8859-1?q?na=EFve?= =?UTF-8?B?w6k=?=\n"
	    " fix \xff\xfe raw\n"
	    "To: \"Bad \xe9\" <bad@example.org>, plain@example.org (Plain)\n"
	    "Message-ID: <id.1@example.org>\n\nBody \xe9.\n---\n" DIFF_OK;
	struct mbox_series series;
	char *err = NULL;

	(void)state;
	assert_int_equal(mbox_parse(&series, text, strlen(text), &err), 0);
	assert_int_equal(series.count, 1);
	assert_string_equal(series.messages[0].author_name,
			    "Ren\xc3\xa9 Caf\xc3\xa9");
	assert_string_equal(series.messages[0].title,
			    "na\xc3\xafve\xc3\xa9 fix \xef\xbf\xbd\xef\xbf\xbd"
			    " raw");
	assert_int_equal(series.messages[0].number, 1);
	assert_int_equal(series.messages[0].total, 1);
	assert_int_equal(series.messages[0].to_count, 2);
	assert_string_equal(series.messages[0].to[0], "bad@example.org");
	assert_string_equal(series.messages[0].to[1], "plain@example.org");
	assert_string_equal(series.messages[0].body, "Body \xef\xbf\xbd.");
	assert_string_equal(series.messages[0].message_id, "id.1@example.org");
	mbox_series_free(&series);
}

/* A list archive's copy: CRLF line ends, quoted-printable, an in-body
 * From: line naming the real author. */
static void test_mbox__crlf_quoted_printable_and_in_body_from(void **state)
{
	const char *text =
	    "From: Sender <sender@example.org>\r\n"
	    "Subject: [PATCH v2 net-next 2/2] x: y\r\n"
	    "Content-Type: text/plain; charset=\"utf-8\"\r\n"
	    "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
	    "From: Real Author <real@example.org>\r\n\r\n"
	    "A long line that was w=\r\nrapped, caf=C3=A9.\r\n---\r\n"
	    "diff --git a/x b/x\r\n";
	struct mbox_series series;
	char *err = NULL;

	(void)state;
	assert_int_equal(mbox_parse(&series, text, strlen(text), &err), 0);
	assert_string_equal(series.messages[0].author_name, "Real Author");
	assert_string_equal(series.messages[0].author_email,
			    "real@example.org");
	assert_int_equal(series.messages[0].number, 2);
	assert_int_equal(series.messages[0].total, 2);
	assert_string_equal(series.messages[0].title, "x: y");
	assert_string_equal(series.messages[0].body,
			    "A long line that was wrapped, caf\xc3\xa9.");
	assert_non_null(series.messages[0].diff);
	mbox_series_free(&series);
}

/* More messages than the limit are refused; a huge single patch is read
 * whole. */
static void test_mbox__huge_input_is_bounded(void **state)
{
	size_t one_len, i, big = 8u * 1024 * 1024;
	char one[1024], *text, *p;
	struct mbox_series series;
	char *err = NULL;

	(void)state;
	message(one, sizeof(one), "[PATCH] many", DIFF_OK);
	one_len = strlen(one);
	text = malloc((MBOX_MESSAGES_MAX + 1) * (one_len + 1) + 1);
	assert_non_null(text);
	for (i = 0, p = text; i <= MBOX_MESSAGES_MAX; i++) {
		memcpy(p, one, one_len);
		p += one_len;
		*p++ = '\n';
	}
	assert_int_equal(mbox_parse(&series, text, (size_t)(p - text), &err),
			 -1);
	assert_non_null(strstr(err, "more than 500 messages"));
	free(err);
	free(text);

	text = malloc(big + 256);
	assert_non_null(text);
	p = text + sprintf(text, "Subject: [PATCH] big\n\n---\n" DIFF_OK);
	while ((size_t)(p - text) < big) {
		memcpy(p, "+a\n", 3);
		p += 3;
	}
	assert_int_equal(mbox_parse(&series, text, (size_t)(p - text), &err),
			 0);
	assert_int_equal(series.messages[0].diff_len,
			 (size_t)(p - text) - strlen("Subject: [PATCH] big\n\n"
						     "---\n"));
	mbox_series_free(&series);
	free(text);
}

/* A patch that does not apply is named by its index with libgit2's
 * reason; the base of the fixture repository is used. */
static void test_patchapply__failing_patch_is_named(void **state)
{
	const char *bad_diff = "diff --git a/a.txt b/a.txt\n"
			       "--- a/a.txt\n+++ b/a.txt\n"
			       "@@ -1 +1 @@\n-not there\n+x\n";
	struct patchapply_patch apply[2];
	git_repository *repo = NULL;
	git_oid base, out[2];
	char want[64], cmd[2 * PATH_MAX], *err = NULL;
	size_t failed = 99;

	(void)state;
	apply[0] = (struct patchapply_patch){"diff --git a/a.txt b/a.txt\n"
					     "--- a/a.txt\n+++ b/a.txt\n"
					     "@@ -1 +1,2 @@\n base\n+one\n",
					     0,
					     "first\n",
					     "",
					     "",
					     0,
					     0};
	apply[0].diff_len = strlen(apply[0].diff);
	apply[1] = (struct patchapply_patch){
	    bad_diff, strlen(bad_diff), "second\n", "B", "b@x.org", 0, 0};
	assert_int_equal(git_repository_open(&repo, repo_path), 0);
	snprintf(cmd, sizeof(cmd), "git -C '%s' rev-parse HEAD~4", repo_path);
	capture(want, sizeof(want), cmd);
	assert_int_equal(git_oid_fromstr(&base, want), 0);
	assert_int_equal(
	    patchapply_series(out, repo, &base, apply, 2, &failed, &err), -1);
	assert_int_equal(failed, 1);
	assert_non_null(strstr(err, "applying"));
	free(err);
	git_repository_free(repo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mbox__format_patch_series_is_read),
	    cmocka_unit_test(test_patchapply__series_gives_original_trees),
	    cmocka_unit_test(
		test_mbox__bad_numbering_is_refused_with_the_patch_named),
	    cmocka_unit_test(test_mbox__text_that_is_no_mail_is_refused),
	    cmocka_unit_test(test_mbox__non_utf8_headers_become_valid_utf8),
	    cmocka_unit_test(
		test_mbox__crlf_quoted_printable_and_in_body_from),
	    cmocka_unit_test(test_mbox__huge_input_is_bounded),
	    cmocka_unit_test(test_patchapply__failing_patch_is_named),
	};

	gitrepo_global_init();
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

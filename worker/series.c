#include "series.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cause.h"
#include "patchapply.h"

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The bytes of hex text; NULL when it is not hex. */
static char *hex_decode(const char *hex, size_t *len)
{
	size_t n = strlen(hex), i;
	char *out;

	if (n % 2 != 0 || (out = malloc(n / 2 + 1)) == NULL)
		return NULL;
	for (i = 0; i < n / 2; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			free(out);
			return NULL;
		}
		out[i] = (char)(hi * 16 + lo);
	}
	out[n / 2] = '\0';
	*len = n / 2;
	return out;
}

/* The patches up to `sha` as patchapply_patch; the diffs are malloc'd
 * into `diffs`.  Returns how many, or 0 when `sha` is not among them or
 * a patch is malformed. */
static size_t series_patches(struct patchapply_patch *out, char **diffs,
			     json_t *patches, const char *sha)
{
	size_t i;
	json_t *p;

	json_array_foreach(patches, i, p)
	{
		const char *hex =
		    json_string_value(json_object_get(p, "diff"));
		const char *commit =
		    json_string_value(json_object_get(p, "commit"));

		out[i] = (struct patchapply_patch){
		    .message =
			json_string_value(json_object_get(p, "message")),
		    .author_name =
			json_string_value(json_object_get(p, "author_name")),
		    .author_email =
			json_string_value(json_object_get(p, "author_email")),
		    .date = json_integer_value(json_object_get(p, "date")),
		    .date_offset = (int)json_integer_value(
			json_object_get(p, "date_offset")),
		};
		if (hex == NULL || commit == NULL || out[i].message == NULL ||
		    (diffs[i] = hex_decode(hex, &out[i].diff_len)) == NULL)
			return 0;
		out[i].diff = diffs[i];
		if (strcmp(commit, sha) == 0)
			return i + 1;
	}
	return 0;
}

int series_build(git_repository *repo, json_t *series, const char *sha,
		 char **err)
{
	json_t *patches = json_object_get(series, "patches");
	const char *base_text =
	    json_string_value(json_object_get(series, "base"));
	size_t total = json_array_size(patches), count, i, failed;
	struct patchapply_patch *apply = calloc(total + 1, sizeof(*apply));
	char **diffs = calloc(total + 1, sizeof(*diffs));
	git_oid *oids = calloc(total + 1, sizeof(*oids)), base;
	int error = -1;

	*err = NULL;
	if (apply == NULL || diffs == NULL || oids == NULL) {
		cause_set(err, "out of memory");
		goto out;
	}
	count = series_patches(apply, diffs, patches, sha);
	if (base_text == NULL || git_oid_fromstr(&base, base_text) < 0 ||
	    count == 0) {
		cause_set(err,
			  "commit %.12s is not in the task's patch series",
			  sha);
		goto out;
	}
	if (patchapply_series(oids, repo, &base, apply, count, &failed, err) <
	    0)
		goto out;
	for (i = 0; i < count; i++) {
		char got[GIT_OID_HEXSZ + 1];
		const char *want = json_string_value(
		    json_object_get(json_array_get(patches, i), "commit"));

		git_oid_tostr(got, sizeof(got), &oids[i]);
		if (strcmp(got, want) != 0) {
			cause_set(
			    err,
			    "patch %zu made commit %.12s here, not %.12s "
			    "as on the server",
			    i + 1, got, want);
			goto out;
		}
	}
	error = 0;
out:
	for (i = 0; diffs != NULL && i < total; i++)
		free(diffs[i]);
	free(diffs);
	free(apply);
	free(oids);
	return error;
}

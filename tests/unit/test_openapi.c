/*
 * web/openapi.yaml describes exactly the routes the server answers under
 * /api/, /healthz and /metrics: the route table (server_routes) and the
 * document's `paths:` section are compared as sets of (method, path).  Runs
 * from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/server.h"

#define OPENAPI_PATH "web/openapi.yaml"
#define MAX_ENTRIES 256

/* "GET /api/v1/jobs/{}" entries; path parameters as "{}". */
struct entry_set {
	char *items[MAX_ENTRIES];
	char *shown[MAX_ENTRIES]; /* as the source spells it */
	size_t count;
};

static void set_clear(struct entry_set *set)
{
	size_t i;

	for (i = 0; i < set->count; i++) {
		free(set->items[i]);
		free(set->shown[i]);
	}
	set->count = 0;
}

static bool set_has(const struct entry_set *set, const char *item)
{
	size_t i;

	for (i = 0; i < set->count; i++) {
		if (strcmp(set->items[i], item) == 0)
			return true;
	}
	return false;
}

/* Adds an entry; false when it is there already. */
static bool set_add(struct entry_set *set, const char *method,
		    const char *path, const char *shown_path)
{
	char *item = NULL, *shown = NULL;
	size_t i;

	assert_true(set->count < MAX_ENTRIES);
	assert_true(asprintf(&item, "%s %s", method, path) > 0);
	for (i = 0; item[i] != ' '; i++)
		item[i] = (char)toupper((unsigned char)item[i]);
	if (set_has(set, item)) {
		free(item);
		return false;
	}
	assert_true(asprintf(&shown, "%.*s %s", (int)i, item, shown_path) > 0);
	set->items[set->count] = item;
	set->shown[set->count] = shown;
	set->count++;
	return true;
}

/* `path` with every "{name}" segment written "{}", as routes spell it. */
static char *normalize_path(const char *path)
{
	char *out = malloc(strlen(path) + 1), *o = out;
	const char *p = path;

	assert_non_null(out);
	while (*p != '\0') {
		if (*p == '{' && (p == path || p[-1] == '/')) {
			const char *close = strchr(p, '}');

			assert_non_null(close);
			assert_true(close > p + 1); /* "{}" is no name */
			*o++ = '{';
			*o++ = '}';
			p = close + 1;
			continue;
		}
		*o++ = *p++;
	}
	*o = '\0';
	return out;
}

static bool is_method(const char *key)
{
	static const char *const methods[] = {"get",	 "put",	  "post",
					      "delete",	 "patch", "head",
					      "options", "trace", NULL};
	size_t i;

	for (i = 0; methods[i] != NULL; i++) {
		if (strcmp(key, methods[i]) == 0)
			return true;
	}
	return false;
}

/*
 * Reads the (method, path) pairs of the `paths:` section of an OpenAPI
 * document in block style: paths are the keys indented by two spaces,
 * methods the keys indented by four below them.  Returns the count of
 * entries documented twice (0 when all is well).
 */
static size_t openapi_parse(struct entry_set *out, const char *text)
{
	char path[1024] = "", line[1024], key[1024];
	const char *p = text;
	bool in_paths = false;
	size_t duplicates = 0;

	while (*p != '\0') {
		size_t len = strcspn(p, "\n"), indent = 0;
		const char *start, *end;

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
		while (line[indent] == ' ')
			indent++;
		if (line[indent] == '\0' || line[indent] == '#')
			continue;
		if (indent == 0) {
			in_paths = strncmp(line, "paths:", 6) == 0;
			continue;
		}
		if (!in_paths || (indent != 2 && indent != 4))
			continue;
		/* The key: quoted, or up to the first ": " or final ':'. */
		start = line + indent;
		if (*start == '"' || *start == '\'') {
			end = strchr(start + 1, *start);
			if (end == NULL || end[1] != ':')
				continue;
			start++;
		} else {
			end = start;
			while (*end != '\0' &&
			       !(end[0] == ':' &&
				 (end[1] == ' ' || end[1] == '\0')))
				end++;
			if (*end != ':')
				continue;
		}
		snprintf(key, sizeof(key), "%.*s", (int)(end - start), start);
		if (indent == 2) {
			snprintf(path, sizeof(path), "%s", key);
		} else if (path[0] != '\0' && is_method(key)) {
			char *normal = normalize_path(path);

			if (!set_add(out, key, normal, path))
				duplicates++;
			free(normal);
		}
	}
	return duplicates;
}

static char *read_file(const char *name)
{
	FILE *f = fopen(name, "r");
	char *text;
	long size;

	if (f == NULL)
		fail_msg("cannot open %s: run from the repository root", name);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size > 0);
	rewind(f);
	text = malloc((size_t)size + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	text[size] = '\0';
	fclose(f);
	return text;
}

static void test_openapi__parser_reads_paths_and_methods(void **state)
{
	static const char sample[] =
	    "openapi: 3.0.3\n"
	    "paths:\n"
	    "  # a comment\n"
	    "  /healthz:\n"
	    "    get:\n"
	    "      responses:\n"
	    "        \"200\":\n"
	    "          description: ok\n"
	    "  \"/api/v1/things/{thing}/parts/{part}\":\n"
	    "    parameters: []\n"
	    "    delete:\n"
	    "      summary: post: not a method here\n"
	    "\n"
	    "    post: \n"
	    "components:\n"
	    "  schemas:\n"
	    "    get:\n"
	    "      type: object\n";
	struct entry_set set = {0};

	(void)state;
	assert_int_equal(openapi_parse(&set, sample), 0);
	assert_int_equal(set.count, 3);
	assert_string_equal(set.items[0], "GET /healthz");
	assert_string_equal(set.items[1], "DELETE /api/v1/things/{}/parts/{}");
	assert_string_equal(set.shown[1],
			    "DELETE /api/v1/things/{thing}/parts/{part}");
	assert_string_equal(set.items[2], "POST /api/v1/things/{}/parts/{}");
	set_clear(&set);
	/* Two spellings of one route are one route documented twice. */
	assert_int_equal(openapi_parse(&set, "paths:\n"
					     "  /a/{x}:\n"
					     "    get: {}\n"
					     "  /a/{y}:\n"
					     "    get:\n"),
			 1);
	set_clear(&set);
}

static void test_openapi__matches_the_api_routes(void **state)
{
	struct entry_set routes = {0}, documented = {0};
	struct http_route *all = server_routes();
	char *text = read_file(OPENAPI_PATH);
	size_t i, missing = 0, extra = 0, duplicates;

	(void)state;
	assert_non_null(all);
	for (i = 0; all[i].method != NULL; i++) {
		if (strncmp(all[i].pattern, "/api/", 5) != 0 &&
		    strcmp(all[i].pattern, "/healthz") != 0 &&
		    strcmp(all[i].pattern, "/metrics") != 0)
			continue;
		if (!set_add(&routes, all[i].method, all[i].pattern,
			     all[i].pattern))
			print_error("route %s %s is in the table twice\n",
				    all[i].method, all[i].pattern);
	}
	duplicates = openapi_parse(&documented, text);
	if (duplicates > 0)
		print_error("%s documents %zu route(s) twice\n", OPENAPI_PATH,
			    duplicates);
	for (i = 0; i < routes.count; i++) {
		if (!set_has(&documented, routes.items[i])) {
			print_error("the server answers %s but %s does not "
				    "document it\n",
				    routes.shown[i], OPENAPI_PATH);
			missing++;
		}
	}
	for (i = 0; i < documented.count; i++) {
		if (!set_has(&routes, documented.items[i])) {
			print_error("%s documents %s but the server has no "
				    "such route\n",
				    OPENAPI_PATH, documented.shown[i]);
			extra++;
		}
	}
	assert_true(routes.count > 0);
	assert_int_equal(missing, 0);
	assert_int_equal(extra, 0);
	assert_int_equal(duplicates, 0);
	assert_int_equal(routes.count, documented.count);
	set_clear(&routes);
	set_clear(&documented);
	free(text);
	free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_openapi__parser_reads_paths_and_methods),
	    cmocka_unit_test(test_openapi__matches_the_api_routes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

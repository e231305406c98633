#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "tmpl.h"

#define HOSTILE_HTML                                                          \
	"&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"

static const char *partials(void *data, const char *name)
{
	json_t *map = data;

	return json_string_value(json_object_get(map, name));
}

/* Renders `text` with the JSON `context_text`; asserts success. */
static char *render(const char *text, const char *context_text)
{
	json_t *ctx = json_loads(context_text, 0, NULL);
	char *out = NULL, *err = NULL;
	size_t len = 0;

	assert_non_null(ctx);
	if (tmpl_render(&out, &len, text, ctx, NULL, NULL, &err) != 0)
		fail_msg("render failed: %s", err);
	assert_int_equal(len, strlen(out));
	json_decref(ctx);
	return out;
}

static void assert_render(const char *text, const char *context_text,
			  const char *want)
{
	char *out = render(text, context_text);

	assert_string_equal(out, want);
	free(out);
}

/* Asserts that rendering fails with an error that contains `want`. */
static void assert_fails(const char *text, const char *want)
{
	json_t *ctx = json_pack("{s:b,s:s}", "t", 1, "v", "x");
	char *out = (char *)"unchanged", *err = NULL;

	assert_int_equal(tmpl_render(&out, NULL, text, ctx, NULL, NULL, &err),
			 -1);
	assert_null(out);
	assert_non_null(err);
	if (strstr(err, want) == NULL)
		fail_msg("error '%s' does not contain '%s'", err, want);
	free(err);
	json_decref(ctx);
}

static void test_tmpl__escapes_every_special_character_in_text(void **state)
{
	(void)state;
	assert_render("<p>{{v}}</p>", "{\"v\": \"<>&\\\"'\"}",
		      "<p>&lt;&gt;&amp;&quot;&#39;</p>");
	assert_render("{{v}}",
		      "{\"v\": \""
		      "<script>alert('x')</script> & "
		      "\\\"q\\\""
		      "\"}",
		      HOSTILE_HTML);
	assert_render("a{{v}}b", "{\"v\": \"plain text, é ü\"}",
		      "aplain text, é ü"
		      "b");
}

static void test_tmpl__escapes_in_attribute_values(void **state)
{
	(void)state;
	/* Both quote kinds are replaced, so neither kind of attribute can
	 * be closed by a value. */
	assert_render("<input value=\"{{v}}\" title='{{v}}'>",
		      "{\"v\": \"\\\" onfocus=alert(1) x='\"}",
		      "<input value=\"&quot; onfocus=alert(1) x=&#39;\" "
		      "title='&quot; onfocus=alert(1) x=&#39;'>");
	assert_render("<option value=\"{{name}}\">{{name}}</option>",
		      "{\"name\": \"a&b<c>\"}",
		      "<option value=\"a&amp;b&lt;c&gt;\">a&amp;b&lt;c&gt;"
		      "</option>");
}

static void test_tmpl__url_filter_percent_encodes(void **state)
{
	(void)state;
	assert_render(
	    "<a href=\"/?repo={{v|url}}&amp;x=1\">",
	    "{\"v\": \"a b&c<d>\\\"'/?#%é\"}",
	    "<a href=\"/?repo=a%20b%26c%3Cd%3E%22%27%2F%3F%23%25%C3%A9"
	    "&amp;x=1\">");
	assert_render("{{ v | url }}", "{\"v\": \"A-z_0.9~\"}", "A-z_0.9~");
}

static void test_tmpl__raw_tags_do_not_escape(void **state)
{
	(void)state;
	assert_render("{{{svg}}}|{{&svg}}", "{\"svg\": \"<svg a='1'/>\"}",
		      "<svg a='1'/>|<svg a='1'/>");
}

static void test_tmpl__escapes_inside_sections_and_partials(void **state)
{
	json_t *map = json_pack("{s:s}", "row", "<td>{{name}}</td>");
	json_t *ctx = json_pack("{s:[{s:s},{s:s}],s:{s:s}}", "rows", "name",
				"<b>", "name", "'&'", "obj", "name", "\"o\"");
	char *out = NULL, *err = NULL;

	(void)state;
	assert_int_equal(tmpl_render(&out, NULL,
				     "{{#rows}}{{>row}}{{/rows}}"
				     "{{#obj}}<i title=\"{{name}}\">{{/obj}}",
				     ctx, partials, map, &err),
			 0);
	assert_string_equal(out, "<td>&lt;b&gt;</td><td>&#39;&amp;&#39;</td>"
				 "<i title=\"&quot;o&quot;\">");
	free(out);
	json_decref(ctx);
	json_decref(map);
}

static void test_tmpl__values_are_not_templates(void **state)
{
	(void)state;
	assert_render("{{v}}", "{\"v\": \"{{w}} {{{w}}}\", \"w\": \"<x>\"}",
		      "{{w}} {{{w}}}");
}

static void test_tmpl__sections(void **state)
{
	(void)state;
	assert_render("{{#list}}[{{.}}]{{/list}}",
		      "{\"list\": [1, \"a\", 2.5]}", "[1][a][2.5]");
	assert_render("{{#list}}x{{/list}}{{^list}}none{{/list}}",
		      "{\"list\": []}", "none");
	assert_render("{{#o}}{{a}}-{{b}}{{/o}}",
		      "{\"o\": {\"a\": 1}, \"b\": 2}", "1-2");
	assert_render("{{#t}}yes{{/t}}{{^t}}no{{/t}}", "{\"t\": true}", "yes");
	assert_render("{{#t}}yes{{/t}}{{^t}}no{{/t}}", "{\"t\": false}", "no");
	assert_render("{{#t}}yes{{/t}}{{^t}}no{{/t}}", "{\"t\": null}", "no");
	assert_render("{{#t}}yes{{/t}}{{^t}}no{{/t}}", "{\"t\": \"\"}", "no");
	assert_render("{{#t}}yes{{/t}}{{^t}}no{{/t}}", "{}", "no");
	assert_render("{{#t}}yes{{/t}}{{^t}}no{{/t}}", "{\"t\": 0}", "yes");
	assert_render("{{#a}}{{#b}}{{c}}{{/b}}{{/a}}",
		      "{\"a\": [{\"b\": [{\"c\": 1}, {\"c\": 2}]}, "
		      "{\"b\": [{\"c\": 3}]}]}",
		      "123");
	/* A section closes at its own name even with the same name nested. */
	assert_render("{{#a}}<{{#a}}{{x}}{{/a}}>{{/a}}",
		      "{\"a\": {\"a\": {\"x\": 7}}}", "<7>");
}

static void test_tmpl__dotted_names_and_scalars(void **state)
{
	(void)state;
	assert_render("{{job.state}} {{job.culprit.sha}} {{job.none}}.",
		      "{\"job\": {\"state\": \"done\", \"culprit\": "
		      "{\"sha\": \"abc\"}}}",
		      "done abc .");
	assert_render("{{i}} {{r}} {{t}} {{f}} {{n}} {{missing}}|",
		      "{\"i\": -42, \"r\": 0.5, \"t\": true, \"f\": false, "
		      "\"n\": null}",
		      "-42 0.5 true   |");
	assert_render("{{! a comment }}x{{ name }}y", "{\"name\": \"N\"}",
		      "xNy");
	assert_render("", "{}", "");
	assert_render("no tags { } }} here", "{}", "no tags { } }} here");
}

static void test_tmpl__errors_name_the_line(void **state)
{
	(void)state;
	assert_fails("a\nb\n{{v", "line 3: unclosed {{ tag");
	assert_fails("{{{v}}", "line 1: unclosed {{{ tag");
	assert_fails("\n{{#t}}x", "line 2: section 't' is not closed");
	assert_fails("{{#t}}x{{/u}}", "{{/u}} closes {{#t}}");
	assert_fails("x{{/t}}", "{{/t}} without its section");
	assert_fails("{{v|js}}", "unknown filter 'js'");
	assert_fails("{{{v|url}}}", "bad filter");
	assert_fails("{{>nope}}", "unknown partial 'nope'");
	assert_fails("{{}}", "a tag needs a short name");
	assert_fails("{{a b}}", "bad name");
}

static void test_tmpl__nesting_limits(void **state)
{
	json_t *map = json_pack("{s:s}", "self", "x{{>self}}");
	json_t *ctx = json_pack("{s:b}", "t", 1);
	char text[1024] = "", *out = NULL, *err = NULL;
	int i;

	(void)state;
	assert_int_equal(
	    tmpl_render(&out, NULL, "{{>self}}", ctx, partials, map, &err),
	    -1);
	assert_non_null(strstr(err, "partials nested too deeply"));
	free(err);
	err = NULL;
	for (i = 0; i < 40; i++)
		strcat(text, "{{#t}}");
	for (i = 0; i < 40; i++)
		strcat(text, "{{/t}}");
	assert_int_equal(tmpl_render(&out, NULL, text, ctx, NULL, NULL, &err),
			 -1);
	assert_non_null(strstr(err, "sections nested too deeply"));
	free(err);
	/* 31 nested sections are fine. */
	text[0] = '\0';
	for (i = 0; i < 31; i++)
		strcat(text, "{{#t}}");
	strcat(text, "ok");
	for (i = 0; i < 31; i++)
		strcat(text, "{{/t}}");
	assert_int_equal(tmpl_render(&out, NULL, text, ctx, NULL, NULL, NULL),
			 0);
	assert_string_equal(out, "ok");
	free(out);
	json_decref(ctx);
	json_decref(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_tmpl__escapes_every_special_character_in_text),
	    cmocka_unit_test(test_tmpl__escapes_in_attribute_values),
	    cmocka_unit_test(test_tmpl__url_filter_percent_encodes),
	    cmocka_unit_test(test_tmpl__raw_tags_do_not_escape),
	    cmocka_unit_test(test_tmpl__escapes_inside_sections_and_partials),
	    cmocka_unit_test(test_tmpl__values_are_not_templates),
	    cmocka_unit_test(test_tmpl__sections),
	    cmocka_unit_test(test_tmpl__dotted_names_and_scalars),
	    cmocka_unit_test(test_tmpl__errors_name_the_line),
	    cmocka_unit_test(test_tmpl__nesting_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

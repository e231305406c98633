#include "tmpl.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

#define TMPL_MAX_STACK 32
#define TMPL_MAX_PARTIALS 8
#define TMPL_MAX_NAME 128

enum tag_kind {
	TAG_VALUE,    /* {{name}} */
	TAG_RAW,      /* {{{name}}} */
	TAG_SECTION,  /* {{#name}} */
	TAG_INVERTED, /* {{^name}} */
	TAG_CLOSE,    /* {{/name}} */
	TAG_PARTIAL,  /* {{>name}} */
	TAG_COMMENT,  /* {{! ...}} */
};

struct tag {
	size_t start, end; /* the tag's bytes: [start, end) */
	enum tag_kind kind;
	char name[TMPL_MAX_NAME];
	char filter[16];
};

struct render {
	struct strbuf out;
	json_t *stack[TMPL_MAX_STACK];
	size_t depth;
	unsigned partial_depth;
	tmpl_partial_fn partials;
	void *partials_data;
	char *err;
};

static int fail(struct render *r, const char *text, size_t pos,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(struct render *r, const char *text, size_t pos,
		const char *fmt, ...)
{
	char message[256];
	unsigned line = 1;
	size_t i;
	va_list ap;

	if (r->err != NULL)
		return -1;
	for (i = 0; i < pos && text[i] != '\0'; i++)
		line += text[i] == '\n';
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	if (asprintf(&r->err, "template line %u: %s", line, message) < 0)
		r->err = NULL;
	return -1;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * Finds the next tag at or after `pos` in text[0, len).  Returns 1 and
 * fills *tag, 0 when there is none, -1 (with the error set) when a tag is
 * malformed.
 */
static int next_tag(struct render *r, const char *text, size_t len, size_t pos,
		    struct tag *tag)
{
	const char *open, *close, *body, *bar;
	size_t body_len, name_len;

	open = pos < len ? strstr(text + pos, "{{") : NULL;
	if (open == NULL || (size_t)(open - text) >= len)
		return 0;
	tag->start = (size_t)(open - text);
	if (open[2] == '{') {
		tag->kind = TAG_RAW;
		body = open + 3;
		close = strstr(body, "}}}");
		if (close == NULL)
			return fail(r, text, tag->start, "unclosed {{{ tag");
		tag->end = (size_t)(close - text) + 3;
	} else {
		body = open + 2;
		close = strstr(body, "}}");
		if (close == NULL)
			return fail(r, text, tag->start, "unclosed {{ tag");
		tag->end = (size_t)(close - text) + 2;
		switch (*body) {
		case '#':
			tag->kind = TAG_SECTION;
			break;
		case '^':
			tag->kind = TAG_INVERTED;
			break;
		case '/':
			tag->kind = TAG_CLOSE;
			break;
		case '>':
			tag->kind = TAG_PARTIAL;
			break;
		case '!':
			tag->kind = TAG_COMMENT;
			break;
		case '&':
			tag->kind = TAG_RAW;
			break;
		default:
			tag->kind = TAG_VALUE;
			body--;
			break;
		}
		body++;
	}
	if (tag->end > len)
		return fail(r, text, tag->start, "unclosed tag");
	tag->name[0] = tag->filter[0] = '\0';
	if (tag->kind == TAG_COMMENT)
		return 1;
	while (body < close && is_space(*body))
		body++;
	body_len = (size_t)(close - body);
	while (body_len > 0 && is_space(body[body_len - 1]))
		body_len--;
	bar = memchr(body, '|', body_len);
	name_len = bar != NULL ? (size_t)(bar - body) : body_len;
	while (name_len > 0 && is_space(body[name_len - 1]))
		name_len--;
	if (name_len == 0 || name_len >= sizeof(tag->name))
		return fail(r, text, tag->start, "a tag needs a short name");
	memcpy(tag->name, body, name_len);
	tag->name[name_len] = '\0';
	if (strpbrk(tag->name, " \t\r\n{}") != NULL)
		return fail(r, text, tag->start, "bad name '%.40s'",
			    tag->name);
	if (bar != NULL) {
		size_t filter_len = body_len - (size_t)(bar - body) - 1;
		const char *f = bar + 1;

		while (filter_len > 0 && is_space(*f)) {
			f++;
			filter_len--;
		}
		if (tag->kind != TAG_VALUE || filter_len == 0 ||
		    filter_len >= sizeof(tag->filter))
			return fail(r, text, tag->start, "bad filter in '%s'",
				    tag->name);
		memcpy(tag->filter, f, filter_len);
		tag->filter[filter_len] = '\0';
		if (strcmp(tag->filter, "url") != 0)
			return fail(r, text, tag->start, "unknown filter '%s'",
				    tag->filter);
	}
	return 1;
}

/* Looks `name` up in the context stack; NULL when missing. */
static json_t *lookup(const struct render *r, const char *name)
{
	char key[TMPL_MAX_NAME];
	const char *dot, *rest;
	json_t *value = NULL;
	size_t i;

	if (r->depth == 0)
		return NULL;
	if (strcmp(name, ".") == 0)
		return r->stack[r->depth - 1];
	dot = strchr(name, '.');
	if (dot == NULL) {
		strcpy(key, name);
		rest = NULL;
	} else {
		memcpy(key, name, (size_t)(dot - name));
		key[dot - name] = '\0';
		rest = dot + 1;
	}
	for (i = r->depth; i-- > 0;) {
		value = json_object_get(r->stack[i], key);
		if (value != NULL)
			break;
	}
	while (value != NULL && rest != NULL) {
		dot = strchr(rest, '.');
		if (dot == NULL) {
			value = json_object_get(value, rest);
			break;
		}
		memcpy(key, rest, (size_t)(dot - rest));
		key[dot - rest] = '\0';
		value = json_object_get(value, key);
		rest = dot + 1;
	}
	return value;
}

static bool truthy(json_t *value)
{
	if (value == NULL || json_is_null(value) || json_is_false(value))
		return false;
	if (json_is_string(value))
		return json_string_length(value) > 0;
	if (json_is_array(value))
		return json_array_size(value) > 0;
	return true;
}

static void put_value(struct render *r, const struct tag *tag, json_t *value)
{
	char number[64];
	const char *text = NULL;
	size_t len = 0;

	if (json_is_string(value)) {
		text = json_string_value(value);
		len = json_string_length(value);
	} else if (json_is_integer(value)) {
		len = (size_t)snprintf(number, sizeof(number), "%lld",
				       (long long)json_integer_value(value));
		text = number;
	} else if (json_is_real(value)) {
		len = (size_t)snprintf(number, sizeof(number), "%g",
				       json_real_value(value));
		text = number;
	} else if (json_is_true(value)) {
		text = "true";
		len = 4;
	}
	if (text == NULL)
		return;
	if (tag->kind == TAG_RAW)
		strbuf_appendn(&r->out, text, len);
	else if (tag->filter[0] != '\0')
		strbuf_url(&r->out, text, len);
	else
		strbuf_html(&r->out, text, len);
}

/*
 * Finds the {{/name}} that closes the section opened by `open`: fills
 * *inner_end (where the section's body ends) and *after (past the close).
 */
static int find_close(struct render *r, const char *text, size_t len,
		      const struct tag *open, size_t *inner_end, size_t *after)
{
	struct tag tag;
	size_t pos = open->end;
	unsigned nesting = 0;
	int found;

	while ((found = next_tag(r, text, len, pos, &tag)) == 1) {
		pos = tag.end;
		if (tag.kind == TAG_SECTION || tag.kind == TAG_INVERTED) {
			nesting++;
		} else if (tag.kind == TAG_CLOSE) {
			if (nesting > 0) {
				nesting--;
				continue;
			}
			if (strcmp(tag.name, open->name) != 0)
				return fail(r, text, tag.start,
					    "{{/%s}} closes {{#%s}}", tag.name,
					    open->name);
			*inner_end = tag.start;
			*after = tag.end;
			return 0;
		}
	}
	if (found < 0)
		return -1;
	return fail(r, text, open->start, "section '%s' is not closed",
		    open->name);
}

static int render_text(struct render *r, const char *text, size_t from,
		       size_t to);

static int push(struct render *r, json_t *value, const char *text, size_t pos)
{
	if (r->depth == TMPL_MAX_STACK)
		return fail(r, text, pos, "sections nested too deeply");
	r->stack[r->depth++] = value;
	return 0;
}

/* Renders the body text[from, to) of the section `tag` for `value`. */
static int render_section(struct render *r, const struct tag *tag,
			  json_t *value, const char *text, size_t from,
			  size_t to)
{
	size_t i;
	json_t *item;

	if (tag->kind == TAG_INVERTED)
		return truthy(value) ? 0 : render_text(r, text, from, to);
	if (!truthy(value))
		return 0;
	if (json_is_array(value)) {
		json_array_foreach(value, i, item)
		{
			if (push(r, item, text, tag->start) < 0 ||
			    render_text(r, text, from, to) < 0)
				return -1;
			r->depth--;
		}
		return 0;
	}
	if (push(r, value, text, tag->start) < 0 ||
	    render_text(r, text, from, to) < 0)
		return -1;
	r->depth--;
	return 0;
}

static int render_partial(struct render *r, const struct tag *tag,
			  const char *text)
{
	const char *partial;
	int error;

	partial = r->partials != NULL
		      ? r->partials(r->partials_data, tag->name)
		      : NULL;
	if (partial == NULL)
		return fail(r, text, tag->start, "unknown partial '%s'",
			    tag->name);
	if (r->partial_depth == TMPL_MAX_PARTIALS)
		return fail(r, text, tag->start, "partials nested too deeply");
	r->partial_depth++;
	error = render_text(r, partial, 0, strlen(partial));
	r->partial_depth--;
	return error;
}

/*
 * Renders text[from, to).  Positions stay offsets into the whole template
 * `text`, so error messages name its lines.
 */
static int render_text(struct render *r, const char *text, size_t from,
		       size_t to)
{
	struct tag tag;
	size_t pos = from, len = to, inner_end = 0, after = 0;
	int found;

	while ((found = next_tag(r, text, len, pos, &tag)) == 1) {
		strbuf_appendn(&r->out, text + pos, tag.start - pos);
		pos = tag.end;
		switch (tag.kind) {
		case TAG_COMMENT:
			break;
		case TAG_VALUE:
		case TAG_RAW:
			put_value(r, &tag, lookup(r, tag.name));
			break;
		case TAG_SECTION:
		case TAG_INVERTED:
			if (find_close(r, text, len, &tag, &inner_end,
				       &after) < 0)
				return -1;
			if (render_section(r, &tag, lookup(r, tag.name), text,
					   tag.end, inner_end) < 0)
				return -1;
			pos = after;
			break;
		case TAG_CLOSE:
			return fail(r, text, tag.start,
				    "{{/%s}} without its section", tag.name);
		case TAG_PARTIAL:
			if (render_partial(r, &tag, text) < 0)
				return -1;
			break;
		}
	}
	if (found < 0)
		return -1;
	strbuf_appendn(&r->out, text + pos, len - pos);
	return 0;
}

int tmpl_render(char **out, size_t *out_len, const char *text, json_t *context,
		tmpl_partial_fn partials, void *partials_data, char **err)
{
	struct render r;
	int error;

	memset(&r, 0, sizeof(r));
	r.partials = partials;
	r.partials_data = partials_data;
	*out = NULL;
	if (out_len != NULL)
		*out_len = 0;
	if (err != NULL)
		*err = NULL;
	r.stack[r.depth++] = context;
	error = render_text(&r, text, 0, strlen(text));
	if (error == 0 && strbuf_finish(out, out_len, &r.out) < 0)
		error = fail(&r, text, 0, "out of memory");
	strbuf_clear(&r.out);
	if (error < 0) {
		if (err != NULL)
			*err = r.err != NULL ? r.err : strdup("out of memory");
		else
			free(r.err);
		return -1;
	}
	return 0;
}

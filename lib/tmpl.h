/*
 * A small logic-less template renderer for the web UI's pages, in the
 * manner of Mustache.  Pure: the caller hands in the template text, the
 * values (a jansson object) and a resolver for partials; nothing is read
 * from files here.
 *
 * Tags:
 *   {{name}}          the value, HTML-escaped (& < > " ' all replaced), so
 *                     it is safe in text and in quoted attribute values
 *   {{name|url}}      the value percent-encoded for a URL query value or
 *                     path segment (then safe in an attribute as well)
 *   {{{name}}}        the value as it is: only for HTML the program made
 *                     itself, such as an escaped SVG plot
 *   {{#name}}..{{/name}}  an array: once per element, the element on top
 *                     of the context; an object: once, the object on top;
 *                     any other true value: once; a false value: never
 *   {{^name}}..{{/name}}  once when the value is false
 *   {{>name}}         the partial template `name`, in the same context
 *   {{! text }}       a comment
 * A name is "." (the top of the context) or dotted keys ("job.state"); the
 * first key is looked up from the top of the context stack down.  False
 * values: a missing name, null, false, "", an empty array.  Numbers print
 * as integers or with %g; true prints "true"; null and missing print
 * nothing.
 */
#ifndef STATBISECT_TMPL_H
#define STATBISECT_TMPL_H

#include <jansson.h>
#include <stddef.h>

/* The text of the partial called `name` (borrowed), or NULL if unknown. */
typedef const char *(*tmpl_partial_fn)(void *data, const char *name);

/*
 * Renders `text` with the values of `context` (borrowed; any JSON value).
 * `partials` may be NULL when the template uses none.  Returns 0 with the
 * malloc'd output in *out and its length in *out_len (which may be NULL),
 * or -1 with *out NULL and a malloc'd message in *err (which may be NULL)
 * naming the line of the fault: an unclosed tag or section, a close that
 * does not match, an unknown filter or partial, nesting deeper than 32
 * sections or 8 partials, or no memory.
 */
int tmpl_render(char **out, size_t *out_len, const char *text, json_t *context,
		tmpl_partial_fn partials, void *partials_data, char **err);

#endif

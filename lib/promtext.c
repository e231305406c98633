#include "promtext.h"

#include <math.h>
#include <stdio.h>

/* `text` with backslash and line feed escaped, and the double quote too
 * when `quote` (a label value). */
static void escaped(struct strbuf *out, const char *text, int quote)
{
	for (; *text != '\0'; text++) {
		if (*text == '\\')
			strbuf_append(out, "\\\\");
		else if (*text == '\n')
			strbuf_append(out, "\\n");
		else if (quote && *text == '"')
			strbuf_append(out, "\\\"");
		else
			strbuf_appendn(out, text, 1);
	}
}

void promtext_label_value(struct strbuf *out, const char *value)
{
	escaped(out, value, 1);
}

void promtext_family(struct strbuf *out, const char *name, const char *type,
		     const char *help)
{
	strbuf_printf(out, "# HELP %s ", name);
	escaped(out, help, 0);
	strbuf_printf(out, "\n# TYPE %s %s\n", name, type);
}

static void number(struct strbuf *out, double value)
{
	if (isnan(value))
		strbuf_append(out, "NaN");
	else if (isinf(value))
		strbuf_append(out, value > 0 ? "+Inf" : "-Inf");
	else if (value == floor(value) && fabs(value) < 1e15)
		strbuf_printf(out, "%.0f", value);
	else
		strbuf_printf(out, "%.17g", value);
}

void promtext_sample(struct strbuf *out, const char *name,
		     const struct promtext_label *labels, size_t count,
		     double value)
{
	size_t i;

	strbuf_append(out, name);
	for (i = 0; i < count; i++) {
		strbuf_printf(out, "%s%s=\"", i == 0 ? "{" : ",",
			      labels[i].name);
		escaped(out, labels[i].value, 1);
		strbuf_append(out, "\"");
	}
	if (count > 0)
		strbuf_append(out, "}");
	strbuf_append(out, " ");
	number(out, value);
	strbuf_append(out, "\n");
}

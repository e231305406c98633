/*
 * The Prometheus text exposition format, version 0.0.4: what GET /metrics
 * answers.  A family is introduced by its "# HELP" and "# TYPE" lines,
 * then each sample is one line "name{label="value",...} number".  Label
 * values escape backslash, double quote and line feed (\\, \", \n); help
 * text escapes backslash and line feed.  Pure: text in, text out.
 */
#ifndef STATBISECT_PROMTEXT_H
#define STATBISECT_PROMTEXT_H

#include <stddef.h>

#include "strbuf.h"

/* The Content-Type of the format. */
#define PROMTEXT_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* One label of a sample: its name (a Prometheus label name, written as
 * given) and its value (any text, escaped). */
struct promtext_label {
	const char *name;
	const char *value;
};

/*
 * Appends the "# HELP name help" and "# TYPE name type" lines of a family;
 * `type` is "counter", "gauge", "histogram", "summary" or "untyped".
 */
void promtext_family(struct strbuf *out, const char *name, const char *type,
		     const char *help);

/*
 * Appends the sample line of `name` with the `count` labels (none when 0)
 * and `value`: an integer is written without a fraction, NaN as "NaN",
 * infinities as "+Inf" and "-Inf", any other number with the precision
 * a double round-trips with.
 */
void promtext_sample(struct strbuf *out, const char *name,
		     const struct promtext_label *labels, size_t count,
		     double value);

/* Appends `value` escaped as a label value (without the quotes). */
void promtext_label_value(struct strbuf *out, const char *value);

#endif

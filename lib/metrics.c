#include "metrics.h"

#include <errno.h>
#include <jansson.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * strtod() follows LC_NUMERIC, so a program that once called setlocale()
 * would read "1.5" as 1.  strtod_l() with a "C" locale object does not;
 * the object is created once and never changed, so threads may share it.
 */
static pthread_once_t c_numeric_once = PTHREAD_ONCE_INIT;
static locale_t c_numeric = (locale_t)0;

static void c_numeric_init(void)
{
	c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

static bool name_char(char c)
{
	return c > ' ' && c <= '~';
}

static bool name_chars(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!name_char(s[i]))
			return false;
	return true;
}

bool metrics_name_valid(const char *name)
{
	size_t len;

	if (name == NULL)
		return false;
	len = strnlen(name, METRICS_NAME_MAX + 1);
	return len > 0 && len <= METRICS_NAME_MAX && name_chars(name, len);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Whether s[0, len) is [+-]digits[.digits][(e|E)[+-]digits] in full. */
static bool decimal_syntax(const char *s, size_t len)
{
	size_t i = 0, digits = 0, exp_digits = 0;

	if (i < len && (s[i] == '+' || s[i] == '-'))
		i++;
	for (; i < len && is_digit(s[i]); i++)
		digits++;
	if (i < len && s[i] == '.')
		for (i++; i < len && is_digit(s[i]); i++)
			digits++;
	if (digits == 0)
		return false;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		for (; i < len && is_digit(s[i]); i++)
			exp_digits++;
		if (exp_digits == 0)
			return false;
	}
	return i == len;
}

/*
 * Sets *value from s[0, len) when that is a finite decimal number.
 * Returns 1 when it is, 0 when it is not, -ENOMEM.
 */
static int parse_value(double *value, const char *s, size_t len)
{
	char small[64], *buf = small, *end;
	double v;

	if (!decimal_syntax(s, len))
		return 0;
	if (len >= sizeof(small) && (buf = malloc(len + 1)) == NULL)
		return -ENOMEM;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = strtod_l(buf, &end, c_numeric);
	if (buf != small)
		free(buf);
	if (end != buf + len || !isfinite(v))
		return 0;
	*value = v;
	return 1;
}

static int entries_append(struct metrics *m, const char *name, size_t len,
			  double value)
{
	struct metrics_entry *entries;
	size_t capacity;
	char *copy;

	if (m->count == m->capacity) {
		capacity = m->capacity ? m->capacity * 2 : 16;
		if (capacity > SIZE_MAX / sizeof(*entries))
			return -ENOMEM;
		entries = realloc(m->entries, capacity * sizeof(*entries));
		if (entries == NULL)
			return -ENOMEM;
		m->entries = entries;
		m->capacity = capacity;
	}
	if ((copy = malloc(len + 1)) == NULL)
		return -ENOMEM;
	memcpy(copy, name, len);
	copy[len] = '\0';
	m->entries[m->count].name = copy;
	m->entries[m->count].value = value;
	m->count++;
	return 0;
}

int metrics_new(struct metrics **out)
{
	if (out == NULL)
		return -EINVAL;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

int metrics_add(struct metrics *m, const char *name, double value)
{
	size_t i;

	if (m == NULL || !metrics_name_valid(name) || !isfinite(value))
		return -EINVAL;
	for (i = 0; i < m->count; i++) {
		if (strcmp(m->entries[i].name, name) == 0) {
			m->entries[i].value = value;
			return 0;
		}
	}
	return entries_append(m, name, strlen(name), value);
}

const struct metrics_entry *metrics_find(const struct metrics *m,
					 const char *name)
{
	if (m == NULL || name == NULL)
		return NULL;
	for (size_t i = 0; i < m->count; i++)
		if (strcmp(m->entries[i].name, name) == 0)
			return &m->entries[i];
	return NULL;
}

void metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->count; i++)
		free(m->entries[i].name);
	free(m->entries);
	free(m);
}

/*
 * metrics_parse() finds repeated names through this open-addressing table
 * of entry positions (plus one; 0 marks a free slot), so a large output
 * costs linear time instead of a scan per line.
 */
struct name_index {
	size_t *slots;
	size_t size; /* a power of two, at least twice the entries */
};

static uint64_t name_hash(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static size_t *index_slot(const struct name_index *index,
			  const struct metrics *m, const char *name,
			  size_t len)
{
	size_t i = (size_t)name_hash(name, len) & (index->size - 1);
	const char *other;

	for (;; i = (i + 1) & (index->size - 1)) {
		if (index->slots[i] == 0)
			return &index->slots[i];
		other = m->entries[index->slots[i] - 1].name;
		if (strncmp(other, name, len) == 0 && other[len] == '\0')
			return &index->slots[i];
	}
}

static int index_grow(struct name_index *index, const struct metrics *m)
{
	size_t size = index->size ? index->size * 2 : 64, *slots, *slot;
	struct name_index grown;
	const char *name;

	if (size > SIZE_MAX / 2 / sizeof(*slots))
		return -ENOMEM;
	if ((slots = calloc(size, sizeof(*slots))) == NULL)
		return -ENOMEM;
	grown.slots = slots;
	grown.size = size;
	for (size_t i = 0; i < m->count; i++) {
		name = m->entries[i].name;
		slot = index_slot(&grown, m, name, strlen(name));
		*slot = i + 1;
	}
	free(index->slots);
	*index = grown;
	return 0;
}

/*
 * Sets metric name[0, len) (NUL-terminated) of `m` to `value` through
 * `index`; *position, when not NULL, receives the entry's position.
 */
static int index_put(struct metrics *m, struct name_index *index,
		     const char *name, size_t len, double value,
		     size_t *position)
{
	size_t *slot = index_slot(index, m, name, len);
	int error;

	if (*slot != 0) {
		m->entries[*slot - 1].value = value;
		if (position != NULL)
			*position = *slot - 1;
		return 0;
	}
	if ((error = entries_append(m, name, len, value)) < 0)
		return error;
	*slot = m->count;
	if (position != NULL)
		*position = m->count - 1;
	if (m->count * 2 > index->size)
		return index_grow(index, m);
	return 0;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Adds the metric on line[0, len) when it is one; 0 when it is not. */
static int parse_line(struct metrics *m, struct name_index *index,
		      const char *prefix, size_t prefix_len, const char *line,
		      size_t len)
{
	char name[METRICS_NAME_MAX + 1];
	const char *sep = NULL, *value, *end = line + len;
	size_t name_len;
	double number;
	int error;

	for (const char *p = line; p + 1 < end; p++) {
		if (p[0] == ':' && p[1] == ' ') {
			sep = p;
			break;
		}
	}
	if (sep == NULL || sep == line || !name_chars(line, sep - line))
		return 0;
	name_len = prefix_len + (size_t)(sep - line);
	if (name_len > METRICS_NAME_MAX)
		return 0;

	for (value = sep + 2; value < end && blank(*value); value++)
		;
	while (end > value && blank(end[-1]))
		end--;
	if ((error = parse_value(&number, value, end - value)) <= 0)
		return error;

	if (prefix_len > 0)
		memcpy(name, prefix, prefix_len);
	memcpy(name + prefix_len, line, sep - line);
	name[name_len] = '\0';
	return index_put(m, index, name, name_len, number, NULL);
}

/* Adds the metrics of every line of text[0, len) to `m`. */
static int parse_lines(struct metrics *m, struct name_index *index,
		       const char *prefix, size_t prefix_len, const char *text,
		       size_t len)
{
	size_t pos = 0, line_len;
	const char *line, *newline;
	int error;

	while (pos < len) {
		line = text + pos;
		newline = memchr(line, '\n', len - pos);
		line_len = newline ? (size_t)(newline - line) : len - pos;
		pos += line_len + (newline ? 1 : 0);
		if (line_len > 0 && line[line_len - 1] == '\r')
			line_len--;
		error =
		    parse_line(m, index, prefix, prefix_len, line, line_len);
		if (error < 0)
			return error;
	}
	return 0;
}

/* Checks `prefix` (NULL is none) and the "C" numeric locale. */
static int check_prefix(const char *prefix, size_t *prefix_len)
{
	*prefix_len = 0;
	if (prefix != NULL) {
		*prefix_len = strnlen(prefix, METRICS_NAME_MAX + 1);
		if (*prefix_len > METRICS_NAME_MAX ||
		    !name_chars(prefix, *prefix_len))
			return -EINVAL;
	}
	pthread_once(&c_numeric_once, c_numeric_init);
	if (c_numeric == (locale_t)0)
		return -ENOMEM;
	return 0;
}

int metrics_parse(struct metrics **out, const char *text, size_t len,
		  const char *prefix)
{
	struct name_index index = {NULL, 0};
	struct metrics *m = NULL;
	size_t prefix_len = 0;
	int error;

	if (out != NULL)
		*out = NULL;
	if (out == NULL || (text == NULL && len > 0))
		return -EINVAL;
	if ((error = check_prefix(prefix, &prefix_len)) < 0)
		return error;

	if ((error = metrics_new(&m)) < 0 || (error = index_grow(&index, m)) ||
	    (error = parse_lines(m, &index, prefix, prefix_len, text, len)))
		goto out;
	*out = m;
	m = NULL;

out:
	free(index.slots);
	metrics_free(m);
	return error;
}

const char *metrics_format_name(enum metrics_format format)
{
	switch (format) {
	case METRICS_FORMAT_LINES:
		return "lines";
	case METRICS_FORMAT_JSON:
		return "json";
	case METRICS_FORMAT_GBENCH:
		return "google-benchmark";
	case METRICS_FORMAT_HYPERFINE:
		return "hyperfine";
	}
	return "?";
}

/*
 * Where the JSON walkers put metrics: the set, its name index, and for
 * each entry how many values were averaged into it (Google Benchmark
 * repetitions).
 */
struct json_sink {
	struct metrics *m;
	struct name_index index;
	size_t *averaged;
	size_t averaged_size;
	const char *prefix;
	size_t prefix_len;
};

/* A metric name being assembled; too_long once it cannot fit. */
struct name_buf {
	char text[METRICS_NAME_MAX + 1];
	size_t len;
	bool too_long;
};

static void name_start(struct name_buf *n, const struct json_sink *sink)
{
	memcpy(n->text, sink->prefix, sink->prefix_len);
	n->len = sink->prefix_len;
	n->text[n->len] = '\0';
	n->too_long = false;
}

/* Appends s, each byte that is no name character replaced by '_'. */
static void name_append(struct name_buf *n, const char *s)
{
	for (; *s != '\0'; s++) {
		if (n->len == METRICS_NAME_MAX) {
			n->too_long = true;
			return;
		}
		n->text[n->len++] = name_char(*s) ? *s : '_';
	}
	n->text[n->len] = '\0';
}

/*
 * Sets the metric named `n` to `value` (ignored when the name is too long
 * or has nothing after the prefix); with `average`, to the mean of every
 * value put with `average` under that name.
 */
static int sink_put(struct json_sink *sink, const struct name_buf *n,
		    double value, bool average)
{
	size_t position, size, *grown, *slot, k;
	struct metrics_entry *e;
	double mean;
	int error;

	if (n->too_long || n->len == sink->prefix_len || !isfinite(value))
		return 0;
	if (!average)
		return index_put(sink->m, &sink->index, n->text, n->len, value,
				 NULL);
	slot = index_slot(&sink->index, sink->m, n->text, n->len);
	if (*slot != 0 && *slot - 1 < sink->averaged_size &&
	    sink->averaged[*slot - 1] > 0) {
		e = &sink->m->entries[*slot - 1];
		k = ++sink->averaged[*slot - 1];
		mean = e->value + (value - e->value) / (double)k;
		if (isfinite(mean))
			e->value = mean;
		return 0;
	}
	error = index_put(sink->m, &sink->index, n->text, n->len, value,
			  &position);
	if (error < 0)
		return error;
	if (position >= sink->averaged_size) {
		size = sink->averaged_size ? sink->averaged_size : 64;
		while (size <= position)
			size *= 2;
		grown = realloc(sink->averaged, size * sizeof(*grown));
		if (grown == NULL)
			return -ENOMEM;
		memset(grown + sink->averaged_size, 0,
		       (size - sink->averaged_size) * sizeof(*grown));
		sink->averaged = grown;
		sink->averaged_size = size;
	}
	sink->averaged[position] = 1;
	return 0;
}

/* Flat JSON: numbers, and the members of nested objects joined by '.'. */
static int walk_flat(struct json_sink *sink, struct name_buf *n,
		     json_t *object)
{
	size_t saved = n->len;
	bool saved_long = n->too_long;
	const char *key;
	json_t *value;
	int error;

	json_object_foreach(object, key, value)
	{
		if (!json_is_number(value) && !json_is_object(value))
			continue;
		if (saved > sink->prefix_len)
			name_append(n, ".");
		if (key[0] != '\0')
			name_append(n, key);
		else
			n->too_long = true; /* an empty name: left out */
		if (json_is_number(value))
			error =
			    sink_put(sink, n, json_number_value(value), false);
		else
			error = walk_flat(sink, n, value);
		if (error < 0)
			return error;
		n->len = saved;
		n->text[saved] = '\0';
		n->too_long = saved_long;
	}
	return 0;
}

/* Nanoseconds per Google Benchmark time unit; 0 when it is unknown. */
static double gbench_ns_per_unit(json_t *row)
{
	json_t *unit = json_object_get(row, "time_unit");
	const char *u;

	if (unit == NULL)
		return 1;
	if (!json_is_string(unit))
		return 0;
	u = json_string_value(unit);
	if (strcmp(u, "ns") == 0)
		return 1;
	if (strcmp(u, "us") == 0)
		return 1e3;
	if (strcmp(u, "ms") == 0)
		return 1e6;
	if (strcmp(u, "s") == 0)
		return 1e9;
	return 0;
}

static bool gbench_bookkeeping(const char *member)
{
	static const char *const skip[] = {
	    "iterations",	"threads",	"repetitions",
	    "repetition_index", "family_index", "per_family_instance_index",
	};

	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strcmp(member, skip[i]) == 0)
			return true;
	return false;
}

static int gbench_row(struct json_sink *sink, json_t *row)
{
	json_t *name = json_object_get(row, "name"), *value;
	json_t *run_type = json_object_get(row, "run_type");
	const char *base, *member;
	double ns_per_unit = gbench_ns_per_unit(row);
	bool aggregate, percentage, average;
	struct name_buf n;
	size_t stem;
	int error;

	if (!json_is_object(row) || !json_is_string(name) ||
	    json_is_true(json_object_get(row, "error_occurred")))
		return 0;
	aggregate = json_is_string(run_type) &&
		    strcmp(json_string_value(run_type), "aggregate") == 0;
	base = json_string_value(name);
	name_start(&n, sink);
	if (aggregate) {
		json_t *run_name = json_object_get(row, "run_name");
		json_t *aggregate_name =
		    json_object_get(row, "aggregate_name");
		json_t *unit = json_object_get(row, "aggregate_unit");

		if (!json_is_string(aggregate_name) ||
		    json_string_length(aggregate_name) == 0)
			return 0;
		if (json_is_string(run_name))
			base = json_string_value(run_name);
		percentage =
		    json_is_string(unit) &&
		    strcmp(json_string_value(unit), "percentage") == 0;
		name_append(&n, base);
		name_append(&n, ".");
		name_append(&n, json_string_value(aggregate_name));
	} else {
		percentage = false;
		name_append(&n, base);
	}
	if (n.len == sink->prefix_len)
		return 0;
	name_append(&n, ".");
	stem = n.len;
	average = !aggregate;
	json_object_foreach(row, member, value)
	{
		bool is_time = strcmp(member, "real_time") == 0 ||
			       strcmp(member, "cpu_time") == 0;

		if (!json_is_number(value) || gbench_bookkeeping(member) ||
		    member[0] == '\0')
			continue;
		n.len = stem;
		n.text[stem] = '\0';
		name_append(&n, member);
		if (percentage) {
			name_append(&n, "%");
			error = sink_put(
			    sink, &n, 100 * json_number_value(value), average);
		} else if (is_time) {
			if (ns_per_unit == 0)
				continue;
			name_append(&n, "_ns");
			error = sink_put(
			    sink, &n, ns_per_unit * json_number_value(value),
			    average);
		} else {
			error = sink_put(sink, &n, json_number_value(value),
					 average);
		}
		if (error < 0)
			return error;
	}
	return 0;
}

static int walk_gbench(struct json_sink *sink, json_t *benchmarks)
{
	size_t i;
	json_t *row;
	int error;

	json_array_foreach(benchmarks, i, row)
	{
		if ((error = gbench_row(sink, row)) < 0)
			return error;
	}
	return 0;
}

/* Whether `results` looks like hyperfine's: objects with a command and
 * a mean. */
static bool is_hyperfine(json_t *results)
{
	json_t *first = json_array_get(results, 0);

	return json_is_array(results) && json_is_object(first) &&
	       json_is_string(json_object_get(first, "command")) &&
	       json_is_number(json_object_get(first, "mean"));
}

static int walk_hyperfine(struct json_sink *sink, json_t *results)
{
	static const char *const stats[] = {"mean", "stddev", "median", "min",
					    "max",  "user",   "system"};
	struct name_buf n;
	size_t i, k, stem;
	json_t *row, *command, *value;
	int error;

	json_array_foreach(results, i, row)
	{
		command = json_object_get(row, "command");
		if (!json_is_string(command) ||
		    json_string_length(command) == 0)
			continue;
		name_start(&n, sink);
		name_append(&n, json_string_value(command));
		name_append(&n, ".");
		stem = n.len;
		for (k = 0; k < sizeof(stats) / sizeof(stats[0]); k++) {
			value = json_object_get(row, stats[k]);
			if (!json_is_number(value))
				continue;
			n.len = stem;
			n.text[stem] = '\0';
			name_append(&n, stats[k]);
			name_append(&n, "_s");
			error = sink_put(sink, &n, json_number_value(value),
					 false);
			if (error < 0)
				return error;
		}
	}
	return 0;
}

static bool json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int metrics_parse_json(struct metrics **out, const char *text, size_t len,
		       const char *prefix, enum metrics_format *format)
{
	struct json_sink sink = {0};
	enum metrics_format found;
	struct name_buf n;
	json_t *root = NULL, *benchmarks, *results;
	json_error_t json_error;
	size_t start = 0, used;
	int error;

	if (out != NULL)
		*out = NULL;
	if (out == NULL || (text == NULL && len > 0))
		return -EINVAL;
	if ((error = check_prefix(prefix, &sink.prefix_len)) < 0)
		return error;
	sink.prefix = prefix != NULL ? prefix : "";
	while (start < len && json_space(text[start]))
		start++;
	if (start == len || text[start] != '{')
		return -EBADMSG;
	root = json_loadb(text + start, len - start,
			  JSON_DISABLE_EOF_CHECK | JSON_DECODE_INT_AS_REAL,
			  &json_error);
	if (root == NULL) {
		/* jansson says "out of memory" only in its message. */
		return strstr(json_error.text, "out of memory") != NULL
			   ? -ENOMEM
			   : -EBADMSG;
	}
	used = json_error.position > 0 ? (size_t)json_error.position : 0;
	if (used > len - start)
		used = len - start;

	if ((error = metrics_new(&sink.m)) < 0 ||
	    (error = index_grow(&sink.index, sink.m)) < 0)
		goto out;
	benchmarks = json_object_get(root, "benchmarks");
	results = json_object_get(root, "results");
	if (json_is_array(benchmarks)) {
		found = METRICS_FORMAT_GBENCH;
		error = walk_gbench(&sink, benchmarks);
	} else if (is_hyperfine(results)) {
		found = METRICS_FORMAT_HYPERFINE;
		error = walk_hyperfine(&sink, results);
	} else {
		found = METRICS_FORMAT_JSON;
		name_start(&n, &sink);
		error = walk_flat(&sink, &n, root);
	}
	if (error < 0)
		goto out;
	error = parse_lines(sink.m, &sink.index, prefix, sink.prefix_len,
			    text + start + used, len - start - used);
	if (error < 0)
		goto out;
	if (format != NULL)
		*format = found;
	*out = sink.m;
	sink.m = NULL;
out:
	json_decref(root);
	free(sink.index.slots);
	free(sink.averaged);
	metrics_free(sink.m);
	return error;
}

int metrics_parse_output(struct metrics **out, const char *text, size_t len,
			 const char *prefix, enum metrics_format *format)
{
	int error;

	error = metrics_parse_json(out, text, len, prefix, format);
	if (error != -EBADMSG)
		return error;
	if (format != NULL)
		*format = METRICS_FORMAT_LINES;
	return metrics_parse(out, text, len, prefix);
}

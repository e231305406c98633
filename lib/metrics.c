#include "metrics.h"

#include <errno.h>
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
	size_t name_len, *slot;
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

	slot = index_slot(index, m, name, name_len);
	if (*slot != 0) {
		m->entries[*slot - 1].value = number;
		return 0;
	}
	if ((error = entries_append(m, name, name_len, number)) < 0)
		return error;
	*slot = m->count;
	if (m->count * 2 > index->size)
		return index_grow(index, m);
	return 0;
}

int metrics_parse(struct metrics **out, const char *text, size_t len,
		  const char *prefix)
{
	struct name_index index = {NULL, 0};
	struct metrics *m = NULL;
	size_t prefix_len = 0, pos = 0, line_len;
	const char *line, *newline;
	int error;

	if (out != NULL)
		*out = NULL;
	if (out == NULL || (text == NULL && len > 0))
		return -EINVAL;
	if (prefix != NULL) {
		prefix_len = strnlen(prefix, METRICS_NAME_MAX + 1);
		if (prefix_len > METRICS_NAME_MAX ||
		    !name_chars(prefix, prefix_len))
			return -EINVAL;
	}
	pthread_once(&c_numeric_once, c_numeric_init);
	if (c_numeric == (locale_t)0)
		return -ENOMEM;

	if ((error = metrics_new(&m)) < 0 || (error = index_grow(&index, m)))
		goto out;
	while (pos < len) {
		line = text + pos;
		newline = memchr(line, '\n', len - pos);
		line_len = newline ? (size_t)(newline - line) : len - pos;
		pos += line_len + (newline ? 1 : 0);
		if (line_len > 0 && line[line_len - 1] == '\r')
			line_len--;
		error =
		    parse_line(m, &index, prefix, prefix_len, line, line_len);
		if (error < 0)
			goto out;
	}
	*out = m;
	m = NULL;

out:
	free(index.slots);
	metrics_free(m);
	return error;
}

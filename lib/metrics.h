/*
 * metrics: the `name: value` lines a run prints on its standard output
 * (or the JSON object it prints instead: see metrics_parse_json()).
 *
 * A benchmark run (and each monitor beside it) reports its results as
 * lines in the kernel test robot's format:
 *
 *	aim9.udp_test.ops_per_sec: 294621
 *	perf-stat.i.cpi: 1.58
 *	perf-profile.calltrace.cycles-pp.__errno_location@plt: 0.12
 *
 * Every other line is ignored, so a benchmark may print whatever else it
 * likes.  The testcase's KPI names one of the metrics.
 *
 * Errors are negative errno values: -EINVAL for an argument that breaks a
 * contract below, -ENOMEM when memory runs out.
 */
#ifndef STATBISECT_METRICS_H
#define STATBISECT_METRICS_H

#include <stdbool.h>
#include <stddef.h>

/* The longest metric name, prefix included, in bytes. */
#define METRICS_NAME_MAX 255

struct metrics_entry {
	char *name;   /* owned; always satisfies metrics_name_valid() */
	double value; /* always finite */
};

/*
 * A set of metrics with distinct names, in the order in which each name
 * first appeared.  Build it with metrics_new() or metrics_parse(), change
 * it with metrics_add() only, and release it with metrics_free().
 */
struct metrics {
	struct metrics_entry *entries;
	size_t count;
	size_t capacity;
};

/*
 * Whether `name` may name a metric: 1 to METRICS_NAME_MAX bytes, each a
 * printable ASCII character other than space (0x21 to 0x7e).  NULL is not
 * a valid name.
 */
bool metrics_name_valid(const char *name);

/*
 * Allocates an empty set into *out.  Returns 0, or -ENOMEM (then *out is
 * NULL).  The caller owns the set and releases it with metrics_free().
 */
int metrics_new(struct metrics **out);

/*
 * Parses `len` bytes of a run's standard output at `text` into a new set
 * stored in *out, which the caller releases with metrics_free().  `text`
 * needs no terminating NUL and may be NULL when `len` is 0.
 *
 * The text is split at '\n'; one '\r' before it (CRLF) or at the end of
 * the text is dropped.  A line is a metric when:
 *
 * - its name, everything before the first ": " (colon, space), is
 *   non-empty and made only of printable ASCII characters other than
 *   space, so an indented line or "a b: 1" is not a metric;
 * - its value, the rest of the line with spaces and tabs trimmed at both
 *   ends, is a whole decimal number: an optional sign, digits with an
 *   optional '.', an optional exponent ("-1.5e-3", "+2", ".5", "7."), whose
 *   value is finite.  "nan", "inf", hexadecimal ("0x1p3"), digit grouping
 *   ("1,5"), units or any other trailing text ("12 s"), and numbers that
 *   overflow a double ("1e999") make the line not a metric.  Numbers that
 *   underflow become 0 or a subnormal.  The decimal point is always '.',
 *   whatever locale the program set.
 *
 * Every other line is ignored without error.  When `prefix` is not NULL
 * it is put in front of each name ("vmstat." gives "vmstat.nr_free_pages");
 * it must then be empty or made of name characters (else -EINVAL), and a
 * line whose prefixed name would be longer than METRICS_NAME_MAX is
 * ignored.  When a name appears on several lines the last value wins; the
 * entry keeps the position of the first.  Runs in time linear in `len`.
 *
 * Returns 0, -EINVAL (out NULL, text NULL with len > 0, bad prefix) or
 * -ENOMEM; on error *out is NULL (when `out` is not NULL).
 */
int metrics_parse(struct metrics **out, const char *text, size_t len,
		  const char *prefix);

/*
 * Sets metric `name` of `m` to `value`: replaces the value when `m`
 * already has that name (the last value wins, as in metrics_parse()),
 * appends a new entry otherwise.  The name is copied.  Takes time linear
 * in m->count.
 *
 * Returns 0, -EINVAL (m NULL, name not metrics_name_valid(), value not
 * finite; `m` is unchanged) or -ENOMEM (`m` is unchanged).
 */
int metrics_add(struct metrics *m, const char *name, double value);

/*
 * The entry of `m` named `name`, or NULL when there is none or either
 * argument is NULL.  The entry belongs to `m` and stays valid until the
 * next metrics_add() or metrics_free() on it.  Takes time linear in
 * m->count.
 */
const struct metrics_entry *metrics_find(const struct metrics *m,
					 const char *name);

/* Releases `m` and every name in it.  metrics_free(NULL) does nothing. */
void metrics_free(struct metrics *m);

/*
 * JSON output.  Besides `name: value` lines, a run command may print one
 * JSON object on its standard output in one of three shapes, told apart by
 * their members:
 *
 * Google Benchmark (--benchmark_format=json), an object with a
 * "benchmarks" array.  Each element that is an object with a string
 * "name" and no true "error_occurred" gives, for an iteration row
 * (run_type "iteration" or none):
 *
 *	<name>.real_time_ns, <name>.cpu_time_ns   real_time and cpu_time
 *		converted from the row's time_unit (ns, us, ms, s; ns when
 *		absent; the two are left out for any other unit) to ns;
 *	<name>.<member>   every other number: items_per_second,
 *		bytes_per_second and user counters, as they are.
 *
 * The bookkeeping members iterations, threads, repetitions,
 * repetition_index, family_index and per_family_instance_index are left
 * out.  Iteration rows repeated under one name (--benchmark_repetitions)
 * give the mean of their values.  An aggregate row (run_type "aggregate")
 * is named by its run_name (its name when absent) and aggregate_name:
 * "BM_x_mean" gives <run_name>.mean.real_time_ns and so on; an aggregate
 * whose aggregate_unit is "percentage" (the coefficient of variation,
 * "cv") holds fractions: each of its numbers is given as a percent with a
 * '%' after the name, <run_name>.cv.real_time% = 100 * real_time, so the
 * report shows its change as a difference (see report.h).
 *
 * hyperfine (--export-json), an object with a "results" array whose
 * elements hold a string "command" and a number "mean".  Each such
 * element gives <command>.mean_s, .stddev_s, .median_s, .min_s, .max_s,
 * .user_s and .system_s, in seconds as hyperfine writes them (a member
 * that is null or missing is left out).
 *
 * Flat JSON, any other object: each member whose value is a number is a
 * metric of that name; a member whose value is an object adds its members
 * the same way, joined to its name with '.' ({"net": {"rps": 5}} gives
 * net.rps); strings, booleans, null and arrays are ignored.
 *
 * In every shape each byte of a name that is not printable ASCII other
 * than space (a space, a control, each byte of a non-ASCII character) is
 * replaced by '_', so a hyperfine command "./bench --quick" gives
 * "./bench_--quick.mean_s"; a member whose name is empty or, with the
 * prefix, longer than METRICS_NAME_MAX is left out.  When two members
 * give one name the last value wins, as for lines.
 */
enum metrics_format {
	METRICS_FORMAT_LINES,	  /* `name: value` lines */
	METRICS_FORMAT_JSON,	  /* flat JSON */
	METRICS_FORMAT_GBENCH,	  /* Google Benchmark JSON */
	METRICS_FORMAT_HYPERFINE, /* hyperfine JSON */
};

/* "lines", "json", "google-benchmark" or "hyperfine"; "?" otherwise. */
const char *metrics_format_name(enum metrics_format format);

/*
 * Parses `len` bytes at `text` as one JSON object (whitespace before it
 * allowed) in one of the shapes above into a new set in *out, and sets
 * *format, when `format` is not NULL, to the shape found.  Text after the
 * object is parsed as `name: value` lines (see metrics_parse()) and added
 * after the JSON metrics, so a wrapper script may append lines.  Numbers
 * are read as doubles (integers too large for an int64 included).  `prefix`
 * is as for metrics_parse().
 *
 * Returns 0, -EBADMSG when the text does not start with a valid JSON
 * object (then *out is NULL: the caller may fall back to lines), -EINVAL
 * (as for metrics_parse()) or -ENOMEM.
 */
int metrics_parse_json(struct metrics **out, const char *text, size_t len,
		       const char *prefix, enum metrics_format *format);

/*
 * A run's standard output in whichever format it is: JSON (see
 * metrics_parse_json()) when its first character other than blanks,
 * tabs, CR and LF is '{' and it parses as JSON, `name: value` lines
 * (metrics_parse()) otherwise.  Sets *format, when `format` is not NULL,
 * to the format used.  Returns 0, -EINVAL or -ENOMEM, as metrics_parse().
 */
int metrics_parse_output(struct metrics **out, const char *text, size_t len,
			 const char *prefix, enum metrics_format *format);

#endif

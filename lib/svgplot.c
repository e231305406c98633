#include "svgplot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

#define COLOR_GOOD "#1a7f37"
#define COLOR_BAD "#cf222e"
#define COLOR_UNDECIDED "#8250df"
#define COLOR_SKIPPED "#57606a"
#define COLOR_AXIS "#57606a"
#define COLOR_GRID "#eaeef2"
#define COLOR_TEXT "#24292f"

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double quantile(const double *sorted, size_t n, double p)
{
	double h = (double)(n - 1) * p;
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

int svgplot_summarize(struct svgplot_summary *out, const double *values,
		      size_t count)
{
	double *sorted;
	size_t i, n = 0;

	memset(out, 0, sizeof(*out));
	if (count == 0)
		return 0;
	sorted = malloc(count * sizeof(*sorted));
	if (sorted == NULL)
		return -1;
	for (i = 0; i < count; i++) {
		if (isfinite(values[i]))
			sorted[n++] = values[i];
	}
	if (n > 0) {
		qsort(sorted, n, sizeof(*sorted), compare_doubles);
		out->n = n;
		out->min = sorted[0];
		out->q1 = quantile(sorted, n, 0.25);
		out->median = quantile(sorted, n, 0.5);
		out->q3 = quantile(sorted, n, 0.75);
		out->max = sorted[n - 1];
	}
	free(sorted);
	return 0;
}

size_t svgplot_ticks(double *ticks, size_t max, double lo, double hi,
		     double *nice_lo, double *nice_hi, double *step)
{
	static const double multipliers[] = {1, 2, 5};
	double magnitude, s = 1, first, last, span;
	size_t i, n = 0;
	unsigned m;

	if (max > SVGPLOT_MAX_TICKS)
		max = SVGPLOT_MAX_TICKS;
	if (max < 2)
		max = 2;
	if (!isfinite(lo) || !isfinite(hi)) {
		lo = 0;
		hi = 1;
	}
	if (hi < lo) {
		double t = lo;

		lo = hi;
		hi = t;
	}
	if (!(hi > lo)) {
		span = fabs(lo) * 0.01;
		if (span == 0)
			span = 1;
		lo -= span;
		hi += span;
	}
	magnitude = pow(10, floor(log10((hi - lo) / (double)(max - 1))));
	for (m = 0;; m++) {
		s = multipliers[m % 3] * magnitude * pow(10, m / 3);
		/* The slack keeps 4.95 / 0.05 = 98.999... from adding a
		 * tick. */
		first = floor(lo / s + 1e-9);
		last = ceil(hi / s - 1e-9);
		if (last - first + 1 <= (double)max)
			break;
	}
	n = (size_t)(last - first) + 1;
	for (i = 0; i < n; i++) {
		/* Multiplying integers by the step keeps 0.1 * 3 from
		 * drifting more than printing can hide; + 0.0 turns -0 to 0.
		 */
		ticks[i] = (first + (double)i) * s + 0.0;
	}
	*nice_lo = ticks[0];
	*nice_hi = ticks[n - 1];
	*step = s;
	return n;
}

double svgplot_map_x(const struct svgplot_frame *frame, double x)
{
	return frame->left + (x - frame->x_min) /
				 (frame->x_max - frame->x_min) * frame->width;
}

double svgplot_map_y(const struct svgplot_frame *frame, double y)
{
	return frame->top + (frame->y_max - y) /
				(frame->y_max - frame->y_min) * frame->height;
}

/* Decimals that tell ticks `step` apart. */
static int tick_decimals(double step)
{
	int d = (int)-floor(log10(step) + 1e-9);

	return d < 0 ? 0 : d > 9 ? 9 : d;
}

static void init_frame(struct svgplot_frame *f)
{
	f->left = SVGPLOT_LEFT;
	f->top = SVGPLOT_TOP;
	f->width = SVGPLOT_WIDTH - SVGPLOT_LEFT - SVGPLOT_RIGHT;
	f->height = SVGPLOT_HEIGHT - SVGPLOT_TOP - SVGPLOT_BOTTOM;
}

/* The nice y interval over the finite values of `commits`. */
static void value_bounds(const struct svgplot_commit *const *commits,
			 size_t count, double ticks[], size_t *tick_count,
			 struct svgplot_frame *f, double *step)
{
	double lo = INFINITY, hi = -INFINITY;
	size_t i, k;

	for (i = 0; i < count; i++) {
		for (k = 0; k < commits[i]->count; k++) {
			double v = commits[i]->values[k];

			if (!isfinite(v))
				continue;
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	}
	if (lo > hi) {
		lo = 0;
		hi = 1;
	}
	*tick_count =
	    svgplot_ticks(ticks, 6, lo, hi, &f->y_min, &f->y_max, step);
}

void svgplot_range_frame(struct svgplot_frame *out,
			 const struct svgplot_range *plot)
{
	double last =
	    plot->candidates > 1 ? (double)(plot->candidates - 1) : 0;
	double pad = last * 0.02 > 0.5 ? last * 0.02 : 0.5;
	double ticks[SVGPLOT_MAX_TICKS], step;
	const struct svgplot_commit **list;
	size_t i, n;

	init_frame(out);
	/* Padding keeps the boxes of the end commits off the axes. */
	out->x_min = -pad;
	out->x_max = last + pad;
	list = calloc(plot->count + 1, sizeof(*list));
	if (list == NULL) {
		out->y_min = 0;
		out->y_max = 1;
		return;
	}
	for (i = 0; i < plot->count; i++)
		list[i] = &plot->commits[i];
	value_bounds(list, plot->count, ticks, &n, out, &step);
	free(list);
}

static void put_text(struct strbuf *b, const char *text)
{
	if (text != NULL)
		strbuf_html(b, text, strlen(text));
}

static const char *class_name(enum svgplot_class cls)
{
	switch (cls) {
	case SVGPLOT_GOOD:
		return "good";
	case SVGPLOT_BAD:
		return "bad";
	case SVGPLOT_SKIPPED:
		return "skipped";
	case SVGPLOT_NEITHER:
		return "neither";
	default:
		return "undecided";
	}
}

static const char *class_color(enum svgplot_class cls)
{
	switch (cls) {
	case SVGPLOT_GOOD:
		return COLOR_GOOD;
	case SVGPLOT_BAD:
		return COLOR_BAD;
	case SVGPLOT_SKIPPED:
		return COLOR_SKIPPED;
	default:
		return COLOR_UNDECIDED;
	}
}

/* One run (or its key in the legend: `css` "key"): a circle (good-like),
 * a square (bad-like) or a ring. */
static void put_mark(struct strbuf *b, const char *css, enum svgplot_class cls,
		     double x, double y)
{
	switch (cls) {
	case SVGPLOT_GOOD:
		strbuf_printf(b,
			      "<circle class=\"%s\" cx=\"%.2f\" cy=\"%.2f\""
			      " r=\"3\" fill=\"" COLOR_GOOD "\"/>",
			      css, x, y);
		break;
	case SVGPLOT_BAD:
		strbuf_printf(b,
			      "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\""
			      " width=\"6\" height=\"6\" fill=\"" COLOR_BAD
			      "\"/>",
			      css, x - 3, y - 3);
		break;
	default:
		strbuf_printf(b,
			      "<circle class=\"%s\" cx=\"%.2f\" cy=\"%.2f\""
			      " r=\"3\" fill=\"none\" stroke=\"%s\""
			      " stroke-width=\"1.5\"/>",
			      css, x, y, class_color(cls));
		break;
	}
}

static void put_open(struct strbuf *b, const char *title)
{
	strbuf_printf(
	    b,
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\""
	    " viewBox=\"0 0 %d %d\" role=\"img\""
	    " font-family=\"sans-serif\" font-size=\"11\""
	    " fill=\"" COLOR_TEXT "\"><title>",
	    SVGPLOT_WIDTH, SVGPLOT_HEIGHT);
	put_text(b, title);
	strbuf_append(b, "</title>");
}

/* Grid lines and labels of the y axis, and the axis title. */
static void put_y_axis(struct strbuf *b, const struct svgplot_frame *f,
		       const double *ticks, size_t n, double step,
		       const char *kpi)
{
	int decimals = tick_decimals(step);
	size_t i;

	strbuf_printf(b,
		      "<rect class=\"area\" x=\"%.2f\" y=\"%.2f\""
		      " width=\"%.2f\" height=\"%.2f\" fill=\"#ffffff\""
		      " stroke=\"" COLOR_AXIS "\"/>",
		      f->left, f->top, f->width, f->height);
	for (i = 0; i < n; i++) {
		double y = svgplot_map_y(f, ticks[i]);

		strbuf_printf(b,
			      "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\""
			      " x2=\"%.2f\" y2=\"%.2f\" stroke=\"" COLOR_GRID
			      "\"/><text class=\"ytick\" x=\"%.2f\""
			      " y=\"%.2f\" text-anchor=\"end\">%.*f</text>",
			      f->left, y, f->left + f->width, y, f->left - 6,
			      y + 4, decimals, ticks[i]);
	}
	strbuf_printf(b,
		      "<text class=\"ytitle\" transform=\"translate(14 %.2f)"
		      " rotate(-90)\" text-anchor=\"middle\">",
		      f->top + f->height / 2);
	put_text(b, kpi);
	strbuf_append(b, "</text>");
}

/* The mark of a commit without runs (or its key in the legend): a cross
 * centred on (x, y). */
static void put_cross(struct strbuf *b, const char *css, const char *color,
		      double x, double y)
{
	strbuf_printf(b,
		      "<path class=\"%s\" d=\"M%.2f %.2fl8 8m0 -8l-8 8\""
		      " stroke=\"%s\" stroke-width=\"2\"/>",
		      css, x - 4, y - 4, color);
}

static void put_legend(struct strbuf *b)
{
	double x = SVGPLOT_LEFT;

	strbuf_append(b, "<g class=\"legend\">");
	put_mark(b, "key", SVGPLOT_GOOD, x + 4, 12);
	strbuf_printf(b, "<text x=\"%.2f\" y=\"16\">good-like</text>", x + 12);
	x += 84;
	put_mark(b, "key", SVGPLOT_BAD, x + 4, 12);
	strbuf_printf(b, "<text x=\"%.2f\" y=\"16\">bad-like</text>", x + 12);
	x += 78;
	put_mark(b, "key", SVGPLOT_UNDECIDED, x + 4, 12);
	strbuf_printf(b, "<text x=\"%.2f\" y=\"16\">undecided</text>", x + 12);
	x += 84;
	strbuf_printf(b,
		      "<line x1=\"%.2f\" y1=\"12\" x2=\"%.2f\" y2=\"12\""
		      " stroke=\"" COLOR_TEXT "\" stroke-width=\"2\"/>"
		      "<text x=\"%.2f\" y=\"16\">median</text>",
		      x, x + 12, x + 16);
	x += 66;
	strbuf_printf(b,
		      "<rect x=\"%.2f\" y=\"7\" width=\"10\" height=\"10\""
		      " fill=\"#f6f8fa\" stroke=\"" COLOR_AXIS "\"/>"
		      "<text x=\"%.2f\" y=\"16\">quartiles, min-max</text>",
		      x, x + 14);
	x += 128;
	put_cross(b, "key", COLOR_SKIPPED, x + 4, 12);
	strbuf_printf(b, "<text x=\"%.2f\" y=\"16\">no runs (skipped)</text>",
		      x + 14);
	strbuf_append(b, "</g>");
}

/*
 * One commit's group at SVG x `cx`: spread, box, median and runs, the runs
 * spread sideways by `jitter` units so that equal values stay visible.
 */
static int put_commit(struct strbuf *b, const struct svgplot_frame *f,
		      const struct svgplot_commit *c, double cx,
		      double box_width, double jitter, const char *role)
{
	struct svgplot_summary s;
	const char *color = class_color(c->cls);
	size_t k, shown = 0;

	if (svgplot_summarize(&s, c->values, c->count) < 0)
		return -1;
	if (c->href != NULL) {
		strbuf_append(b, "<a class=\"commit-link\" href=\"");
		put_text(b, c->href);
		strbuf_append(b, "\">");
	}
	strbuf_printf(b, "<g class=\"commit %s\"", class_name(c->cls));
	if (role != NULL)
		strbuf_printf(b, " data-role=\"%s\"", role);
	strbuf_printf(b, " data-index=\"%zu\"><title>", c->index);
	if (c->label != NULL) {
		put_text(b, c->label);
		strbuf_append(b, " ");
	}
	put_text(b, c->title);
	if (s.n > 0)
		strbuf_printf(b, " (%s, %zu runs, median %.6g)",
			      class_name(c->cls), s.n, s.median);
	else
		strbuf_printf(b, " (%s, no runs)", class_name(c->cls));
	strbuf_append(b, "</title>");
	if (s.n == 0) {
		put_cross(b, "nodata", color, cx, f->top + f->height - 6);
		strbuf_append(b, c->href != NULL ? "</g></a>" : "</g>");
		return 0;
	}
	strbuf_printf(b,
		      "<line class=\"spread\" x1=\"%.2f\" y1=\"%.2f\""
		      " x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>",
		      cx, svgplot_map_y(f, s.max), cx, svgplot_map_y(f, s.min),
		      color);
	strbuf_printf(b,
		      "<rect class=\"box\" x=\"%.2f\" y=\"%.2f\""
		      " width=\"%.2f\" height=\"%.2f\" fill=\"#f6f8fa\""
		      " fill-opacity=\"0.6\" stroke=\"%s\"/>",
		      cx - box_width / 2, svgplot_map_y(f, s.q3), box_width,
		      svgplot_map_y(f, s.q1) - svgplot_map_y(f, s.q3), color);
	for (k = 0; k < c->count; k++) {
		if (!isfinite(c->values[k]))
			continue;
		put_mark(b, "run", c->cls,
			 cx + jitter * (double)((int)(shown % 5) - 2),
			 svgplot_map_y(f, c->values[k]));
		shown++;
	}
	strbuf_printf(b,
		      "<line class=\"median\" x1=\"%.2f\" y1=\"%.2f\""
		      " x2=\"%.2f\" y2=\"%.2f\" stroke=\"" COLOR_TEXT
		      "\" stroke-width=\"2\"/></g>",
		      cx - box_width / 2 - 2, svgplot_map_y(f, s.median),
		      cx + box_width / 2 + 2, svgplot_map_y(f, s.median));
	if (c->href != NULL)
		strbuf_append(b, "</a>");
	return 0;
}

static int finish(char **out, struct strbuf *b)
{
	strbuf_append(b, "</svg>");
	return strbuf_finish(out, NULL, b);
}

static void put_x_axis(struct strbuf *b, const struct svgplot_frame *f,
		       size_t candidates)
{
	double ticks[SVGPLOT_MAX_TICKS], lo, hi, step;
	size_t n, i, last = candidates > 0 ? candidates - 1 : 0;
	double y = f->top + f->height;

	if (last <= 10) {
		for (i = 0; i <= last; i++)
			ticks[i] = (double)i;
		n = last + 1;
	} else {
		n = svgplot_ticks(ticks, 10, 0, (double)last, &lo, &hi, &step);
	}
	for (i = 0; i < n; i++) {
		double x;

		if (ticks[i] < 0 || ticks[i] > (double)last)
			continue;
		x = svgplot_map_x(f, ticks[i]);
		strbuf_printf(b,
			      "<line class=\"xtick\" x1=\"%.2f\" y1=\"%.2f\""
			      " x2=\"%.2f\" y2=\"%.2f\" stroke=\"" COLOR_AXIS
			      "\"/><text x=\"%.2f\" y=\"%.2f\""
			      " text-anchor=\"middle\">%.0f</text>",
			      x, y, x, y + 5, x, y + 18, ticks[i]);
	}
	strbuf_printf(b,
		      "<text class=\"xtitle\" x=\"%.2f\" y=\"%.2f\""
		      " text-anchor=\"middle\">commit in the range"
		      " (0 = good, %zu = bad)</text>",
		      f->left + f->width / 2, y + 40, last);
}

int svgplot_render_range(char **out, const struct svgplot_range *plot)
{
	struct strbuf b = STRBUF_INIT;
	struct svgplot_frame f;
	double ticks[SVGPLOT_MAX_TICKS], step, spacing, box_width;
	double lo, hi;
	size_t i, n;

	*out = NULL;
	if (plot->candidates < 1)
		return -1;
	for (i = 0; i < plot->count; i++) {
		if (plot->commits[i].index >= plot->candidates)
			return -1;
	}
	svgplot_range_frame(&f, plot);
	n = svgplot_ticks(ticks, 6, f.y_min, f.y_max, &lo, &hi, &step);
	spacing = f.width / (f.x_max - f.x_min);
	box_width = spacing * 0.6 < 3	 ? 3
		    : spacing * 0.6 > 14 ? 14
					 : spacing * 0.6;
	put_open(&b, plot->title);
	put_legend(&b);
	put_y_axis(&b, &f, ticks, n, step, plot->kpi);
	if (plot->range_lo >= 0 && plot->range_hi > plot->range_lo &&
	    (size_t)plot->range_hi < plot->candidates) {
		double x1 = svgplot_map_x(&f, (double)plot->range_lo);
		double x2 = svgplot_map_x(&f, (double)plot->range_hi);

		strbuf_printf(&b,
			      "<rect class=\"open-range\" x=\"%.2f\""
			      " y=\"%.2f\" width=\"%.2f\" height=\"%.2f\""
			      " fill=\"#fff8c5\"><title>the first bad commit"
			      " is in (%ld, %ld]</title></rect>",
			      x1, f.top, x2 - x1, f.height, plot->range_lo,
			      plot->range_hi);
	}
	put_x_axis(&b, &f, plot->candidates);
	if (plot->culprit >= 0 && (size_t)plot->culprit < plot->candidates) {
		double x = svgplot_map_x(&f, (double)plot->culprit);

		strbuf_printf(&b,
			      "<line class=\"culprit\" x1=\"%.2f\" y1=\"%.2f\""
			      " x2=\"%.2f\" y2=\"%.2f\" stroke=\"" COLOR_BAD
			      "\" stroke-dasharray=\"4 3\"/>"
			      "<text x=\"%.2f\" y=\"%.2f\" fill=\"" COLOR_BAD
			      "\">culprit</text>",
			      x, f.top, x, f.top + f.height, x + 3,
			      f.top + 12);
	}
	for (i = 0; i < plot->count; i++) {
		const struct svgplot_commit *c = &plot->commits[i];

		if (put_commit(&b, &f, c, svgplot_map_x(&f, (double)c->index),
			       box_width,
			       spacing * 0.15 < 2 ? spacing * 0.15 : 2,
			       NULL) < 0) {
			strbuf_clear(&b);
			return -1;
		}
	}
	return finish(out, &b);
}

int svgplot_render_pair(char **out, const struct svgplot_pair *plot)
{
	const struct svgplot_commit *both[2] = {plot->parent, plot->culprit};
	static const char *const roles[2] = {"parent", "culprit"};
	struct strbuf b = STRBUF_INIT;
	struct svgplot_frame f;
	double ticks[SVGPLOT_MAX_TICKS], step;
	size_t n, i;

	*out = NULL;
	if (plot->parent == NULL || plot->culprit == NULL)
		return -1;
	init_frame(&f);
	f.x_min = -0.5;
	f.x_max = 1.5;
	value_bounds(both, 2, ticks, &n, &f, &step);
	put_open(&b, plot->title);
	put_legend(&b);
	put_y_axis(&b, &f, ticks, n, step, plot->kpi);
	for (i = 0; i < 2; i++) {
		double x = svgplot_map_x(&f, (double)i);

		if (put_commit(&b, &f, both[i], x, 60, 8, roles[i]) < 0) {
			strbuf_clear(&b);
			return -1;
		}
		strbuf_printf(&b,
			      "<text class=\"xlabel\" x=\"%.2f\" y=\"%.2f\""
			      " text-anchor=\"middle\">%s ",
			      x, f.top + f.height + 18, roles[i]);
		put_text(&b, both[i]->label);
		strbuf_append(&b, "</text>");
	}
	return finish(out, &b);
}

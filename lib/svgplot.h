/*
 * Plots of benchmark runs drawn as SVG text on the server, for the job page:
 * the runs of every tested commit along a bisection range, and the runs of
 * the parent beside those of the culprit.  Pure: numbers in, text out.
 *
 * Every text taken from the caller (labels, titles, the KPI name) is
 * HTML-escaped, so the SVG can be put inline into an HTML page.  Colours
 * are presentation attributes, not style attributes, so a Content Security
 * Policy without 'unsafe-inline' styles still shows them; good-like runs
 * are green circles and bad-like runs red squares, so shape tells them
 * apart without colour.
 */
#ifndef STATBISECT_SVGPLOT_H
#define STATBISECT_SVGPLOT_H

#include <stdbool.h>
#include <stddef.h>

/* The drawing area of both plots, in SVG user units (the viewBox). */
#define SVGPLOT_WIDTH 720
#define SVGPLOT_HEIGHT 320
#define SVGPLOT_LEFT 72 /* room for the y tick labels */
#define SVGPLOT_RIGHT 16
#define SVGPLOT_TOP 28	  /* room for the legend */
#define SVGPLOT_BOTTOM 52 /* room for the x tick labels and axis title */
#define SVGPLOT_MAX_TICKS 12

enum svgplot_class {
	SVGPLOT_UNDECIDED = 0,
	SVGPLOT_GOOD,
	SVGPLOT_BAD,
	SVGPLOT_SKIPPED,
	SVGPLOT_NEITHER, /* at neither level: drawn as undecided, named so
			    in its class, as the API names it */
};

/* The runs of one commit. */
struct svgplot_commit {
	size_t index;	      /* its position in the range: 0 is `good` */
	const char *label;    /* short SHA, or NULL */
	const char *title;    /* commit subject for the tooltip, or NULL */
	const double *values; /* the KPI of each run; NaN and inf skipped */
	size_t count;
	enum svgplot_class cls;
	const char *href; /* where its marks link to (its commit), or NULL */
};

/* What a sample looks like: finite values only; all 0 when n is 0. */
struct svgplot_summary {
	size_t n;
	double min, q1, median, q3, max;
};

/* A linear map from data to SVG coordinates (y grows downwards). */
struct svgplot_frame {
	double left, top, width, height;
	double x_min, x_max, y_min, y_max;
};

struct svgplot_range {
	size_t
	    candidates; /* commits in the range, `good` and `bad` included */
	const struct svgplot_commit *commits;
	size_t count;
	long culprit;		 /* the culprit's index, or -1 */
	long range_lo, range_hi; /* the first bad commit lies in (lo, hi];
				    both -1 to shade nothing */
	const char *kpi;	 /* the y axis title */
	const char *title;	 /* the accessible name of the plot */
};

struct svgplot_pair {
	const struct svgplot_commit *parent;
	const struct svgplot_commit *culprit;
	const char *kpi;
	const char *title;
};

/*
 * Summarises values[0, count): the finite ones sorted, quartiles by linear
 * interpolation between order statistics (type 7, as numpy's default).
 * Returns 0, or -1 when out of memory (*out is then all 0).
 */
int svgplot_summarize(struct svgplot_summary *out, const double *values,
		      size_t count);

/*
 * Round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of
 * ten, at most `max` (<= SVGPLOT_MAX_TICKS, >= 2) of them.  Writes the
 * ticks to ticks[] in ascending order, the covered interval (first and last
 * tick) to *nice_lo and *nice_hi, the step to *step, and returns how many.
 * When lo == hi the interval is widened around it first.
 */
size_t svgplot_ticks(double *ticks, size_t max, double lo, double hi,
		     double *nice_lo, double *nice_hi, double *step);

/* Data to SVG coordinates through `frame`. */
double svgplot_map_x(const struct svgplot_frame *frame, double x);
double svgplot_map_y(const struct svgplot_frame *frame, double y);

/*
 * The frame the range plot uses for `plot`: x from 0 to candidates - 1,
 * padded on both sides by 2% of that width but at least 0.5, so that the
 * end commits' boxes stay inside; y over the nice ticks of every finite
 * value (0 to 1 when there is none).
 */
void svgplot_range_frame(struct svgplot_frame *out,
			 const struct svgplot_range *plot);

/*
 * Draws `plot` as an <svg> element: per tested commit a group
 * <g class="commit good|bad|undecided|skipped" data-index="I"> with a
 * <title>, a spread line from min to max, a box from q1 to q3, a median
 * line and one mark per run; the culprit as a dashed vertical line; the
 * open range shaded.  Returns 0 with the malloc'd text in *out, or -1 when
 * out of memory or `plot` is invalid (fewer than 1 candidate, an index out
 * of range).
 */
int svgplot_render_range(char **out, const struct svgplot_range *plot);

/*
 * Draws the runs of the parent and of the culprit side by side (box, median
 * and every run), in groups <g class="commit ..." data-role="parent"> and
 * data-role="culprit".  Returns 0 with *out malloc'd, or -1.
 */
int svgplot_render_pair(char **out, const struct svgplot_pair *plot);

#endif

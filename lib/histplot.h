/*
 * The plot of a watched branch's history (issue 12): one point per
 * measured head along the branch, its median KPI with the spread of its
 * runs (a line from min to max, a box from q1 to q3), each point a link
 * to the head's job and each x label a link to the head's commit; heads
 * where a bisection found a culprit are marked.  Drawn as SVG text with
 * lib/svgplot.h's axes; pure: numbers in, text out.  Every text from the
 * caller is HTML-escaped.
 */
#ifndef STATBISECT_HISTPLOT_H
#define STATBISECT_HISTPLOT_H

#include <stdbool.h>
#include <stddef.h>

/* One measured head. */
struct histplot_point {
	const char *label;	/* short SHA under the axis */
	const char *title;	/* tooltip (subject, runs, outcome), or NULL */
	const char *job_url;	/* the point's link, or NULL */
	const char *commit_url; /* the label's link, or NULL */
	double median, q1, q3, min, max; /* NaN: no runs (not drawn) */
	const char *culprit; /* a culprit found up to this head (its
				label), or NULL */
	bool regression;     /* the culprit's direction */
};

struct histplot {
	const struct histplot_point *points; /* oldest first */
	size_t count;
	const char *kpi;   /* the y axis title */
	const char *title; /* the accessible name of the plot */
};

/*
 * Draws `plot` as an <svg> element: per point a group <g class="head"
 * data-index="I"> (class "head culprit regression|improvement" when a
 * culprit is marked) with a <title>, wrapped in <a href> when a job URL is
 * given; culprit marks as a dashed vertical line with the culprit's label.
 * Returns 0 with *out malloc'd, or -1 when out of memory.
 */
int histplot_render(char **out, const struct histplot *plot);

#endif

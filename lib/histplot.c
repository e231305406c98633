#include "histplot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "strbuf.h"
#include "svgplot.h"

#define COLOR_POINT "#0b6e4f"
#define COLOR_REGRESSION "#b42318"
#define COLOR_IMPROVEMENT "#1d4ed8"
#define COLOR_AXIS "#555555"
/* Room below svgplot's frame for the slanted SHA labels. */
#define HISTPLOT_LABEL_ROOM 36

static void put_escaped(struct strbuf *b, const char *s)
{
	strbuf_html(b, s, strlen(s));
}

/* The frame: x over the points (padded by half a step), y over the nice
 * ticks of every drawn value. */
static void history_frame(struct svgplot_frame *f, const struct histplot *p)
{
	double lo = INFINITY, hi = -INFINITY;
	size_t i;

	for (i = 0; i < p->count; i++) {
		const struct histplot_point *q = &p->points[i];
		double v[3] = {q->min, q->median, q->max};

		for (size_t k = 0; k < 3; k++) {
			if (isfinite(v[k]) && v[k] < lo)
				lo = v[k];
			if (isfinite(v[k]) && v[k] > hi)
				hi = v[k];
		}
	}
	if (!isfinite(lo)) {
		lo = 0;
		hi = 1;
	}
	f->left = SVGPLOT_LEFT;
	f->top = SVGPLOT_TOP;
	f->width = SVGPLOT_WIDTH - SVGPLOT_LEFT - SVGPLOT_RIGHT;
	f->height = SVGPLOT_HEIGHT - SVGPLOT_TOP - SVGPLOT_BOTTOM;
	f->x_min = -0.5;
	f->x_max = p->count > 0 ? (double)p->count - 0.5 : 0.5;
	{
		double ticks[SVGPLOT_MAX_TICKS], step;

		svgplot_ticks(ticks, 6, lo, hi, &f->y_min, &f->y_max, &step);
	}
}

static void put_axes(struct strbuf *b, const struct svgplot_frame *f,
		     const struct histplot *p)
{
	double ticks[SVGPLOT_MAX_TICKS], lo, hi, step;
	size_t n =
	    svgplot_ticks(ticks, 6, f->y_min, f->y_max, &lo, &hi, &step);
	size_t i;

	strbuf_printf(b,
		      "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\""
		      " stroke=\"" COLOR_AXIS "\"/>",
		      f->left, f->top, f->left, f->top + f->height);
	for (i = 0; i < n; i++) {
		double y = svgplot_map_y(f, ticks[i]);

		strbuf_printf(b,
			      "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\""
			      " text-anchor=\"end\" font-size=\"11\">%g</text>"
			      "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\""
			      " y2=\"%.2f\" stroke=\"#e5e5e5\"/>",
			      f->left - 6, y + 4, ticks[i], f->left, y,
			      f->left + f->width, y);
	}
	strbuf_printf(b,
		      "<text x=\"14\" y=\"%.2f\" font-size=\"12\""
		      " transform=\"rotate(-90 14 %.2f)\""
		      " text-anchor=\"middle\">",
		      f->top + f->height / 2, f->top + f->height / 2);
	put_escaped(b, p->kpi != NULL ? p->kpi : "KPI");
	strbuf_append(b, "</text>");
}

static void put_label(struct strbuf *b, const struct svgplot_frame *f,
		      const struct histplot_point *q, double x)
{
	if (q->label == NULL)
		return;
	if (q->commit_url != NULL) {
		strbuf_append(b, "<a class=\"commit-link\" href=\"");
		put_escaped(b, q->commit_url);
		strbuf_append(b, "\">");
	}
	strbuf_printf(b,
		      "<text class=\"sha\" x=\"%.2f\" y=\"%.2f\""
		      " font-size=\"10\" text-anchor=\"end\""
		      " transform=\"rotate(-40 %.2f %.2f)\">",
		      x, f->top + f->height + 14, x, f->top + f->height + 14);
	put_escaped(b, q->label);
	strbuf_append(b, "</text>");
	if (q->commit_url != NULL)
		strbuf_append(b, "</a>");
}

static void put_culprit(struct strbuf *b, const struct svgplot_frame *f,
			const struct histplot_point *q, double x)
{
	const char *color =
	    q->regression ? COLOR_REGRESSION : COLOR_IMPROVEMENT;

	strbuf_printf(b,
		      "<line class=\"culprit-mark\" x1=\"%.2f\" y1=\"%.2f\""
		      " x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\""
		      " stroke-dasharray=\"4 3\"/>"
		      "<text class=\"culprit-label\" x=\"%.2f\" y=\"%.2f\""
		      " font-size=\"10\" fill=\"%s\">",
		      x, f->top, x, f->top + f->height, color, x + 3,
		      f->top + 10, color);
	put_escaped(b, q->culprit);
	strbuf_append(b, "</text>");
}

static void put_point(struct strbuf *b, const struct svgplot_frame *f,
		      const struct histplot_point *q, size_t index, double x)
{
	const char *color = q->culprit == NULL ? COLOR_POINT
			    : q->regression    ? COLOR_REGRESSION
					       : COLOR_IMPROVEMENT;

	if (q->job_url != NULL) {
		strbuf_append(b, "<a class=\"job-link\" href=\"");
		put_escaped(b, q->job_url);
		strbuf_append(b, "\">");
	}
	strbuf_printf(b, "<g class=\"head%s\" data-index=\"%zu\">",
		      q->culprit == NULL ? ""
		      : q->regression	 ? " culprit regression"
					 : " culprit improvement",
		      index);
	strbuf_append(b, "<title>");
	put_escaped(b, q->title != NULL	  ? q->title
		       : q->label != NULL ? q->label
					  : "");
	strbuf_append(b, "</title>");
	if (isfinite(q->median)) {
		strbuf_printf(b,
			      "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\""
			      " y2=\"%.2f\" stroke=\"%s\"/>",
			      x, svgplot_map_y(f, q->min), x,
			      svgplot_map_y(f, q->max), color);
		strbuf_printf(
		    b,
		    "<rect x=\"%.2f\" y=\"%.2f\" width=\"8\""
		    " height=\"%.2f\" fill=\"none\" stroke=\"%s\"/>",
		    x - 4, svgplot_map_y(f, q->q3),
		    svgplot_map_y(f, q->q1) - svgplot_map_y(f, q->q3), color);
		strbuf_printf(b,
			      "<circle class=\"median\" cx=\"%.2f\""
			      " cy=\"%.2f\" r=\"3.5\" fill=\"%s\"/>",
			      x, svgplot_map_y(f, q->median), color);
	}
	strbuf_append(b, "</g>");
	if (q->job_url != NULL)
		strbuf_append(b, "</a>");
}

int histplot_render(char **out, const struct histplot *plot)
{
	struct strbuf b = STRBUF_INIT;
	struct svgplot_frame f;
	size_t i, len;

	*out = NULL;
	history_frame(&f, plot);
	strbuf_printf(&b,
		      "<svg class=\"plot history\" xmlns="
		      "\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\""
		      " role=\"img\" aria-label=\"",
		      SVGPLOT_WIDTH, SVGPLOT_HEIGHT + HISTPLOT_LABEL_ROOM);
	put_escaped(&b, plot->title != NULL ? plot->title : "history");
	strbuf_append(&b, "\">");
	put_axes(&b, &f, plot);
	for (i = 0; i < plot->count; i++) {
		const struct histplot_point *q = &plot->points[i];
		double x = svgplot_map_x(&f, (double)i);

		put_label(&b, &f, q, x);
		if (q->culprit != NULL)
			put_culprit(&b, &f, q, x);
		put_point(&b, &f, q, i, x);
	}
	strbuf_append(&b, "</svg>");
	return strbuf_finish(out, &len, &b);
}

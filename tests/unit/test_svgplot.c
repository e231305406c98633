#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svgplot.h"

static void assert_contains(const char *text, const char *want)
{
	if (strstr(text, want) == NULL)
		fail_msg("'%s' not in the SVG:\n%s", want, text);
}

static size_t count_of(const char *text, const char *what)
{
	size_t n = 0;

	while ((text = strstr(text, what)) != NULL) {
		n++;
		text += strlen(what);
	}
	return n;
}

static void assert_near(double got, double want)
{
	if (fabs(got - want) > 1e-9)
		fail_msg("got %.17g, want %.17g", got, want);
}

static void test_svgplot__summary_quartiles_skip_non_finite(void **state)
{
	const double values[] = {4, NAN, 1, INFINITY, 3, 2, -INFINITY};
	struct svgplot_summary s;

	(void)state;
	assert_int_equal(svgplot_summarize(&s, values, 7), 0);
	assert_int_equal(s.n, 4);
	assert_near(s.min, 1);
	assert_near(s.q1, 1.75);
	assert_near(s.median, 2.5);
	assert_near(s.q3, 3.25);
	assert_near(s.max, 4);
	assert_int_equal(svgplot_summarize(&s, values, 0), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(svgplot_summarize(&s, values + 1, 1), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(svgplot_summarize(&s, values + 4, 1), 0);
	assert_int_equal(s.n, 1);
	assert_near(s.median, 3);
	assert_near(s.q1, 3);
}

static void assert_ticks(double lo, double hi, size_t max, size_t want_n,
			 double first, double step_want)
{
	double ticks[SVGPLOT_MAX_TICKS], nice_lo, nice_hi, step;
	size_t n =
	    svgplot_ticks(ticks, max, lo, hi, &nice_lo, &nice_hi, &step);
	size_t i;

	assert_int_equal(n, want_n);
	assert_near(step, step_want);
	for (i = 0; i < n; i++)
		assert_near(ticks[i], first + (double)i * step_want);
	assert_near(nice_lo, ticks[0]);
	assert_near(nice_hi, ticks[n - 1]);
	if (isfinite(lo) && isfinite(hi))
		assert_true(nice_lo <= fmin(lo, hi) &&
			    nice_hi >= fmax(lo, hi));
}

static void test_svgplot__ticks_are_round_and_cover(void **state)
{
	(void)state;
	assert_ticks(0.93, 1.07, 6, 5, 0.90, 0.05);
	assert_ticks(90, 100, 6, 6, 90, 2);
	assert_ticks(0, 12, 10, 7, 0, 2);
	assert_ticks(-3, 7, 6, 4, -5, 5);
	assert_ticks(940, 1019.5, 6, 5, 940, 20);
	/* A single value is widened by 1% (by 1 around zero). */
	assert_ticks(5, 5, 6, 3, 4.95, 0.05);
	assert_ticks(0, 0, 6, 5, -1, 0.5);
	/* Reversed bounds are swapped; non-finite ones become [0, 1]. */
	assert_ticks(100, 90, 6, 6, 90, 2);
	assert_ticks(NAN, 1, 6, 6, 0, 0.2);
}

static void test_svgplot__maps_data_to_the_frame(void **state)
{
	struct svgplot_frame f = {10, 20, 200, 100, 0, 4, 50, 150};

	(void)state;
	assert_near(svgplot_map_x(&f, 0), 10);
	assert_near(svgplot_map_x(&f, 4), 210);
	assert_near(svgplot_map_x(&f, 1), 60);
	assert_near(svgplot_map_y(&f, 150), 20);
	assert_near(svgplot_map_y(&f, 50), 120);
	assert_near(svgplot_map_y(&f, 75), 95);
}

static const double good_runs[] = {100, 100, 100, 100};
static const double bad_runs[] = {90, 90, 90, 90};

static void test_svgplot__range_frame_pads_the_ends(void **state)
{
	struct svgplot_commit commits[] = {
	    {0, "aaa", NULL, good_runs, 4, SVGPLOT_GOOD, NULL},
	    {2, "ccc", NULL, bad_runs, 4, SVGPLOT_BAD, NULL},
	};
	struct svgplot_range plot = {3, commits, 2, -1, -1, -1, "k", "t"};
	struct svgplot_frame f;

	(void)state;
	svgplot_range_frame(&f, &plot);
	assert_near(f.left, 72);
	assert_near(f.top, 28);
	assert_near(f.width, 632);
	assert_near(f.height, 240);
	assert_near(f.x_min, -0.5);
	assert_near(f.x_max, 2.5);
	assert_near(f.y_min, 90);
	assert_near(f.y_max, 100);
	plot.candidates = 201; /* pad 2% of 200 */
	svgplot_range_frame(&f, &plot);
	assert_near(f.x_min, -4);
	assert_near(f.x_max, 204);
	plot.count = 0; /* no runs: y over [0, 1] */
	svgplot_range_frame(&f, &plot);
	assert_near(f.y_min, 0);
	assert_near(f.y_max, 1);
}

static void test_svgplot__range_plot_geometry(void **state)
{
	const double nan_runs[] = {NAN, 95};
	struct svgplot_commit commits[] = {
	    {0, "aaa", "first", good_runs, 4, SVGPLOT_GOOD, NULL},
	    {2, "ccc", "third", bad_runs, 4, SVGPLOT_BAD, NULL},
	};
	struct svgplot_range plot = {3, commits,       2,     2, 0,
				     2, "bench.score", "Runs"};
	char *svg = NULL;

	(void)state;
	assert_int_equal(svgplot_render_range(&svg, &plot), 0);
	assert_true(strncmp(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"",
			    39) == 0);
	assert_contains(svg, "viewBox=\"0 0 720 320\"");
	assert_true(strcmp(svg + strlen(svg) - 6, "</svg>") == 0);
	/* x: index 0 at 72 + 0.5 / 3 * 632, index 2 at 72 + 2.5 / 3 * 632;
	 * y: 100 at the top (28), 90 at the bottom (268). */
	assert_contains(svg, "<g class=\"commit good\" data-index=\"0\">"
			     "<title>aaa first (good, 4 runs, median 100)"
			     "</title>");
	assert_contains(svg,
			"<line class=\"median\" x1=\"168.33\" y1=\"28.00\""
			" x2=\"186.33\" y2=\"28.00\"");
	assert_contains(svg, "<line class=\"median\" x1=\"589.67\""
			     " y1=\"268.00\" x2=\"607.67\" y2=\"268.00\"");
	/* Runs spread sideways by 2 units: -4, -2, 0, 2. */
	assert_contains(svg, "<circle class=\"run\" cx=\"173.33\" cy=\"28.00\""
			     " r=\"3\" fill=\"#1a7f37\"/>");
	assert_contains(svg,
			"<circle class=\"run\" cx=\"179.33\" cy=\"28.00\"");
	assert_contains(svg, "<rect class=\"run\" x=\"591.67\" y=\"265.00\""
			     " width=\"6\" height=\"6\" fill=\"#cf222e\"/>");
	assert_contains(svg,
			"<line class=\"culprit\" x1=\"598.67\" y1=\"28.00\""
			" x2=\"598.67\" y2=\"268.00\"");
	assert_contains(svg,
			"<rect class=\"open-range\" x=\"177.33\""
			" y=\"28.00\" width=\"421.33\" height=\"240.00\"");
	assert_contains(svg,
			">commit in the range (0 = good, 2 = bad)</text>");
	assert_contains(svg, "text-anchor=\"end\">100</text>");
	assert_contains(svg, "text-anchor=\"end\">90</text>");
	assert_int_equal(count_of(svg, "<g class=\"commit "), 2);
	assert_int_equal(count_of(svg, "class=\"run\""), 8);
	assert_int_equal(count_of(svg, "class=\"ytick\""), 6);
	free(svg);

	/* NaN runs are not drawn; a commit without runs gets a cross. */
	commits[0].values = nan_runs;
	commits[0].count = 2;
	commits[1].values = NULL;
	commits[1].count = 0;
	commits[1].cls = SVGPLOT_SKIPPED;
	plot.culprit = -1;
	assert_int_equal(svgplot_render_range(&svg, &plot), 0);
	assert_int_equal(count_of(svg, "class=\"run\""), 1);
	assert_int_equal(count_of(svg, "class=\"nodata\""), 1);
	assert_contains(svg, "<g class=\"commit skipped\" data-index=\"2\">"
			     "<title>ccc third (skipped, no runs)</title>");
	assert_int_equal(count_of(svg, "class=\"culprit\""), 0);
	/* The legend explains the cross too (issue 15). */
	assert_int_equal(count_of(svg, "class=\"key\""), 4);
	assert_contains(svg, ">no runs (skipped)</text>");
	free(svg);

	/* A commit with a link: its group is the link, escaped. */
	commits[0].href = "/jobs/3/commits/aaa/log?key=1&x=\"2\"";
	assert_int_equal(svgplot_render_range(&svg, &plot), 0);
	assert_contains(svg, "<a class=\"commit-link\" href=\"/jobs/3/commits/"
			     "aaa/log?key=1&amp;x=&quot;2&quot;\"><g class="
			     "\"commit good\" data-index=\"0\">");
	assert_int_equal(count_of(svg, "<a "), 1);
	assert_int_equal(count_of(svg, "</a>"), 1);
	commits[1].href = "/c/ccc";
	free(svg);
	assert_int_equal(svgplot_render_range(&svg, &plot), 0);
	assert_contains(svg, "<a class=\"commit-link\" href=\"/c/ccc\"><g "
			     "class=\"commit skipped\"");
	assert_int_equal(count_of(svg, "</a>"), 2);
	commits[0].href = commits[1].href = NULL;
	free(svg);

	/* A commit at neither level keeps the engine's name for it, as the
	 * API shows it, and is drawn as an undecided one. */
	commits[1].cls = SVGPLOT_NEITHER;
	assert_int_equal(svgplot_render_range(&svg, &plot), 0);
	assert_contains(svg, "<g class=\"commit neither\" data-index=\"2\">");
	free(svg);
}

static void test_svgplot__escapes_every_caller_text(void **state)
{
	const char *hostile = "<script>alert('x')</script>&\"";
	const char *escaped =
	    "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;";
	struct svgplot_commit commits[] = {
	    {0, hostile, hostile, good_runs, 4, SVGPLOT_GOOD, NULL},
	    {1, hostile, hostile, bad_runs, 4, SVGPLOT_BAD, NULL},
	};
	struct svgplot_range plot = {2,	 commits, 2,	   1,
				     -1, -1,	  hostile, hostile};
	struct svgplot_pair pair = {&commits[0], &commits[1], hostile,
				    hostile};
	char *svg = NULL;

	(void)state;
	assert_int_equal(svgplot_render_range(&svg, &plot), 0);
	assert_null(strstr(svg, "<script"));
	assert_null(strstr(svg, "'x'"));
	/* The plot title, the y axis title and two commit titles twice. */
	assert_int_equal(count_of(svg, escaped), 6);
	free(svg);
	assert_int_equal(svgplot_render_pair(&svg, &pair), 0);
	assert_null(strstr(svg, "<script"));
	assert_contains(svg, "<text class=\"xlabel\" x=\"230.00\" y=\"286.00\""
			     " text-anchor=\"middle\">parent &lt;script&gt;");
	assert_contains(svg, "<text class=\"xlabel\" x=\"546.00\"");
	assert_int_equal(count_of(svg, escaped), 8);
	free(svg);
}

static void test_svgplot__pair_plot_geometry(void **state)
{
	struct svgplot_commit parent = {6, "p",		 "parent", good_runs,
					4, SVGPLOT_GOOD, NULL};
	struct svgplot_commit culprit = {7, "c",	 "culprit", bad_runs,
					 4, SVGPLOT_BAD, NULL};
	struct svgplot_pair pair = {&parent, &culprit, "k", "t"};
	char *svg = NULL;

	(void)state;
	assert_int_equal(svgplot_render_pair(&svg, &pair), 0);
	/* x: the parent at 72 + 0.5 / 2 * 632, the culprit at 72 + 1.5 / 2
	 * * 632; boxes 60 wide, median lines 2 longer each side. */
	assert_contains(svg, "<g class=\"commit good\" data-role=\"parent\""
			     " data-index=\"6\">");
	assert_contains(svg, "<g class=\"commit bad\" data-role=\"culprit\""
			     " data-index=\"7\">");
	assert_contains(svg,
			"<line class=\"median\" x1=\"198.00\" y1=\"28.00\""
			" x2=\"262.00\" y2=\"28.00\"");
	assert_contains(svg, "<line class=\"median\" x1=\"514.00\""
			     " y1=\"268.00\" x2=\"578.00\" y2=\"268.00\"");
	assert_contains(svg, "<rect class=\"box\" x=\"200.00\" y=\"28.00\""
			     " width=\"60.00\" height=\"0.00\"");
	assert_int_equal(count_of(svg, "class=\"run\""), 8);
	free(svg);
}

static void test_svgplot__refuses_invalid_plots(void **state)
{
	struct svgplot_commit commits[] = {
	    {5, "x", NULL, good_runs, 4, SVGPLOT_GOOD, NULL},
	};
	struct svgplot_range plot = {5, commits, 1, -1, -1, -1, "k", "t"};
	struct svgplot_pair pair = {NULL, &commits[0], "k", "t"};
	char *svg = (char *)"unchanged";

	(void)state;
	assert_int_equal(svgplot_render_range(&svg, &plot), -1);
	assert_null(svg);
	plot.candidates = 0;
	plot.count = 0;
	assert_int_equal(svgplot_render_range(&svg, &plot), -1);
	assert_int_equal(svgplot_render_pair(&svg, &pair), -1);
	assert_null(svg);
	/* One candidate and no runs still draws an empty frame. */
	plot.candidates = 1;
	assert_int_equal(svgplot_render_range(&svg, &plot), 0);
	assert_int_equal(count_of(svg, "<g class=\"commit "), 0);
	free(svg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_svgplot__summary_quartiles_skip_non_finite),
	    cmocka_unit_test(test_svgplot__ticks_are_round_and_cover),
	    cmocka_unit_test(test_svgplot__maps_data_to_the_frame),
	    cmocka_unit_test(test_svgplot__range_frame_pads_the_ends),
	    cmocka_unit_test(test_svgplot__range_plot_geometry),
	    cmocka_unit_test(test_svgplot__escapes_every_caller_text),
	    cmocka_unit_test(test_svgplot__pair_plot_geometry),
	    cmocka_unit_test(test_svgplot__refuses_invalid_plots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Unit tests of lib/stats.c against SciPy.
 *
 * The group setup draws every sample (fixed ones and seeded random ones),
 * writes them to a temporary file and runs /usr/bin/python3 once; SciPy
 * and numpy compute the reference values in that same run and the tests
 * compare against them.  Nothing is copied from an earlier run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "stats.h"

#define REFERENCE_PYTHON "/usr/bin/python3"
#define RTOL_CLOSED 1e-9 /* closed forms: means, t, U, D */
#define RTOL_P 1e-6	 /* p-values */
#define ATOL_P 1e-290	 /* a p-value SciPy underflows to 0 */
#define SEED_SAMPLES 20240607UL

enum ref_kind {
	REF_DESC,
	REF_WELCH,
	REF_WELCH1,
	REF_TSD,
	REF_MWU,
	REF_KS,
	REF_TOST,
	REF_BH,
	REF_BOOT,
	REF_WSR,
};

static const char *const ref_kind_names[] = {
    "desc", "welch", "welch1", "tsd", "mwu", "ks", "tost", "bh", "boot", "wsr",
};

struct ref_case {
	enum ref_kind kind;
	const char *group; /* which test looks at it */
	char label[64];	   /* for failure messages */
	double *a;
	size_t na;
	double *b;
	size_t nb;
	double param; /* proportion, shift, margin_pct or level */
	double *ref;  /* values computed by SciPy */
	size_t nref;
};

struct fixture {
	struct ref_case *cases;
	size_t ncases;
	size_t cap;
	gsl_rng *rng;
};

/*
 * The reference program.  It must not contain a single quote: it is
 * passed to the shell inside single quotes.  false_discovery_control is
 * not in the installed SciPy 1.10, so "bh" spells out its SciPy 1.11
 * algorithm with numpy.
 */
static const char reference_script[] =
    "import sys, warnings\n"
    "import numpy as np\n"
    "from scipy import stats\n"
    "warnings.simplefilter(\"ignore\")\n"
    "def bh(p):\n"
    "    m = p.size\n"
    "    if m <= 1:\n"
    "        return p\n"
    "    o = np.argsort(p)\n"
    "    s = p[o] * (m / np.arange(1, m + 1))\n"
    "    s = np.minimum.accumulate(s[::-1])[::-1]\n"
    "    q = np.empty(m)\n"
    "    q[o] = s\n"
    "    return np.clip(q, 0, 1)\n"
    "def welch_df(x, y):\n"
    "    vx = np.var(x, ddof=1) / x.size\n"
    "    vy = np.var(y, ddof=1) / y.size\n"
    "    return (vx + vy) ** 2 / (vx ** 2 / (x.size - 1)"
    " + vy ** 2 / (y.size - 1))\n"
    "out = []\n"
    "for line in open(sys.argv[1]):\n"
    "    f = line.split()\n"
    "    kind, par, na, nb = f[0], float(f[1]), int(f[2]), int(f[3])\n"
    "    v = np.array(f[4:], dtype=float)\n"
    "    a, b = v[:na], v[na:na + nb]\n"
    "    if kind == \"desc\":\n"
    "        r = [np.mean(a), np.var(a, ddof=1), np.std(a, ddof=1),\n"
    "             np.std(a), np.median(a), stats.median_abs_deviation(a)]\n"
    "        r += [stats.trim_mean(a, q) for q in (0, 0.1, 0.2, 0.25, 0.5)]\n"
    "    elif kind == \"welch\":\n"
    "        t = stats.ttest_ind(a, b, equal_var=False)\n"
    "        r = [t.statistic, t.pvalue, welch_df(a, b)]\n"
    "    elif kind == \"welch1\":\n"
    "        t = stats.ttest_ind(b - par, a, equal_var=False,\n"
    "                            alternative=\"greater\")\n"
    "        r = [t.statistic, t.pvalue, welch_df(a, b)]\n"
    "    elif kind == \"tsd\":\n"
    "        df = na + nb + 30\n"
    "        t = (np.mean(a) - np.mean(b)) / (par * np.sqrt(1 / na + 1 / "
    "nb))\n"
    "        r = [t, 2 * stats.t.sf(abs(t), df), df]\n"
    "    elif kind == \"mwu\":\n"
    "        u = stats.mannwhitneyu(a, b, alternative=\"two-sided\",\n"
    "                               method=\"auto\")\n"
    "        exact = min(na, nb) <= 8 and np.unique(v).size == na + nb\n"
    "        r = [u.statistic, u.pvalue, float(exact)]\n"
    "    elif kind == \"ks\":\n"
    "        k = stats.ks_2samp(a, b)\n"
    "        r = [k.statistic, k.pvalue, float(max(na, nb) > 10000)]\n"
    "    elif kind == \"tost\":\n"
    "        m = abs(np.mean(a)) * par / 100\n"
    "        lo = stats.ttest_ind(b + m, a, equal_var=False,\n"
    "                             alternative=\"greater\")\n"
    "        hi = stats.ttest_ind(b - m, a, equal_var=False,\n"
    "                             alternative=\"less\")\n"
    "        w = lo if lo.pvalue >= hi.pvalue else hi\n"
    "        r = [w.pvalue, w.statistic, welch_df(a, b)]\n"
    "    elif kind == \"wsr\":\n"
    "        nz = a[a != 0]\n"
    "        exact = na <= 50 and nz.size == na and \\\n"
    "            np.unique(np.abs(nz)).size == na\n"
    "        w = stats.wilcoxon(a, alternative=\"greater\",\n"
    "                           method=\"auto\" if exact else \"approx\")\n"
    "        r = [w.statistic, w.pvalue, float(exact)]\n"
    "    elif kind == \"bh\":\n"
    "        r = list(bh(a))\n"
    "    elif kind == \"boot\":\n"
    "        g = np.random.default_rng(20240607)\n"
    "        R = 100000\n"
    "        ma = a[g.integers(0, na, (R, na))].mean(axis=1)\n"
    "        mb = b[g.integers(0, nb, (R, nb))].mean(axis=1)\n"
    "        ch = 100 * (mb - ma) / ma\n"
    "        r = list(np.percentile(ch, [50 * (1 - par), 50 * (1 + par)]))\n"
    "    out.append(kind + \" \" + \" \".join(repr(float(x)) for x in r))\n"
    "print(\"\\n\".join(out))\n";

/* ----------------------------------------------------------------------
 * Building the cases
 */

static double *copy_values(const double *x, size_t n)
{
	double *copy = malloc((n ? n : 1) * sizeof(*copy));

	assert_non_null(copy);
	if (n)
		memcpy(copy, x, n * sizeof(*copy));
	return copy;
}

static struct ref_case *add_case(struct fixture *fx, enum ref_kind kind,
				 const char *group, const double *a, size_t na,
				 const double *b, size_t nb, double param)
{
	struct ref_case *c;

	if (fx->ncases == fx->cap) {
		fx->cap = fx->cap ? 2 * fx->cap : 64;
		fx->cases = realloc(fx->cases, fx->cap * sizeof(*fx->cases));
		assert_non_null(fx->cases);
	}
	c = &fx->cases[fx->ncases++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->group = group;
	snprintf(c->label, sizeof(c->label), "%s/%s #%zu na=%zu nb=%zu",
		 ref_kind_names[kind], group, fx->ncases - 1, na, nb);
	c->a = copy_values(a, na);
	c->na = na;
	c->b = copy_values(b, nb);
	c->nb = nb;
	c->param = param;
	return c;
}

/*
 * n normal draws; step > 0 rounds them to multiples of step, which makes
 * ties.
 */
static double *draw(gsl_rng *rng, size_t n, double mu, double sigma,
		    double step)
{
	double *x = malloc((n ? n : 1) * sizeof(*x));

	assert_non_null(x);
	for (size_t i = 0; i < n; i++) {
		x[i] = mu + gsl_ran_gaussian(rng, sigma);
		if (step > 0)
			x[i] = step * round(x[i] / step);
	}
	return x;
}

static void add_drawn(struct fixture *fx, enum ref_kind kind,
		      const char *group, size_t na, size_t nb, double mu_b,
		      double sigma_b, double step, double param)
{
	double *a = draw(fx->rng, na, 100.0, 5.0, step);
	double *b = draw(fx->rng, nb, 100.0 + mu_b, sigma_b, step);

	add_case(fx, kind, group, a, na, b, nb, param);
	free(a);
	free(b);
}

static void add_descriptive_cases(struct fixture *fx)
{
	static const double one[] = {5.0};
	static const double four[] = {1.0, 2.0, 3.0, 4.0};
	static const double mixed[] = {-3.0, 10.0, 0.5, 7.0, 7.0, 1e-3, 42.0};
	static const double same[] = {2.5, 2.5, 2.5};
	static const double outlier[] = {10.1, 10.3, 9.9,  10.0, 250.0,
					 10.2, 9.8,  10.0, 10.1, 10.4};
	static const size_t sizes[] = {2, 3, 5, 8, 13, 20, 50, 101, 200};

	add_case(fx, REF_DESC, "fixed", one, 1, NULL, 0, 0);
	add_case(fx, REF_DESC, "fixed", four, 4, NULL, 0, 0);
	add_case(fx, REF_DESC, "fixed", mixed, 7, NULL, 0, 0);
	add_case(fx, REF_DESC, "fixed", same, 3, NULL, 0, 0);
	add_case(fx, REF_DESC, "fixed", outlier, 10, NULL, 0, 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double *x =
		    draw(fx->rng, sizes[i], 1000.0, 30.0, i % 2 ? 5.0 : 0.0);

		add_case(fx, REF_DESC, "random", x, sizes[i], NULL, 0, 0);
		free(x);
	}
}

static void add_welch_cases(struct fixture *fx)
{
	static const double c1[] = {3.0, 3.0, 3.0};
	static const double c2[] = {5.0, 5.0};
	static const double v3[] = {2.9, 3.4, 3.1};
	static const size_t tiny[][2] = {{2, 2}, {2, 3}, {3, 2}, {3, 3}};
	static const size_t mixed[][2] = {{4, 9}, {12, 5}, {7, 30}, {25, 25}};
	static const size_t large[][2] = {{50, 80}, {120, 60}, {200, 200}};

	for (size_t i = 0; i < 4; i++) {
		add_drawn(fx, REF_WELCH, "tiny", tiny[i][0], tiny[i][1], 4.0,
			  5.0, 0, 0);
		add_drawn(fx, REF_WELCH, "tiny", tiny[i][0], tiny[i][1], 0.0,
			  1.0, 1.0, 0);
		add_drawn(fx, REF_WELCH, "mixed", mixed[i][0], mixed[i][1],
			  2.0 * i, 3.0 + i, i % 2 ? 1.0 : 0, 0);
	}
	for (size_t i = 0; i < 3; i++) {
		add_drawn(fx, REF_WELCH, "large", large[i][0], large[i][1],
			  1.0, 5.0, 0, 0);
		add_drawn(fx, REF_WELCH, "large", large[i][0], large[i][1],
			  0.0, 9.0, 0.5, 0);
		/* far tail: p-values down to ~1e-100 */
		add_drawn(fx, REF_WELCH, "large", large[i][0], large[i][1],
			  8.0 + 4.0 * i, 2.0, 0, 0);
	}
	add_case(fx, REF_WELCH, "one-constant", c1, 3, v3, 3, 0);
	add_case(fx, REF_WELCH, "one-constant", v3, 3, c2, 2, 0);
	add_case(fx, REF_WELCH, "both-constant", c1, 3, c2, 2, 0);

	for (size_t i = 0; i < 4; i++) {
		double shift = i == 0 ? 0.0 : (i == 1 ? 1.5 : -2.0 * i);

		add_drawn(fx, REF_WELCH1, "shift", tiny[i][0], tiny[i][1], 1.0,
			  2.0, 0, shift);
		add_drawn(fx, REF_WELCH1, "shift", mixed[i][0], mixed[i][1],
			  3.0, 4.0, i % 2 ? 1.0 : 0, shift);
	}
	for (size_t i = 0; i < 3; i++)
		add_drawn(fx, REF_WELCH1, "shift", large[i][0], large[i][1],
			  2.0, 5.0, 0, 1.0 + i);
}

/* stats_t_known_sd: param is the known sd; df is na + nb + 30 on both
 * sides (a pool larger than the two samples). */
static void add_known_sd_cases(struct fixture *fx)
{
	static const size_t sizes[][2] = {{1, 1}, {1, 4},   {3, 3},
					  {4, 9}, {25, 25}, {120, 60}};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		add_drawn(fx, REF_TSD, "known-sd", sizes[i][0], sizes[i][1],
			  2.0, 5.0, i % 2 ? 1.0 : 0, 5.0);
		add_drawn(fx, REF_TSD, "known-sd", sizes[i][0], sizes[i][1],
			  0.0, 5.0, 0, 3.0 + i);
		/* far tail */
		add_drawn(fx, REF_TSD, "known-sd", sizes[i][0], sizes[i][1],
			  30.0, 5.0, 0, 2.0);
	}
}

static void add_mwu_cases(struct fixture *fx)
{
	static const size_t exact[][2] = {{1, 1},  {1, 5}, {2, 3},  {3, 3},
					  {4, 7},  {8, 8}, {8, 30}, {5, 60},
					  {30, 2}, {6, 9}};
	static const size_t ties[][2] = {{3, 4}, {2, 2},  {8, 8},
					 {9, 9}, {12, 5}, {20, 30}};
	static const size_t large[][2] = {
	    {50, 50}, {80, 120}, {200, 150}, {60, 200}};
	static const double same_a[] = {7, 7, 7, 7}, same_b[] = {7, 7};

	for (size_t i = 0; i < 10; i++) {
		add_drawn(fx, REF_MWU, "exact", exact[i][0], exact[i][1],
			  (double)i, 5.0, 0, 0);
		/* clearly separated: the smallest exact p-values */
		add_drawn(fx, REF_MWU, "exact", exact[i][0], exact[i][1], 60.0,
			  5.0, 0, 0);
	}
	for (size_t i = 0; i < 6; i++)
		add_drawn(fx, REF_MWU, "ties", ties[i][0], ties[i][1],
			  2.0 * (double)i, 5.0, i < 3 ? 4.0 : 2.0, 0);
	for (size_t i = 0; i < 4; i++) {
		add_drawn(fx, REF_MWU, "large", large[i][0], large[i][1], 1.0,
			  5.0, 0, 0);
		add_drawn(fx, REF_MWU, "large", large[i][0], large[i][1], 2.0,
			  5.0, 1.0, 0);
		add_drawn(fx, REF_MWU, "large", large[i][0], large[i][1], 0.0,
			  5.0, 3.0, 0);
	}
	add_case(fx, REF_MWU, "identical", same_a, 4, same_b, 2, 0);
}

/*
 * a on a regular grid of [0, 1], b on a coarser grid offset by frac of a
 * step and shifted by delta: D is about delta + frac / nb, which steers
 * the asymptotic p-value into a chosen branch of SciPy's kstwo.sf.
 */
static void add_ks_grid_case(struct fixture *fx, size_t na, size_t nb,
			     double frac, double delta)
{
	double *a = malloc(na * sizeof(*a)), *b = malloc(nb * sizeof(*b));

	assert_non_null(a);
	assert_non_null(b);
	for (size_t i = 0; i < na; i++)
		a[i] = ((double)i + 0.5) / (double)na;
	for (size_t j = 0; j < nb; j++)
		b[j] = ((double)j + frac) / (double)nb + delta;
	add_case(fx, REF_KS, "asymptotic", a, na, b, nb, 0);
	free(a);
	free(b);
}

/* Wilcoxon's signed-rank test: a holds the differences (b is empty). */
static void add_wilcoxon_cases(struct fixture *fx)
{
	static const size_t exact[] = {1, 2, 3, 5, 8, 12, 20, 35, 50};
	static const size_t approx[] = {51, 80, 200, 600};
	static const size_t ties[] = {6, 10, 25, 60};
	/* (a's draws are 100 + N(0, 5); each group moves them near 0) */
	static const double zeros[] = {0.0, 1.5,  -0.5, 0.0, 2.0,
				       3.0, -2.0, 0.0,	4.0, 1.5};
	static const double negative[] = {-1.0, -2.0, -3.0, -4.0, -5.0};

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
		add_drawn(fx, REF_WSR, "exact", exact[i], 0, 0, 0, 0, 0);
		for (size_t j = 0; j < exact[i]; j++)
			fx->cases[fx->ncases - 1].a[j] -= 99.0;
		/* clearly positive: the exact distribution's far tail */
		add_drawn(fx, REF_WSR, "exact", exact[i], 0, 0, 0, 0, 0);
		for (size_t j = 0; j < exact[i]; j++)
			fx->cases[fx->ncases - 1].a[j] -= 88.0;
	}
	for (size_t i = 0; i < sizeof(approx) / sizeof(approx[0]); i++) {
		add_drawn(fx, REF_WSR, "approx", approx[i], 0, 0, 0, 0, 0);
		add_drawn(fx, REF_WSR, "approx", approx[i], 0, 0, 0, 0, 0);
		for (size_t j = 0; j < approx[i]; j++)
			fx->cases[fx->ncases - 1].a[j] -= 99.0;
	}
	/* ties: on a grid of 4, less 99: odd, so never 0 */
	for (size_t i = 0; i < sizeof(ties) / sizeof(ties[0]); i++) {
		add_drawn(fx, REF_WSR, "ties", ties[i], 0, 0, 0, 4.0, 0);
		for (size_t j = 0; j < ties[i]; j++)
			fx->cases[fx->ncases - 1].a[j] -= 99.0;
	}
	/* zeros: on a grid of 1 near 0, and every fifth difference 0 */
	for (size_t i = 0; i < sizeof(ties) / sizeof(ties[0]); i++) {
		add_drawn(fx, REF_WSR, "zeros", ties[i] + 5, 0, 0, 0, 1.0, 0);
		for (size_t j = 0; j < ties[i] + 5; j++)
			fx->cases[fx->ncases - 1].a[j] =
			    j % 5 == 0 ? 0.0
				       : fx->cases[fx->ncases - 1].a[j] -
					     (100.0 - (double)i);
	}
	add_case(fx, REF_WSR, "zeros", zeros, 10, NULL, 0, 0);
	add_case(fx, REF_WSR, "exact", negative, 5, NULL, 0, 0);
}

static void add_ks_cases(struct fixture *fx)
{
	/* n below is round(na * nb / (na + nb)), x is about D */
	static const struct {
		size_t na, nb;
		double frac, delta;
	} grid[] = {
	    {10001, 100, 0.8, 0.0},    /* n = 99, n x <= 1 */
	    {10001, 200, 0.8, 0.0},    /* n = 196, n x <= 1 */
	    {10001, 3, 0.5, 0.6},      /* n x >= n - 1 */
	    {10001, 100, 0.5, 0.595},  /* x >= 0.5 */
	    {10001, 100, 0.5, 0.045},  /* Durbin, n <= 140 */
	    {10001, 100, 0.5, 0.145},  /* Pomeranz */
	    {10001, 100, 0.5, 0.295},  /* Smirnov, n <= 140 */
	    {10001, 400, 0.5, 0.0175}, /* Durbin, n > 140 */
	    {10001, 400, 0.5, 0.0475}, /* Pelz-Good */
	    {10001, 400, 0.5, 0.0975}, /* Smirnov, n > 140 */
	    {20000, 20000, 0.3, 0.01}, /* Pelz-Good, n = 10000 */
	    {12000, 12000, 0.5, 0.25}, /* n x^2 >= 370: p = 0 */
	};
	static const size_t equal[] = {1, 2, 3, 5, 10, 40, 200, 1000};
	static const size_t unequal[][2] = {
	    {1, 2},   {2, 3},	{3, 7},	    {5, 8},   {12, 30},
	    {25, 40}, {60, 90}, {200, 150}, {7, 500}, {999, 1000}};
	static const size_t asymp[][2] = {
	    {10001, 1},	  {10001, 3},	{10001, 60},	{10001, 100},
	    {10001, 150}, {20000, 400}, {12000, 12000},
	};
	static const double shifts[] = {0.0, 1.0, 3.0, 15.0};
	static const double a_same[] = {1, 2, 2, 3}, b_same[] = {3, 2, 1, 2};
	static const double a_const[] = {4, 4, 4}, b_const[] = {9, 9};

	for (size_t i = 0; i < 8; i++)
		for (size_t s = 0; s < 2; s++)
			add_drawn(fx, REF_KS, "equal", equal[i], equal[i],
				  shifts[s + (i % 2) * 2], 5.0, 0, 0);
	for (size_t i = 0; i < 10; i++)
		for (size_t s = 0; s < 2; s++)
			add_drawn(fx, REF_KS, "unequal", unequal[i][0],
				  unequal[i][1], shifts[s + (i % 2) * 2],
				  4.0 + s, 0, 0);
	for (size_t i = 0; i < 6; i++)
		add_drawn(fx, REF_KS, "ties", 5 + 7 * i, 9 + 3 * i, (double)i,
			  5.0, 4.0, 0);
	add_case(fx, REF_KS, "ties", a_same, 4, b_same, 4, 0);
	add_case(fx, REF_KS, "ties", a_const, 3, b_const, 2, 0);
	for (size_t i = 0; i < 7; i++)
		for (size_t s = 0; s < 2; s++)
			add_drawn(fx, REF_KS, "asymptotic", asymp[i][0],
				  asymp[i][1], s ? 0.4 * (double)(i + 1) : 0.0,
				  5.0 + s, 0, 0);
	for (size_t i = 0; i < sizeof(grid) / sizeof(grid[0]); i++)
		add_ks_grid_case(fx, grid[i].na, grid[i].nb, grid[i].frac,
				 grid[i].delta);
}

static void add_tost_cases(struct fixture *fx)
{
	static const size_t sizes[][2] = {{2, 3},   {5, 5},   {10, 14},
					  {30, 30}, {60, 45}, {150, 200}};
	static const double margins[] = {0.5, 2.0, 5.0, 10.0};

	for (size_t i = 0; i < 6; i++)
		for (size_t m = 0; m < 4; m++)
			add_drawn(fx, REF_TOST, "tost", sizes[i][0],
				  sizes[i][1], (double)m - 1.0, 5.0,
				  i % 3 == 2 ? 1.0 : 0, margins[m]);
}

static void add_bh_cases(struct fixture *fx)
{
	static const double doc[] = {0.0001, 0.0004, 0.0019, 0.0095, 0.0201,
				     0.0278, 0.0298, 0.0344, 0.0459, 0.3240,
				     0.4262, 0.5719, 0.6528, 0.7590, 1.000};
	static const double edge[] = {0.0, 1.0, 0.5, 0.0, 1.0, 0.02};
	static const double single[] = {0.3};
	static const size_t sizes[] = {2, 7, 40, 150};

	add_case(fx, REF_BH, "bh", doc, 15, NULL, 0, 0);
	add_case(fx, REF_BH, "bh", edge, 6, NULL, 0, 0);
	add_case(fx, REF_BH, "bh", single, 1, NULL, 0, 0);
	for (size_t i = 0; i < 4; i++) {
		double *p = malloc(sizes[i] * sizeof(*p));

		assert_non_null(p);
		for (size_t j = 0; j < sizes[i]; j++) {
			p[j] = pow(gsl_rng_uniform(fx->rng), 3.0);
			if (i % 2) /* ties */
				p[j] = round(p[j] * 20.0) / 20.0;
		}
		add_case(fx, REF_BH, "bh", p, sizes[i], NULL, 0, 0);
		free(p);
	}
}

static void add_bootstrap_cases(struct fixture *fx)
{
	add_drawn(fx, REF_BOOT, "numpy", 30, 30, 3.0, 5.0, 0, 0.95);
	add_drawn(fx, REF_BOOT, "numpy", 20, 45, -6.0, 8.0, 0, 0.90);
	add_drawn(fx, REF_BOOT, "numpy", 60, 25, 0.0, 3.0, 0.5, 0.99);
}

/* ----------------------------------------------------------------------
 * Running SciPy once
 */

static int write_cases(const struct fixture *fx, const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	for (size_t i = 0; i < fx->ncases; i++) {
		const struct ref_case *c = &fx->cases[i];

		fprintf(f, "%s %.17g %zu %zu", ref_kind_names[c->kind],
			c->param, c->na, c->nb);
		for (size_t j = 0; j < c->na; j++)
			fprintf(f, " %.17g", c->a[j]);
		for (size_t j = 0; j < c->nb; j++)
			fprintf(f, " %.17g", c->b[j]);
		fputc('\n', f);
	}
	return fclose(f) == 0 ? 0 : -1;
}

static int parse_line(struct ref_case *c, char *line)
{
	size_t kind_len = strlen(ref_kind_names[c->kind]);
	char *p = line + kind_len, *end;

	if (strncmp(line, ref_kind_names[c->kind], kind_len) != 0)
		return -1;
	for (;;) {
		double v = strtod(p, &end);

		if (end == p)
			break;
		c->ref = realloc(c->ref, (c->nref + 1) * sizeof(*c->ref));
		if (c->ref == NULL)
			return -1;
		c->ref[c->nref++] = v;
		p = end;
	}
	return c->nref > 0 ? 0 : -1;
}

static int run_reference(struct fixture *fx)
{
	char path[] = "/tmp/statbisect_test_stats_XXXXXX";
	char *cmd = NULL, *line = NULL;
	size_t cap = 0, done = 0;
	FILE *pipe = NULL;
	int fd, error = -1;

	if (strchr(reference_script, '\'') != NULL)
		return -1;
	if ((fd = mkstemp(path)) < 0)
		return -1;
	close(fd);
	if (write_cases(fx, path) < 0)
		goto out;
	if (asprintf(&cmd, "%s -c '%s' '%s'", REFERENCE_PYTHON,
		     reference_script, path) < 0) {
		cmd = NULL;
		goto out;
	}
	if ((pipe = popen(cmd, "r")) == NULL)
		goto out;
	while (getline(&line, &cap, pipe) > 0 && done < fx->ncases)
		if (parse_line(&fx->cases[done++], line) < 0) {
			fprintf(stderr, "bad reference line: %s", line);
			goto out;
		}
	if (done == fx->ncases)
		error = 0;
	else
		fprintf(stderr, "reference gave %zu of %zu results\n", done,
			fx->ncases);
out:
	if (pipe != NULL && pclose(pipe) != 0)
		error = -1;
	free(line);
	free(cmd);
	unlink(path);
	return error;
}

static int group_setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (fx == NULL)
		return -1;
	fx->rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(fx->rng, SEED_SAMPLES);
	add_descriptive_cases(fx);
	add_welch_cases(fx);
	add_known_sd_cases(fx);
	add_mwu_cases(fx);
	add_wilcoxon_cases(fx);
	add_ks_cases(fx);
	add_tost_cases(fx);
	add_bh_cases(fx);
	add_bootstrap_cases(fx);
	*state = fx;
	return run_reference(fx);
}

static int group_teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx == NULL)
		return 0;
	for (size_t i = 0; i < fx->ncases; i++) {
		free(fx->cases[i].a);
		free(fx->cases[i].b);
		free(fx->cases[i].ref);
	}
	free(fx->cases);
	gsl_rng_free(fx->rng);
	free(fx);
	return 0;
}

/* ----------------------------------------------------------------------
 * Comparison helpers
 */

static void check_close(double got, double want, double rtol, double atol,
			const char *what, const struct ref_case *c)
{
	double err = fabs(got - want);

	if (isnan(want) && isnan(got))
		return;
	if (isinf(want) && got == want)
		return;
	if (!(err <= atol + rtol * fabs(want)))
		fail_msg("%s [%s]: got %.17g, SciPy %.17g (rel err %.3g)",
			 what, c->label, got, want, err / fabs(want));
}

static void check_test(const struct stats_test *got, double stat, double p,
		       const struct ref_case *c)
{
	check_close(got->statistic, stat, RTOL_CLOSED, 1e-12, "statistic", c);
	check_close(got->p_value, p, RTOL_P, ATOL_P, "p_value", c);
}

/* Cases of one kind and group; fails if there are none. */
static size_t each_case(const struct fixture *fx, enum ref_kind kind,
			const char *group, const struct ref_case **list,
			size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < fx->ncases && n < max; i++)
		if (fx->cases[i].kind == kind &&
		    strcmp(fx->cases[i].group, group) == 0)
			list[n++] = &fx->cases[i];
	assert_true(n > 0);
	return n;
}

#define MAX_LIST 256

/* ----------------------------------------------------------------------
 * Descriptive statistics
 */

static void check_descriptive(const struct ref_case *c)
{
	static const double props[] = {0.0, 0.1, 0.2, 0.25, 0.5};

	assert_int_equal(c->nref, 11);
	check_close(stats_mean(c->a, c->na), c->ref[0], RTOL_CLOSED, 0, "mean",
		    c);
	check_close(stats_variance(c->a, c->na), c->ref[1], RTOL_CLOSED,
		    1e-300, "variance", c);
	check_close(stats_sd(c->a, c->na), c->ref[2], RTOL_CLOSED, 1e-300,
		    "sd", c);
	check_close(stats_pop_sd(c->a, c->na), c->ref[3], RTOL_CLOSED, 1e-300,
		    "pop_sd", c);
	check_close(stats_median(c->a, c->na), c->ref[4], RTOL_CLOSED, 0,
		    "median", c);
	check_close(stats_mad(c->a, c->na), c->ref[5], RTOL_CLOSED, 0, "mad",
		    c);
	for (size_t i = 0; i < 5; i++)
		check_close(stats_trimmed_mean(c->a, c->na, props[i]),
			    c->ref[6 + i], RTOL_CLOSED, 0, "trimmed_mean", c);
}

static void test_stats_descriptive_fixed_samples_match_numpy(void **state)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_DESC, "fixed", list, MAX_LIST);

	for (size_t i = 0; i < n; i++)
		check_descriptive(list[i]);
}

static void test_stats_descriptive_random_samples_match_numpy(void **state)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_DESC, "random", list, MAX_LIST);

	for (size_t i = 0; i < n; i++)
		check_descriptive(list[i]);
}

static void test_stats_median_mad_trim_leave_input_untouched(void **state)
{
	double x[] = {9.0, -1.0, 4.0, 4.0, 100.0, 0.5};
	double before[6];

	(void)state;
	memcpy(before, x, sizeof(x));
	assert_true(stats_median(x, 6) == 4.0);
	assert_true(stats_mad(x, 6) == 4.25);
	assert_true(stats_trimmed_mean(x, 6, 0.2) == 4.375);
	assert_memory_equal(x, before, sizeof(x));
}

static void
test_stats_identical_values_give_exact_mean_zero_spread(void **state)
{
	double x[7];

	(void)state;
	for (size_t i = 0; i < 7; i++)
		x[i] = 0.1;
	assert_true(stats_mean(x, 7) == 0.1);
	assert_true(stats_variance(x, 7) == 0.0);
	assert_true(stats_sd(x, 7) == 0.0);
	assert_true(stats_pop_sd(x, 7) == 0.0);
	assert_true(stats_mad(x, 7) == 0.0);
	assert_true(stats_median(x, 7) == 0.1);
	assert_true(stats_trimmed_mean(x, 7, 0.3) == 0.1);
}

static void test_stats_descriptive_invalid_input_gives_nan(void **state)
{
	const double ok[] = {1.0, 2.0, 3.0};
	const double bad_inf[] = {1.0, INFINITY, 3.0};
	const double bad_nan[] = {1.0, NAN};

	(void)state;
	assert_true(isnan(stats_mean(NULL, 3)));
	assert_true(isnan(stats_mean(ok, 0)));
	assert_true(isnan(stats_mean(bad_inf, 3)));
	assert_true(isnan(stats_variance(ok, 1)));
	assert_true(isnan(stats_sd(bad_nan, 2)));
	assert_true(isnan(stats_pop_sd(ok, 0)));
	assert_true(isnan(stats_median(bad_nan, 2)));
	assert_true(isnan(stats_mad(NULL, 2)));
	assert_true(isnan(stats_trimmed_mean(ok, 3, 0.6)));
	assert_true(isnan(stats_trimmed_mean(ok, 3, -0.1)));
	assert_true(isnan(stats_trimmed_mean(ok, 3, NAN)));
	/* SciPy: n = 2 cut by 0.5 leaves nothing, mean of empty is NaN */
	assert_true(isnan(stats_trimmed_mean(ok, 2, 0.5)));
	/* the valid neighbours of those calls */
	assert_true(stats_pop_sd(ok, 1) == 0.0);
	assert_true(stats_trimmed_mean(ok, 3, 0.5) == 2.0);
}

/* ----------------------------------------------------------------------
 * Welch
 */

static void check_welch_group(void **state, const char *group)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_WELCH, group, list, MAX_LIST);

	for (size_t i = 0; i < n; i++) {
		const struct ref_case *c = list[i];
		struct stats_test t;

		assert_int_equal(c->nref, 3);
		assert_int_equal(stats_welch_t(&t, c->a, c->na, c->b, c->nb),
				 0);
		check_test(&t, c->ref[0], c->ref[1], c);
		check_close(t.df, c->ref[2], RTOL_CLOSED, 0, "df", c);
	}
}

static void test_stats_welch_t_tiny_samples_match_scipy(void **state)
{
	check_welch_group(state, "tiny");
}

static void test_stats_welch_t_mixed_sizes_and_ties_match_scipy(void **state)
{
	check_welch_group(state, "mixed");
}

static void
test_stats_welch_t_large_samples_and_far_tail_match_scipy(void **state)
{
	check_welch_group(state, "large");
}

static void test_stats_welch_t_one_constant_sample_matches_scipy(void **state)
{
	check_welch_group(state, "one-constant");
}

static void test_stats_welch_t_both_constant_unequal_means_p_zero(void **state)
{
	const struct ref_case *list[MAX_LIST];
	size_t n =
	    each_case(*state, REF_WELCH, "both-constant", list, MAX_LIST);
	const struct ref_case *c = list[0];
	struct stats_test t;

	assert_int_equal(n, 1);
	assert_int_equal(stats_welch_t(&t, c->a, c->na, c->b, c->nb), 0);
	/* SciPy: t = -inf, p = 0 */
	assert_true(isinf(c->ref[0]) && c->ref[0] < 0);
	assert_true(c->ref[1] == 0.0);
	assert_true(t.statistic == c->ref[0]);
	assert_true(t.p_value == 0.0);
	assert_true(t.df == 0.0);
}

static void test_stats_welch_t_both_constant_equal_means_p_one(void **state)
{
	const double a[] = {4.2, 4.2, 4.2}, b[] = {4.2, 4.2};
	struct stats_test t, g;

	(void)state;
	/* SciPy gives NaN here; the contract says p = 1 */
	assert_int_equal(stats_welch_t(&t, a, 3, b, 2), 0);
	assert_true(t.statistic == 0.0);
	assert_true(t.p_value == 1.0);
	assert_true(t.df == 0.0);
	assert_int_equal(stats_welch_t_one_sided(&g, a, 3, b, 2, 0.0), 0);
	assert_true(g.statistic == 0.0 && g.p_value == 1.0);
	assert_int_equal(stats_welch_t_one_sided(&g, a, 3, b, 2, -1.0), 0);
	assert_true(isinf(g.statistic) && g.statistic > 0);
	assert_true(g.p_value == 0.0);
	assert_int_equal(stats_welch_t_one_sided(&g, a, 3, b, 2, 1.0), 0);
	assert_true(isinf(g.statistic) && g.statistic < 0);
	assert_true(g.p_value == 1.0);
}

static void test_stats_welch_t_invalid_input_leaves_out_untouched(void **state)
{
	const double a[] = {1.0, 2.0, 3.0}, b[] = {2.0, 5.0};
	const double inf_b[] = {2.0, INFINITY}, nan_a[] = {NAN, 1.0};
	struct stats_test t = {11.0, 22.0, 33.0};

	(void)state;
	assert_int_equal(stats_welch_t(&t, a, 3, b, 1), STATS_EINVAL);
	assert_int_equal(stats_welch_t(&t, a, 1, b, 2), STATS_EINVAL);
	assert_int_equal(stats_welch_t(&t, NULL, 3, b, 2), STATS_EINVAL);
	assert_int_equal(stats_welch_t(&t, a, 3, inf_b, 2), STATS_EINVAL);
	assert_int_equal(stats_welch_t(&t, nan_a, 2, b, 2), STATS_EINVAL);
	assert_int_equal(stats_welch_t(NULL, a, 3, b, 2), STATS_EINVAL);
	assert_int_equal(stats_welch_t_one_sided(&t, a, 3, b, 2, NAN),
			 STATS_EINVAL);
	assert_int_equal(stats_welch_t_one_sided(&t, a, 3, b, 2, INFINITY),
			 STATS_EINVAL);
	assert_int_equal(stats_welch_t_one_sided(&t, a, 3, b, 1, 0.0),
			 STATS_EINVAL);
	assert_true(t.statistic == 11.0 && t.p_value == 22.0 && t.df == 33.0);
}

static void test_stats_t_known_sd_matches_scipy(void **state)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_TSD, "known-sd", list, MAX_LIST);

	for (size_t i = 0; i < n; i++) {
		const struct ref_case *c = list[i];
		double df = (double)(c->na + c->nb + 30);
		struct stats_test t;

		assert_int_equal(c->nref, 3);
		assert_int_equal(stats_t_known_sd(&t, c->a, c->na, c->b, c->nb,
						  c->param, df),
				 0);
		check_test(&t, c->ref[0], c->ref[1], c);
		assert_true(t.df == c->ref[2]);
	}
}

static void test_stats_t_known_sd_invalid_input(void **state)
{
	const double a[] = {1.0, 2.0}, nan_b[] = {NAN};
	struct stats_test t = {11.0, 22.0, 33.0};

	(void)state;
	assert_int_equal(stats_t_known_sd(&t, a, 0, a, 2, 1.0, 5.0),
			 STATS_EINVAL);
	assert_int_equal(stats_t_known_sd(&t, a, 2, nan_b, 1, 1.0, 5.0),
			 STATS_EINVAL);
	assert_int_equal(stats_t_known_sd(&t, a, 2, a, 2, 0.0, 5.0),
			 STATS_EINVAL);
	assert_int_equal(stats_t_known_sd(&t, a, 2, a, 2, INFINITY, 5.0),
			 STATS_EINVAL);
	assert_int_equal(stats_t_known_sd(&t, a, 2, a, 2, 1.0, 0.0),
			 STATS_EINVAL);
	assert_int_equal(stats_t_known_sd(NULL, a, 2, a, 2, 1.0, 5.0),
			 STATS_EINVAL);
	assert_true(t.statistic == 11.0 && t.p_value == 22.0 && t.df == 33.0);
	/* equal means: statistic 0, p 1 */
	assert_int_equal(stats_t_known_sd(&t, a, 2, a, 2, 1.0, 5.0), 0);
	assert_true(t.statistic == 0.0 && t.p_value == 1.0);
}

static void test_stats_welch_t_one_sided_matches_scipy_greater(void **state)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_WELCH1, "shift", list, MAX_LIST);

	for (size_t i = 0; i < n; i++) {
		const struct ref_case *c = list[i];
		struct stats_test t;

		assert_int_equal(stats_welch_t_one_sided(&t, c->a, c->na, c->b,
							 c->nb, c->param),
				 0);
		check_test(&t, c->ref[0], c->ref[1], c);
		check_close(t.df, c->ref[2], RTOL_CLOSED, 0, "df", c);
	}
}

/* ----------------------------------------------------------------------
 * Mann-Whitney
 */

/* Compares a group; returns how many cases SciPy solved exactly. */
static size_t check_mwu_group(void **state, const char *group)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_MWU, group, list, MAX_LIST);
	size_t exact = 0;

	for (size_t i = 0; i < n; i++) {
		const struct ref_case *c = list[i];
		struct stats_test t;

		assert_int_equal(c->nref, 3);
		assert_int_equal(
		    stats_mann_whitney(&t, c->a, c->na, c->b, c->nb), 0);
		check_test(&t, c->ref[0], c->ref[1], c);
		assert_true(t.df == 0.0);
		exact += c->ref[2] == 1.0;
	}
	return exact;
}

static void
test_stats_mann_whitney_exact_small_samples_match_scipy(void **state)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_MWU, "exact", list, MAX_LIST);

	/* every case of the group must take SciPy's exact branch */
	assert_int_equal(check_mwu_group(state, "exact"), n);
}

static void
test_stats_mann_whitney_ties_use_normal_approx_like_scipy(void **state)
{
	/* ties force the normal approximation even for small samples */
	assert_int_equal(check_mwu_group(state, "ties"), 0);
}

static void test_stats_mann_whitney_large_samples_match_scipy(void **state)
{
	assert_int_equal(check_mwu_group(state, "large"), 0);
}

/* ----------------------------------------------------------------------
 * Wilcoxon signed-rank
 */

/* Compares a group; returns how many cases SciPy solved exactly. */
static size_t check_wilcoxon_group(void **state, const char *group)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_WSR, group, list, MAX_LIST);
	size_t exact = 0;

	for (size_t i = 0; i < n; i++) {
		const struct ref_case *c = list[i];
		struct stats_test t;

		assert_int_equal(c->nref, 3);
		assert_int_equal(stats_wilcoxon_greater(&t, c->a, c->na), 0);
		check_test(&t, c->ref[0], c->ref[1], c);
		assert_true(t.df == 0.0);
		exact += c->ref[2] == 1.0;
	}
	return exact;
}

static void test_stats_wilcoxon_exact_small_samples_match_scipy(void **state)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_WSR, "exact", list, MAX_LIST);

	/* every case of the group must take SciPy's exact branch */
	assert_int_equal(check_wilcoxon_group(state, "exact"), n);
}

static void test_stats_wilcoxon_large_samples_match_scipy_approx(void **state)
{
	assert_int_equal(check_wilcoxon_group(state, "approx"), 0);
}

static void test_stats_wilcoxon_ties_use_corrected_normal_approx(void **state)
{
	assert_int_equal(check_wilcoxon_group(state, "ties"), 0);
}

static void test_stats_wilcoxon_zeros_are_dropped_as_scipy_wilcox(void **state)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_WSR, "zeros", list, MAX_LIST);
	size_t with_zero = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < list[i]->na; j++)
			if (list[i]->a[j] == 0.0) {
				with_zero++;
				break;
			}
	/* the group really holds zeros, and they force the approximation */
	assert_int_equal(with_zero, n);
	assert_int_equal(check_wilcoxon_group(state, "zeros"), 0);
}

static void test_stats_wilcoxon_all_zero_and_invalid_input(void **state)
{
	const double zero[] = {0.0, 0.0, 0.0}, nan_d[] = {1.0, NAN};
	const double up[] = {1.0, 2.0, 3.0, 4.0};
	struct stats_test t = {11.0, 22.0, 33.0};

	(void)state;
	assert_int_equal(stats_wilcoxon_greater(&t, up, 0), STATS_EINVAL);
	assert_int_equal(stats_wilcoxon_greater(&t, NULL, 3), STATS_EINVAL);
	assert_int_equal(stats_wilcoxon_greater(&t, nan_d, 2), STATS_EINVAL);
	assert_int_equal(stats_wilcoxon_greater(NULL, up, 4), STATS_EINVAL);
	assert_true(t.statistic == 11.0 && t.p_value == 22.0 && t.df == 33.0);
	/* nothing but zeros: no evidence (SciPy raises) */
	assert_int_equal(stats_wilcoxon_greater(&t, zero, 3), 0);
	assert_true(t.statistic == 0.0 && t.p_value == 1.0);
	/* four positive differences: R+ = 10, exactly 1/16 */
	assert_int_equal(stats_wilcoxon_greater(&t, up, 4), 0);
	assert_true(t.statistic == 10.0 && t.p_value == 1.0 / 16.0);
}

static void test_stats_mann_whitney_identical_values_give_p_one(void **state)
{
	const struct ref_case *list[MAX_LIST];
	struct stats_test t;

	assert_int_equal(
	    each_case(*state, REF_MWU, "identical", list, MAX_LIST), 1);
	assert_int_equal(check_mwu_group(state, "identical"), 0);
	assert_int_equal(stats_mann_whitney(&t, list[0]->a, list[0]->na,
					    list[0]->b, list[0]->nb),
			 0);
	assert_true(t.p_value == 1.0);
	assert_true(t.statistic == 4.0); /* U = na * nb / 2 */
}

static void
test_stats_mann_whitney_invalid_input_leaves_out_untouched(void **state)
{
	const double a[] = {1.0, 2.0}, bad[] = {1.0, NAN};
	struct stats_test t = {1.5, 2.5, 3.5};

	(void)state;
	assert_int_equal(stats_mann_whitney(&t, a, 2, a, 0), STATS_EINVAL);
	assert_int_equal(stats_mann_whitney(&t, NULL, 2, a, 2), STATS_EINVAL);
	assert_int_equal(stats_mann_whitney(&t, a, 2, bad, 2), STATS_EINVAL);
	assert_int_equal(stats_mann_whitney(NULL, a, 2, a, 2), STATS_EINVAL);
	assert_true(t.statistic == 1.5 && t.p_value == 2.5 && t.df == 3.5);
}

/* ----------------------------------------------------------------------
 * Kolmogorov-Smirnov
 */

/* Compares a group; returns how many cases SciPy did asymptotically. */
static size_t check_ks_group(void **state, const char *group)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_KS, group, list, MAX_LIST);
	size_t asymptotic = 0;

	for (size_t i = 0; i < n; i++) {
		const struct ref_case *c = list[i];
		struct stats_test t;

		assert_int_equal(c->nref, 3);
		assert_int_equal(stats_ks_2samp(&t, c->a, c->na, c->b, c->nb),
				 0);
		check_test(&t, c->ref[0], c->ref[1], c);
		assert_true(t.df == 0.0);
		asymptotic += c->ref[2] == 1.0;
	}
	return asymptotic;
}

static void test_stats_ks_2samp_exact_equal_sizes_match_scipy(void **state)
{
	assert_int_equal(check_ks_group(state, "equal"), 0);
}

static void test_stats_ks_2samp_exact_unequal_sizes_match_scipy(void **state)
{
	assert_int_equal(check_ks_group(state, "unequal"), 0);
}

static void
test_stats_ks_2samp_ties_and_constant_samples_match_scipy(void **state)
{
	const double a[] = {1, 2, 2, 3}, b[] = {3, 2, 1, 2};
	const double c[] = {4, 4, 4}, d[] = {9, 9};
	struct stats_test t;

	assert_int_equal(check_ks_group(state, "ties"), 0);
	assert_int_equal(stats_ks_2samp(&t, a, 4, b, 4), 0);
	assert_true(t.statistic == 0.0 && t.p_value == 1.0);
	assert_int_equal(stats_ks_2samp(&t, c, 3, d, 2), 0);
	assert_true(t.statistic == 1.0);
}

/*
 * Which branch of SciPy's kstwo.sf(x, n) (scipy.stats._ksstats._kolmogn)
 * evaluates a case; only used to prove the cases reach every branch.
 */
enum kolmogn_branch {
	KB_TRIVIAL,
	KB_RUBEN_LOW_SMALL,
	KB_RUBEN_LOW_LARGE,
	KB_RUBEN_HIGH,
	KB_HALF,
	KB_DURBIN_SMALL,
	KB_POMERANZ,
	KB_SMIRNOV_SMALL,
	KB_ZERO,
	KB_SMIRNOV_LARGE,
	KB_DURBIN_LARGE,
	KB_PELZ_GOOD,
	KB_COUNT,
};

static enum kolmogn_branch kolmogn_branch(double n, double x)
{
	double t = n * x, nxx = t * x;

	if (x >= 1.0 || x <= 0.0 || t <= 0.5)
		return KB_TRIVIAL;
	if (t <= 1.0)
		return n <= 140 ? KB_RUBEN_LOW_SMALL : KB_RUBEN_LOW_LARGE;
	if (t >= n - 1)
		return KB_RUBEN_HIGH;
	if (x >= 0.5)
		return KB_HALF;
	if (n <= 140) {
		if (nxx <= 0.754693)
			return KB_DURBIN_SMALL;
		return nxx <= 4 ? KB_POMERANZ : KB_SMIRNOV_SMALL;
	}
	if (nxx >= 370.0)
		return KB_ZERO;
	if (nxx >= 2.2)
		return KB_SMIRNOV_LARGE;
	if (n <= 100000 && n * pow(x, 1.5) <= 1.4)
		return KB_DURBIN_LARGE;
	return KB_PELZ_GOOD;
}

static void
test_stats_ks_2samp_asymptotic_above_10000_matches_scipy(void **state)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_KS, "asymptotic", list, MAX_LIST);
	int seen[KB_COUNT] = {0};

	assert_int_equal(check_ks_group(state, "asymptotic"), n);
	for (size_t i = 0; i < n; i++) {
		double big = (double)list[i]->na, small = (double)list[i]->nb;
		double en = nearbyint(big * small / (big + small));

		seen[kolmogn_branch(en, list[i]->ref[0])] = 1;
	}
	for (int b = KB_RUBEN_LOW_SMALL; b < KB_COUNT; b++)
		if (!seen[b])
			fail_msg("no asymptotic KS case reaches branch %d", b);
}

static void
test_stats_ks_2samp_invalid_input_leaves_out_untouched(void **state)
{
	const double a[] = {1.0, 2.0}, bad[] = {-INFINITY, 2.0};
	struct stats_test t = {1.5, 2.5, 3.5};

	(void)state;
	assert_int_equal(stats_ks_2samp(&t, a, 0, a, 2), STATS_EINVAL);
	assert_int_equal(stats_ks_2samp(&t, a, 2, NULL, 2), STATS_EINVAL);
	assert_int_equal(stats_ks_2samp(&t, bad, 2, a, 2), STATS_EINVAL);
	assert_int_equal(stats_ks_2samp(NULL, a, 2, a, 2), STATS_EINVAL);
	assert_true(t.statistic == 1.5 && t.p_value == 2.5 && t.df == 3.5);
}

/* ----------------------------------------------------------------------
 * TOST
 */

static void test_stats_tost_matches_two_scipy_one_sided_tests(void **state)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_TOST, "tost", list, MAX_LIST);

	for (size_t i = 0; i < n; i++) {
		const struct ref_case *c = list[i];
		struct stats_test t;

		assert_int_equal(c->nref, 3);
		assert_int_equal(
		    stats_tost(&t, c->a, c->na, c->b, c->nb, c->param), 0);
		check_close(t.p_value, c->ref[0], RTOL_P, ATOL_P, "p_value",
			    c);
		check_close(t.statistic, c->ref[1], RTOL_CLOSED, 1e-12,
			    "statistic", c);
		check_close(t.df, c->ref[2], RTOL_CLOSED, 0, "df", c);
	}
}

static void
test_stats_tost_small_p_when_equal_large_p_when_shifted(void **state)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	double *a, *b, *shifted;
	struct stats_test same, moved;

	(void)state;
	gsl_rng_set(rng, 99);
	a = draw(rng, 200, 100.0, 1.0, 0);
	b = draw(rng, 200, 100.0, 1.0, 0);
	shifted = draw(rng, 200, 120.0, 1.0, 0);
	assert_int_equal(stats_tost(&same, a, 200, b, 200, 5.0), 0);
	assert_int_equal(stats_tost(&moved, a, 200, shifted, 200, 5.0), 0);
	assert_true(same.p_value < 1e-12);
	assert_true(moved.p_value > 0.999);
	free(a);
	free(b);
	free(shifted);
	gsl_rng_free(rng);
}

static void test_stats_tost_invalid_input_leaves_out_untouched(void **state)
{
	const double a[] = {1.0, 2.0, 3.0};
	struct stats_test t = {1.5, 2.5, 3.5};

	(void)state;
	assert_int_equal(stats_tost(&t, a, 3, a, 3, -1.0), STATS_EINVAL);
	assert_int_equal(stats_tost(&t, a, 3, a, 3, NAN), STATS_EINVAL);
	assert_int_equal(stats_tost(&t, a, 1, a, 3, 5.0), STATS_EINVAL);
	assert_int_equal(stats_tost(NULL, a, 3, a, 3, 5.0), STATS_EINVAL);
	assert_true(t.statistic == 1.5 && t.p_value == 2.5 && t.df == 3.5);
}

/* ----------------------------------------------------------------------
 * Bootstrap
 */

static void test_stats_bootstrap_is_deterministic_for_a_seed(void **state)
{
	struct fixture *fx = *state;
	const struct ref_case *c = NULL;
	double lo1, hi1, lo2, hi2, lo3, hi3;

	for (size_t i = 0; i < fx->ncases && c == NULL; i++)
		if (fx->cases[i].kind == REF_BOOT)
			c = &fx->cases[i];
	assert_non_null(c);
	assert_int_equal(stats_bootstrap_pct_ci(&lo1, &hi1, c->a, c->na, c->b,
						c->nb, 0.95, 2000, 42),
			 0);
	assert_int_equal(stats_bootstrap_pct_ci(&lo2, &hi2, c->a, c->na, c->b,
						c->nb, 0.95, 2000, 42),
			 0);
	assert_int_equal(stats_bootstrap_pct_ci(&lo3, &hi3, c->a, c->na, c->b,
						c->nb, 0.95, 2000, 43),
			 0);
	assert_true(lo1 == lo2 && hi1 == hi2);
	assert_true(lo1 != lo3 || hi1 != hi3);
	assert_true(lo1 < hi1);
}

static void
test_stats_bootstrap_contains_true_change_when_separated(void **state)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	double *a, *b, lo, hi, sample_change;

	(void)state;
	gsl_rng_set(rng, 7);
	/* populations 100 and 110: the true change is +10 % */
	a = draw(rng, 40, 100.0, 1.0, 0);
	b = draw(rng, 40, 110.0, 1.0, 0);
	sample_change = 100.0 * (stats_mean(b, 40) - stats_mean(a, 40)) /
			stats_mean(a, 40);
	assert_int_equal(
	    stats_bootstrap_pct_ci(&lo, &hi, a, 40, b, 40, 0.95, 5000, 1), 0);
	assert_true(lo < 10.0 && 10.0 < hi);
	assert_true(lo < sample_change && sample_change < hi);
	assert_true(lo > 9.0 && hi < 11.0); /* separated: no sign doubt */
	free(a);
	free(b);
	gsl_rng_free(rng);
}

static void
test_stats_bootstrap_agrees_with_large_numpy_bootstrap(void **state)
{
	struct fixture *fx = *state;
	size_t checked = 0;

	for (size_t i = 0; i < fx->ncases; i++) {
		const struct ref_case *c = &fx->cases[i];
		double lo, hi, width;

		if (c->kind != REF_BOOT)
			continue;
		assert_int_equal(c->nref, 2);
		assert_int_equal(stats_bootstrap_pct_ci(&lo, &hi, c->a, c->na,
							c->b, c->nb, c->param,
							100000, 2024),
				 0);
		/*
		 * Both sides use 1e5 resamples: the Monte Carlo error of a
		 * bound is ~0.3 % of the width; allow about six of those.
		 */
		width = c->ref[1] - c->ref[0];
		check_close(lo, c->ref[0], 0, 0.02 * width, "ci low", c);
		check_close(hi, c->ref[1], 0, 0.02 * width, "ci high", c);
		checked++;
	}
	assert_int_equal(checked, 3);
}

static void
test_stats_bootstrap_invalid_input_leaves_out_untouched(void **state)
{
	const double a[] = {1.0, 2.0, 3.0}, zero[] = {-1.0, 1.0};
	double lo = 7.0, hi = 8.0;

	(void)state;
	assert_int_equal(
	    stats_bootstrap_pct_ci(&lo, &hi, a, 3, a, 3, 1.0, 100, 1),
	    STATS_EINVAL);
	assert_int_equal(
	    stats_bootstrap_pct_ci(&lo, &hi, a, 3, a, 3, 0.0, 100, 1),
	    STATS_EINVAL);
	assert_int_equal(
	    stats_bootstrap_pct_ci(&lo, &hi, a, 3, a, 3, 0.9, 1, 1),
	    STATS_EINVAL);
	assert_int_equal(
	    stats_bootstrap_pct_ci(&lo, &hi, a, 1, a, 3, 0.9, 100, 1),
	    STATS_EINVAL);
	assert_int_equal(
	    stats_bootstrap_pct_ci(NULL, &hi, a, 3, a, 3, 0.9, 100, 1),
	    STATS_EINVAL);
	/* mean(a) == 0: the percent change is undefined */
	assert_int_equal(
	    stats_bootstrap_pct_ci(&lo, &hi, zero, 2, a, 3, 0.9, 100, 1),
	    STATS_EINVAL);
	assert_true(lo == 7.0 && hi == 8.0);
}

/* ----------------------------------------------------------------------
 * Benjamini-Hochberg
 */

static void test_stats_benjamini_hochberg_matches_scipy_algorithm(void **state)
{
	const struct ref_case *list[MAX_LIST];
	size_t n = each_case(*state, REF_BH, "bh", list, MAX_LIST);

	for (size_t i = 0; i < n; i++) {
		const struct ref_case *c = list[i];
		double *q = malloc(c->na * sizeof(*q));

		assert_non_null(q);
		assert_int_equal(c->nref, c->na);
		assert_int_equal(stats_benjamini_hochberg(q, c->a, c->na), 0);
		for (size_t j = 0; j < c->na; j++)
			check_close(q[j], c->ref[j], 1e-12, 0, "q", c);
		free(q);
	}
	/* the documented SciPy example, first and sixth values */
	assert_true(fabs(list[0]->ref[0] - 0.0015) < 1e-12);
	assert_true(fabs(list[0]->ref[5] - 0.06385714285714286) < 1e-12);
}

static void
test_stats_benjamini_hochberg_in_place_and_rejects_bad_p(void **state)
{
	double p[] = {0.04, 0.01, 0.03, 0.02};
	const double bad[] = {0.5, 1.5}, neg[] = {-0.1}, nan_p[] = {NAN};
	double q[2] = {9.0, 9.0};

	(void)state;
	assert_int_equal(stats_benjamini_hochberg(p, p, 4), 0);
	for (size_t i = 0; i < 4; i++)
		assert_true(fabs(p[i] - 0.04) < 1e-15);
	assert_int_equal(stats_benjamini_hochberg(q, bad, 2), STATS_EINVAL);
	assert_int_equal(stats_benjamini_hochberg(q, neg, 1), STATS_EINVAL);
	assert_int_equal(stats_benjamini_hochberg(q, nan_p, 1), STATS_EINVAL);
	assert_int_equal(stats_benjamini_hochberg(NULL, bad, 1), STATS_EINVAL);
	assert_true(q[0] == 9.0 && q[1] == 9.0);
	assert_int_equal(stats_benjamini_hochberg(NULL, NULL, 0), 0);
}

/* ----------------------------------------------------------------------
 * Thread safety
 */

struct thread_job {
	const struct fixture *fx;
	int mismatches;
};

/* Recomputes every two-sample case and compares with a serial pass. */
static void *thread_run(void *arg)
{
	struct thread_job *job = arg;
	const struct fixture *fx = job->fx;

	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < fx->ncases; i++) {
			const struct ref_case *c = &fx->cases[i];
			struct stats_test t1, t2;
			double lo1, hi1, lo2, hi2;

			if (c->kind == REF_MWU) {
				stats_mann_whitney(&t1, c->a, c->na, c->b,
						   c->nb);
				stats_mann_whitney(&t2, c->a, c->na, c->b,
						   c->nb);
			} else if (c->kind == REF_KS && c->na < 5000) {
				stats_ks_2samp(&t1, c->a, c->na, c->b, c->nb);
				stats_ks_2samp(&t2, c->a, c->na, c->b, c->nb);
			} else if (c->kind == REF_BOOT) {
				stats_bootstrap_pct_ci(&lo1, &hi1, c->a, c->na,
						       c->b, c->nb, 0.9, 500,
						       round);
				stats_bootstrap_pct_ci(&lo2, &hi2, c->a, c->na,
						       c->b, c->nb, 0.9, 500,
						       round);
				job->mismatches += lo1 != lo2 || hi1 != hi2;
				continue;
			} else {
				continue;
			}
			job->mismatches += t1.statistic != t2.statistic ||
					   t1.p_value != t2.p_value;
		}
	return NULL;
}

static void
test_stats_results_are_stable_under_concurrent_threads(void **state)
{
	struct thread_job jobs[4];
	pthread_t threads[4];

	for (size_t i = 0; i < 4; i++) {
		jobs[i].fx = *state;
		jobs[i].mismatches = 0;
		assert_int_equal(
		    pthread_create(&threads[i], NULL, thread_run, &jobs[i]),
		    0);
	}
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(threads[i], NULL), 0);
		assert_int_equal(jobs[i].mismatches, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stats_descriptive_fixed_samples_match_numpy),
	    cmocka_unit_test(
		test_stats_descriptive_random_samples_match_numpy),
	    cmocka_unit_test(test_stats_median_mad_trim_leave_input_untouched),
	    cmocka_unit_test(
		test_stats_identical_values_give_exact_mean_zero_spread),
	    cmocka_unit_test(test_stats_descriptive_invalid_input_gives_nan),
	    cmocka_unit_test(test_stats_welch_t_tiny_samples_match_scipy),
	    cmocka_unit_test(test_stats_t_known_sd_matches_scipy),
	    cmocka_unit_test(test_stats_t_known_sd_invalid_input),
	    cmocka_unit_test(
		test_stats_welch_t_mixed_sizes_and_ties_match_scipy),
	    cmocka_unit_test(
		test_stats_welch_t_large_samples_and_far_tail_match_scipy),
	    cmocka_unit_test(
		test_stats_welch_t_one_constant_sample_matches_scipy),
	    cmocka_unit_test(
		test_stats_welch_t_both_constant_unequal_means_p_zero),
	    cmocka_unit_test(
		test_stats_welch_t_both_constant_equal_means_p_one),
	    cmocka_unit_test(
		test_stats_welch_t_invalid_input_leaves_out_untouched),
	    cmocka_unit_test(
		test_stats_welch_t_one_sided_matches_scipy_greater),
	    cmocka_unit_test(
		test_stats_mann_whitney_exact_small_samples_match_scipy),
	    cmocka_unit_test(
		test_stats_mann_whitney_ties_use_normal_approx_like_scipy),
	    cmocka_unit_test(
		test_stats_mann_whitney_large_samples_match_scipy),
	    cmocka_unit_test(
		test_stats_mann_whitney_identical_values_give_p_one),
	    cmocka_unit_test(
		test_stats_mann_whitney_invalid_input_leaves_out_untouched),
	    cmocka_unit_test(
		test_stats_wilcoxon_exact_small_samples_match_scipy),
	    cmocka_unit_test(
		test_stats_wilcoxon_large_samples_match_scipy_approx),
	    cmocka_unit_test(
		test_stats_wilcoxon_ties_use_corrected_normal_approx),
	    cmocka_unit_test(
		test_stats_wilcoxon_zeros_are_dropped_as_scipy_wilcox),
	    cmocka_unit_test(test_stats_wilcoxon_all_zero_and_invalid_input),
	    cmocka_unit_test(
		test_stats_ks_2samp_exact_equal_sizes_match_scipy),
	    cmocka_unit_test(
		test_stats_ks_2samp_exact_unequal_sizes_match_scipy),
	    cmocka_unit_test(
		test_stats_ks_2samp_ties_and_constant_samples_match_scipy),
	    cmocka_unit_test(
		test_stats_ks_2samp_asymptotic_above_10000_matches_scipy),
	    cmocka_unit_test(
		test_stats_ks_2samp_invalid_input_leaves_out_untouched),
	    cmocka_unit_test(
		test_stats_tost_matches_two_scipy_one_sided_tests),
	    cmocka_unit_test(
		test_stats_tost_small_p_when_equal_large_p_when_shifted),
	    cmocka_unit_test(
		test_stats_tost_invalid_input_leaves_out_untouched),
	    cmocka_unit_test(test_stats_bootstrap_is_deterministic_for_a_seed),
	    cmocka_unit_test(
		test_stats_bootstrap_contains_true_change_when_separated),
	    cmocka_unit_test(
		test_stats_bootstrap_agrees_with_large_numpy_bootstrap),
	    cmocka_unit_test(
		test_stats_bootstrap_invalid_input_leaves_out_untouched),
	    cmocka_unit_test(
		test_stats_benjamini_hochberg_matches_scipy_algorithm),
	    cmocka_unit_test(
		test_stats_benjamini_hochberg_in_place_and_rejects_bad_p),
	    cmocka_unit_test(
		test_stats_results_are_stable_under_concurrent_threads),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

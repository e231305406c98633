#include "noise.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#define LOGNORMAL_SIGMA 0.5
#define OUTLIER_PROBABILITY 0.05
#define OUTLIER_SCALE 5.0
#define DRIFT_AMPLITUDE 0.5
#define DRIFT_PERIOD 200.0
#define QUANTUM 0.5
/* modes: the slow mode's factor, its share of the runs in the long run
 * and the mean length of a slow stretch, in runs. */
#define MODES_SLOWDOWN 1.5
#define MODES_SLOW_SHARE 0.3
#define MODES_SLOW_STRETCH 10.0

static const char *const noise_names[] = {
    "gaussian", "lognormal", "bimodal",	  "outliers",
    "drift",	"t3",	     "quantized", "modes",
};

int noise_parse(enum noise_model *out, const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(noise_names) / sizeof(noise_names[0]); i++) {
		if (strcmp(name, noise_names[i]) == 0) {
			*out = (enum noise_model)i;
			return 0;
		}
	}
	return -1;
}

const char *noise_name(enum noise_model model)
{
	return noise_names[model];
}

/* Mean and variance of the outlier slowdowns |N(0, 5)| B, B ~ Bern(0.05),
 * in units of sd. */
static double outlier_mean(void)
{
	return OUTLIER_PROBABILITY * OUTLIER_SCALE * sqrt(2.0 / M_PI);
}

static double outlier_variance(void)
{
	double m = outlier_mean();

	return OUTLIER_PROBABILITY * OUTLIER_SCALE * OUTLIER_SCALE - m * m;
}

/* The modes model's sd in units of sd, at the base level of 100 sd (higher
 * is better: the slow mode divides by MODES_SLOWDOWN). */
static double modes_sd(void)
{
	double p = MODES_SLOW_SHARE, f = 1.0 / MODES_SLOWDOWN;
	double gap = 100.0 * (1.0 - f);

	return sqrt((1 - p) + p * f * f + p * (1 - p) * gap * gap);
}

/* The mode of the next run: the first from the long-run share, then a
 * switch with the probability that gives slow stretches of
 * MODES_SLOW_STRETCH runs on average and MODES_SLOW_SHARE in all. */
static bool modes_next(struct noise *noise)
{
	double leave_slow = 1.0 / MODES_SLOW_STRETCH;
	double enter_slow =
	    leave_slow * MODES_SLOW_SHARE / (1.0 - MODES_SLOW_SHARE);
	double u = gsl_rng_uniform(noise->rng);

	if (noise->runs == 0)
		noise->slow = u < MODES_SLOW_SHARE;
	else if (noise->slow)
		noise->slow = u >= leave_slow;
	else
		noise->slow = u < enter_slow;
	return noise->slow;
}

double noise_total_sd(enum noise_model model, double sd)
{
	switch (model) {
	case NOISE_OUTLIERS:
		return sd * sqrt(1.0 + outlier_variance());
	case NOISE_QUANTIZED:
		return sd * sqrt(1.0 + QUANTUM * QUANTUM / 12.0);
	case NOISE_MODES:
		return sd * modes_sd();
	default:
		return sd;
	}
}

static double noise_lognormal(gsl_rng *rng)
{
	double s2 = LOGNORMAL_SIGMA * LOGNORMAL_SIGMA;
	double mean = exp(s2 / 2);
	double sd = sqrt((exp(s2) - 1) * exp(s2));

	return (gsl_ran_lognormal(rng, 0, LOGNORMAL_SIGMA) - mean) / sd;
}

static double noise_bimodal(gsl_rng *rng)
{
	bool upper = gsl_rng_uniform(rng) < 0.25;
	double x = gsl_ran_gaussian(rng, 0.5) + (upper ? 3.0 : 0.0);

	/* mixture mean 0.75, variance 0.25 + 0.25 * 0.75 * 9 */
	return (x - 0.75) / sqrt(0.25 + 0.25 * 0.75 * 9.0);
}

double noise_sample(struct noise *noise, double level)
{
	gsl_rng *rng = noise->rng;
	double sd = noise->sd, worse = noise->higher_is_better ? -1 : 1;
	double t = (double)noise->runs, v, drift_var;
	bool slow;

	if (noise->model == NOISE_MODES) {
		slow = modes_next(noise);
		noise->runs++;
		v = level + gsl_ran_gaussian(rng, sd);
		if (!slow)
			return v;
		return noise->higher_is_better ? v / MODES_SLOWDOWN
					       : v * MODES_SLOWDOWN;
	}
	noise->runs++;
	switch (noise->model) {
	case NOISE_LOGNORMAL:
		return level + sd * noise_lognormal(rng);
	case NOISE_BIMODAL:
		return level + sd * noise_bimodal(rng);
	case NOISE_OUTLIERS:
		v = gsl_ran_gaussian(rng, 1.0) - worse * outlier_mean();
		if (gsl_rng_uniform(rng) < OUTLIER_PROBABILITY)
			v +=
			    worse * fabs(gsl_ran_gaussian(rng, OUTLIER_SCALE));
		return level + sd * v;
	case NOISE_DRIFT:
		drift_var = DRIFT_AMPLITUDE * DRIFT_AMPLITUDE / 2;
		v = DRIFT_AMPLITUDE *
			sin(2 * M_PI * t / DRIFT_PERIOD + noise->drift_phase) +
		    gsl_ran_gaussian(rng, sqrt(1.0 - drift_var));
		return level + sd * v;
	case NOISE_T3:
		return level + sd * gsl_ran_tdist(rng, 3.0) / sqrt(3.0);
	case NOISE_QUANTIZED:
		v = level + gsl_ran_gaussian(rng, sd);
		return QUANTUM * sd * round(v / (QUANTUM * sd));
	case NOISE_GAUSSIAN:
	default:
		return level + gsl_ran_gaussian(rng, sd);
	}
}

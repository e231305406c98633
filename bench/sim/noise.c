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

static const char *const noise_names[] = {
    "gaussian", "lognormal", "bimodal", "outliers", "drift", "t3", "quantized",
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

double noise_total_sd(enum noise_model model, double sd)
{
	switch (model) {
	case NOISE_OUTLIERS:
		return sd * sqrt(1.0 + outlier_variance());
	case NOISE_QUANTIZED:
		return sd * sqrt(1.0 + QUANTUM * QUANTUM / 12.0);
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
	double t = (double)noise->runs++, v, drift_var;

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

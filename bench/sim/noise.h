/*
 * noise: the run-to-run noise models of statbisect-sim.
 *
 * A run of a commit measures the commit's true level plus one draw of the
 * noise.  Every model has mean 0 and standard deviation `sd` (the
 * simulator uses sd = 10, 1% of the base level 1000), except where said:
 *
 *  gaussian   N(0, sd).
 *  lognormal  a lognormal with log-sd 0.5, centred and scaled to sd: a
 *             long upper tail.
 *  bimodal    as the contract check's BENCH_PY: 75% of runs from a lower
 *             mode N(0, 0.5) and 25% from an upper mode N(3, 0.5) (the
 *             modes 3 units, i.e. six mode-sds, apart), centred and
 *             scaled to sd.
 *  outliers   N(0, sd), plus with probability 0.05 a slowdown |N(0, 5 sd)|
 *             in the KPI's worse direction, centred.  The slowdowns alone
 *             have variance 1.21 sd^2, so the total sd is 1.487 sd, larger
 *             than sd: the effect stays in units of the Gaussian part.
 *  drift      the machine's level drifts: 0.5 sd * sin(2 pi t / 200 +
 *             phase), t the trial's run counter (every run of every
 *             commit, in the order they are made), the phase random per
 *             trial; plus N(0, 0.935 sd) so that the total sd over a
 *             period is sd.
 *  t3         Student's t with 3 degrees of freedom, scaled to sd.
 *  quantized  the measured value (level plus N(0, sd)) rounded to a
 *             multiple of 0.5 sd; the rounding adds sd^2 / 48 of
 *             variance.
 *  modes      a machine whose CPUs switch between a fast and a slow mode:
 *             in the fast mode a run measures level plus N(0, sd); in
 *             the slow mode the benchmark takes 1.5 times as long (a
 *             lower-is-better KPI is multiplied by 1.5, a higher-is-better
 *             one divided by it, noise included).  The mode is a
 *             two-state Markov chain over the trial's run counter t (as
 *             drift): 30% of the runs in the slow mode in the long run,
 *             in stretches of 10 runs on average (fast stretches: 23.3),
 *             the first run's mode drawn from that 30%.  Not mean 0: the
 *             slow runs are 50% of the level away, so the total sd at the
 *             base level 1000 (100 sd) is about 15 sd; the effect stays
 *             in units of the fast mode's sd.
 */
#ifndef STATBISECT_SIM_NOISE_H
#define STATBISECT_SIM_NOISE_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>

enum noise_model {
	NOISE_GAUSSIAN = 0,
	NOISE_LOGNORMAL,
	NOISE_BIMODAL,
	NOISE_OUTLIERS,
	NOISE_DRIFT,
	NOISE_T3,
	NOISE_QUANTIZED,
	NOISE_MODES,
};

struct noise {
	enum noise_model model;
	double sd;
	bool higher_is_better; /* a slowdown lowers the KPI */
	double drift_phase;    /* radians */
	bool slow;	       /* modes: the machine is in its slow mode */
	unsigned long runs;    /* runs drawn so far in the trial */
	gsl_rng *rng;	       /* borrowed */
};

/* The model named `name` into *out; -1 when there is none. */
int noise_parse(enum noise_model *out, const char *name);
const char *noise_name(enum noise_model model);

/* The standard deviation of the model's draws (sd, or more, see above). */
double noise_total_sd(enum noise_model model, double sd);

/*
 * One run of a commit whose true level is `level`: draws from noise->rng
 * and advances noise->runs.
 */
double noise_sample(struct noise *noise, double level);

#endif

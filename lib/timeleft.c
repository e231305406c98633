#include "timeleft.h"

#include <math.h>
#include <stdio.h>

double timeleft_estimate(const struct timeleft_input *in)
{
	double per_run, per_step;

	if (in == NULL || in->runs_done == 0 || !(in->elapsed_s > 0) ||
	    !isfinite(in->elapsed_s))
		return NAN;
	per_run = in->elapsed_s / (double)in->runs_done;
	per_step = in->commits_tested > 0
		       ? (double)in->search_runs / (double)in->commits_tested
		       : 0;
	if (per_step < (double)in->step_runs_min)
		per_step = (double)in->step_runs_min;
	return per_run *
	       ((double)in->runs_pending + (double)in->steps_left * per_step);
}

char *timeleft_format(char *buf, size_t size, double seconds)
{
	unsigned long long s;

	if (isnan(seconds)) {
		snprintf(buf, size, "?");
		return buf;
	}
	/* Past a century the count means nothing more. */
	s = seconds <= 0       ? 0
	    : seconds >= 3.2e9 ? 3200000000ULL
			       : (unsigned long long)seconds;
	if (s < 60)
		snprintf(buf, size, "%llu s", s);
	else if (s < 3600)
		snprintf(buf, size, "%llu min %llu s", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, size, "%llu h %llu min", s / 3600,
			 s % 3600 / 60);
	else
		snprintf(buf, size, "%llu d %llu h", s / 86400,
			 s % 86400 / 3600);
	return buf;
}

-- The 95% confidence interval of a finished job's change_pct (percent;
-- NULL when it has no finite bounds).  lib/estimate.h computes both.
ALTER TABLE jobs ADD COLUMN change_ci95_lo double precision;
ALTER TABLE jobs ADD COLUMN change_ci95_hi double precision;

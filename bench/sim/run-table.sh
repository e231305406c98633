#!/usr/bin/env bash
# Regenerates the "Results" section of docs/BISECTION.md: runs
# statbisect-sim for every strategy in every scenario, JOBS at a time, and
# prints the section as Markdown on standard output.  Each run's JSON is
# kept in $OUT/<scenario>.json.
#
#   bench/sim/run-table.sh > /tmp/results.md
#
# Environment: SIM (default bin/statbisect-sim), BENCH (the decision
# benchmark, default build/bench/bench_decision, run when it is there), OUT
# (build/sim-results), TRIALS (1000), COMMITS (1024), SEED (1), JOBS (2);
# RENDER_ONLY=1 prints the section again from the JSON in $OUT without
# running anything, and NOTE is added to the line that says how it was
# measured.  Every scenario uses the same TRIALS; the whole table takes
# five to ten minutes on two cores.  The section's prose is the Markdown
# below; the tables come from the runs.
set -euo pipefail

cd "$(dirname "$0")/../.."
SIM=${SIM:-bin/statbisect-sim}
BENCH=${BENCH:-build/bench/bench_decision}
OUT=${OUT:-build/sim-results}
TRIALS=${TRIALS:-1000}
COMMITS=${COMMITS:-1024}
SEED=${SEED:-1}
JOBS=${JOBS:-2}

strategies="engine oracle pinpoint lkp git-bisect"
noises="gaussian lognormal bimodal outliers drift t3 quantized modes"

# The modes cells run MODES_TRIALS trials (100) with runs_max
# MODES_RUNS_MAX (200): at runs_max 1000 one engine trial of 1024
# commits takes minutes, and the table would take hours.
MODES_TRIALS=${MODES_TRIALS:-100}
MODES_RUNS_MAX=${MODES_RUNS_MAX:-200}
modes_limits() {
	if [ "$1" = modes ]; then
		echo " --trials $MODES_TRIALS --runs-max $MODES_RUNS_MAX"
	fi
}

# One line per run: name|options.  The slow ones first, so that the
# workers finish together.
configs() {
	local e n s

	for e in 0.5 1; do
		for s in $strategies; do
			echo "gaussian-e$e-$s|--strategy $s --noise gaussian --effect $e"
		done
	done
	for n in $noises; do
		for s in $strategies; do
			echo "$n-e2-$s|--strategy $s --noise $n --effect 2$(modes_limits $n)"
			echo "$n-e0-$s|--strategy $s --noise $n --effect 0$(modes_limits $n)"
		done
	done
	for s in $strategies; do
		echo "merges-$s|--strategy $s --topology merges --effect 2"
		echo "changes2-$s|--strategy $s --changes 2 --effect 2"
		echo "skip0.1-$s|--strategy $s --skip-rate 0.1 --effect 2"
	done
	# A regression and a later improvement (the engine alone: the
	# baselines assume one direction): of the same size, cancelling at
	# the endpoints, and 1.5 times as large.
	echo "opposite1-engine|--strategy engine --changes 2 --opposite --effect 2"
	echo "opposite1.5-engine|--strategy engine --changes 2 --opposite --opposite-ratio 1.5 --effect 2"
}

run_one() {
	local name=${1%%|*} args=${1#*|}

	# shellcheck disable=SC2086
	# (exit 3: a verdict of change without a confirmed culprit; the
	# JSON counts them and the table's check fails)
	"$SIM" --commits "$COMMITS" --trials "$TRIALS" --seed "$SEED" --json \
		$args > "$OUT/$name.json.part" || [ $? -eq 3 ]
	mv "$OUT/$name.json.part" "$OUT/$name.json"
	echo "run-table: $name done" >&2
}

run_all() {
	local started

	if [ ! -x "$SIM" ]; then
		echo "run-table: $SIM not found; run make (or set SIM)" >&2
		exit 1
	fi
	rm -f "$OUT"/*.json "$OUT"/configs "$OUT"/elapsed "$OUT"/revision \
		"$OUT"/decision
	configs > "$OUT/configs"
	export -f run_one
	export SIM OUT TRIALS COMMITS SEED
	started=$(date +%s)
	# shellcheck disable=SC2016 # $1 is for the inner shell
	tr '\n' '\0' < "$OUT/configs" |
		xargs -0 -P "$JOBS" -I{} bash -c 'run_one "$1"' _ {}
	echo $(($(date +%s) - started)) > "$OUT/elapsed"
	git describe --always --dirty > "$OUT/revision" 2>/dev/null ||
		echo unknown > "$OUT/revision"
	if [ -x "$BENCH" ]; then
		"$BENCH" > "$OUT/decision" || true
	fi
}

mkdir -p "$OUT"
if [ -z "${RENDER_ONLY:-}" ]; then
	run_all
fi
elapsed=$(cat "$OUT/elapsed")

revision=$(cat "$OUT/revision" 2>/dev/null || echo unknown)
decision=$(cat "$OUT/decision" 2>/dev/null || true)

cat <<'MD'
## Results

How the engine compares with the published tools on simulated ranges:
`bin/statbisect-sim` (source in `bench/sim/`) runs the production engine
(`lib/bisect.h`) and the baselines on the same simulated ranges, and
`bench/sim/run-table.sh` regenerates this whole section.

### The simulation

- **Range**: `--commits N` commits after `good`, so N + 1 candidates in
  topological order, index 0 `good` and N `bad`.  `linear`: commit i has
  the parent i - 1.  `merges`: a mainline with side branches; at each step
  a branch opens with probability 0.15, forks from one of the last ten
  mainline commits, gets 1-8 commits made interleaved with mainline
  commits, and is merged back later by a mainline merge commit whose first
  parent is the mainline head and second the branch tip (about 16% of the
  commits are merges).  `bad` is the last mainline commit or merge.
- **Levels**: base 1000, noise sd 10 (1% of the level).  `--changes K`
  distinct change commits drawn uniformly from 1..N (never `good`) each
  move the KPI by `--effect E` sd in its worse direction (down for a
  higher-is-better KPI), cumulatively: the true level of a commit counts
  the change commits among its ancestors or itself on the DAG.  Effect 0
  plants no change.  With `--opposite` (the engine only) the changes
  alternate in direction, the oldest a regression, each
  `--opposite-ratio Q` times the one before (Q 1: two changes cancel at
  the endpoints).
- **Noise** (mean 0, sd 10 unless said): `gaussian`; `lognormal` (log-sd
  0.5, centred and scaled: a long upper tail); `bimodal` (as the contract
  check's BENCH_PY: 25% of runs in an upper mode 3 units above the lower,
  each mode with sd 0.5, scaled to sd 10); `outliers` (Gaussian plus, with
  probability 0.05, a slowdown of |N(0, 50)| in the worse direction,
  centred; the total sd is 14.9, larger than 10, and the effect stays in
  units of the Gaussian part); `drift` (the machine's level follows
  5 sin(2 pi t / 200 + phase), t counting every run of the trial in the
  order made, a random phase per trial, plus Gaussian noise of sd 9.35 so
  that the total is 10); `t3` (Student's t, 3 degrees of freedom, scaled
  to sd 10); `quantized` (Gaussian values rounded to multiples of 5);
  `modes` (a machine whose CPUs switch between a fast mode, Gaussian with
  sd 10, and a slow one in which the benchmark takes 1.5 times as long:
  30% of the runs in slow stretches of 10 runs on average, a two-state
  Markov chain over the trial's runs in the order made; the effect stays
  in units of the fast mode's sd).  The modes cells run 100 trials with
  `runs_max` 200: at 1000 one trial takes minutes.
- **Failed builds**: with `--skip-rate R` each commit but the endpoints
  fails to build with probability R; no run of it can be made.  An engine
  request for one is a bug, counted as `bad_requests`.
- **Determinism**: a trial's range, changes, failed builds and drift phase
  come from one generator and its runs from another, both seeded from
  (`--seed`, trial number), so the output depends only on the options and
  every strategy bisects the same ranges.
- **Scores**: a trial is accurate when the culprits named are exactly the
  change commits (a culprit hidden by failed builds matches when its
  ambiguous set contains the change), or, with effect 0, when the verdict
  is no change.  `false_alarm`: a culprit named with effect 0;
  `inconclusive`: the engine's verdict (the baselines never give it);
  `both_found`: both of two changes named; `unbacked_verdicts`: a
  regression or improvement verdict without a confirmed culprit (an
  engine bug; the simulator exits 3); runs: every benchmark run of
  the trial (endpoints, steps, confirmation), `runs_p95` their 95th
  percentile over trials and `runs_max_seen` the most search runs one
  commit got.

### The strategies

All of them bisect with git's best split on the DAG (the candidate whose
ancestors among the candidates come closest to half of them), written in
`bench/sim/dag.c` apart from the engine.  The baselines pass over a failed
build for the best buildable candidate (git picks one near the best split
with a pseudo-random offset) and, when only failed builds are left, name
the first bad commit with the rest as its ambiguous set, as `git bisect
skip` does.

- **engine**: `bisect_step()` in a loop with `min_change_pct` 0.25 (a
  quarter of an sd: a testcase that cares about changes of half an sd must
  set its threshold below them, or a change exactly at the threshold is as
  likely called "the same" as "different"), `runs_max` 1000 and
  `confirm_max` as high (the engine sizes each confirmation by the change
  the search found: at 0.5 sd that takes about a hundred fresh runs a
  side), fed the runs it asks for; runs asked for with
  `interleave` are made alternately (A B A B), so the drift model sees the
  order a worker would run them in.
- **oracle**: told the true levels and the noise's sd, it makes no
  endpoint runs and classifies each tested commit with a Gaussian
  sequential probability ratio test between the levels its segment can
  have (the two ends' levels with one change), per-step error 0.001, one
  run at a time; it searches every segment whose ends differ, so it finds
  every change.  A lower bound on the runs no real tool can reach; its
  test assumes Gaussian noise, so with heavy tails (lognormal, outliers,
  t3) it errs more often than the tools that test ranks.
- **pinpoint**: Chromium's Pinpoint as its Go version runs it.  Both
  endpoints get 10 runs; two commits compare with p = min(Mann-Whitney,
  Kolmogorov-Smirnov): different when p <= 0.01 (the Python version's low
  threshold; the Go version uses 0.05), the same when p is above the high
  threshold, unknown in between, which brings both to the next step of the
  ladder 10, 20, 40, 80, 160 runs (unknown at 160 is taken as the same).
  A mean difference below a tenth of the expected change, or one in the
  improvement direction, is the same.  Different bisects: the split commit
  gets as many runs as the older commit has (Go's `nextRunSize`; starting
  it at 10 instead saves 18% of the runs at 2 sd and 29% at 1 sd but
  loses 2.5 and 25 points of accuracy, over 200 trials), and both halves
  are compared, so every change is searched.  The expected change is the
  true one (the alert's); with effect 0 it is min_change_pct.  The high
  threshold depends on the expected change in IQRs of the pooled runs and
  on the sample size; Pinpoint's table is the 99th percentile of the
  running two-sided U-test p-value (normal approximation with continuity
  correction) between two normal samples that many IQRs apart, for
  0.3..4.0 IQR.  The simulator
  regenerates it by that method (20,000 simulated pairs per row instead of
  a million, sample sizes up to 160; `statbisect-sim --pinpoint-table`
  prints it); it agrees with the published table to within about 0.01
  (for instance 0.5708 at 1.0 IQR and 10 runs, 0.2101 at 2.0 IQR and 5
  runs, exactly as published).
- **lkp**: the kernel test robot: 5 runs per commit, endpoints included.
  A commit differs from `good` when the robot's rules for a changed
  metric pass: the new minimum above the base median and the new median
  above the base maximum, or the mirror image, and the medians' ratio
  beyond 1.01.  No change when the endpoints do
  not differ; otherwise a commit is bad-like when it differs from `good`
  in the endpoints' direction.  The 1.01 ratio is why it seldom reports a
  change of 1% or less.
- **git-bisect**: `git bisect run` with a script that runs the benchmark
  once and compares with a threshold halfway between one run of each
  endpoint.  It always names a commit, so every no-change trial is a false
  alarm.

MD
OUT="$OUT" SIM="$SIM" TRIALS="$TRIALS" COMMITS="$COMMITS" SEED="$SEED" \
JOBS="$JOBS" ELAPSED="$elapsed" REVISION="$revision" DECISION="$decision" \
STRATEGIES="$strategies" NOISES="$noises" /usr/bin/python3 - <<'EOF'
import json
import os
import textwrap

out = os.environ["OUT"]
strategies = os.environ["STRATEGIES"].split()
noises = os.environ["NOISES"].split()
configs = [line.rstrip("\n").split("|", 1)
           for line in open(os.path.join(out, "configs")) if line.strip()]
res = {name: json.load(open(os.path.join(out, name + ".json")))
       for name, _ in configs}


def para(text):
    print(textwrap.fill(text, 79, break_on_hyphens=False))
    print()


def cell(name, extra=None):
    r = res[name]
    text = "%.3f · %.0f (%d)" % (r["accuracy"], r["runs_mean"], r["runs_p95"])
    if extra and extra(r):
        text += " " + extra(r)
    return text


def matrix(title, rows, name_of, extra=None, note=None):
    print("### " + title)
    print()
    if note:
        para(note)
    print("| | " + " | ".join(strategies) + " |")
    print("| --- |" + " --- |" * len(strategies))
    for label, key in rows:
        print("| %s | " % label +
              " | ".join(cell(name_of(key, s), extra) for s in strategies) +
              " |")
    print()


print("### Measurements")
print()
para("Measured with `bench/sim/run-table.sh` (tree %s, %s trials per cell,"
     " %s commits after `good`, seed %s, %s jobs in parallel, %d s in all%s)."
     " Each cell is `accuracy · mean runs (95th percentile of runs)`;"
     " runs count every benchmark run of the trial: endpoints, steps and"
     " confirmation.  Unless a table says otherwise the range is linear,"
     " with one change of 2 sd, min_change_pct 0.25 (a quarter of an sd),"
     " runs_max and confirm_max"
     " 1000 and a higher-is-better KPI."
     % (os.environ["REVISION"], os.environ["TRIALS"], os.environ["COMMITS"],
        os.environ["SEED"], os.environ["JOBS"], int(os.environ["ELAPSED"]),
        os.environ.get("NOTE", "")))
matrix("One change of 2 sd, by noise model",
       [(n, n) for n in noises], lambda n, s: "%s-e2-%s" % (n, s))
matrix("Gaussian noise, by size of the change",
       [("2 sd", "2"), ("1 sd", "1"), ("0.5 sd", "0.5")],
       lambda e, s: "gaussian-e%s-%s" % (e, s))
print("### No change (effect 0): false alarms")
print()
para("Each cell is `false alarms · mean runs`; accuracy here is the share of"
     " no-change verdicts, and the engine's inconclusive share is in the"
     " last column.")
print("| | " + " | ".join(strategies) + " | engine inconclusive |")
print("| --- |" + " --- |" * (len(strategies) + 1))
for n in noises:
    cells = []
    for s in strategies:
        r = res["%s-e0-%s" % (n, s)]
        cells.append("%.3f · %.0f" % (r["false_alarm"], r["runs_mean"]))
    print("| %s | %s | %.3f |" % (n, " | ".join(cells),
                                   res["%s-e0-engine" % n]["inconclusive"]))
print()
matrix("Harder ranges (Gaussian noise, change of 2 sd)",
       [("merges", "merges"), ("two changes", "changes2"),
        ("skip-rate 0.1", "skip0.1")],
       lambda k, s: "%s-%s" % (k, s),
       note="With two changes a trial is accurate when exactly both change"
            " commits are named; `both` is the share of trials that named"
            " both (and maybe more).  With failed builds `skipped` counts"
            " trials that named a failed build as the sole culprit.",
       extra=lambda r: ("both %.3f" % r["both_found"]) if "both_found" in r
       else ("skipped %d" % r["skipped_culprit"]) if r["skip_rate"] > 0
       else "")

print("### Where the engine's runs go")
print()
para("Mean runs per trial by purpose: the endpoints' search runs (with the"
     " runs a level got to be firm enough to classify against), the other"
     " commits' search runs, and fresh confirmation runs (culprits against"
     " their parents, and the follow-ups' checks for a second change).")
print("| range | endpoints | steps | confirmation | all |")
print("| --- | --- | --- | --- | --- |")
for label, key in (("Gaussian 2 sd", "gaussian-e2"),
                   ("Gaussian 1 sd", "gaussian-e1"),
                   ("Gaussian 0.5 sd", "gaussian-e0.5"),
                   ("drift 2 sd", "drift-e2"), ("merges", "merges"),
                   ("two changes", "changes2"),
                   ("opposite, cancelling", "opposite1"),
                   ("no change (probes)", "gaussian-e0")):
    r = res[key + "-engine"]
    print("| %s | %.1f | %.1f | %.1f | %.1f |" % (
        label, r["runs_endpoints_mean"], r["runs_steps_mean"],
        r["runs_confirm_mean"], r["runs_mean"]))
print()

eng = lambda k: res[k + "-engine"]
checks = []


def check(what, target, measured, ok):
    checks.append((what, target, measured, ok))


g = eng("gaussian-e2")
o = res["gaussian-e2-oracle"]
p = res["gaussian-e2-pinpoint"]
check("Gaussian 2 sd: accuracy", ">= 0.99", "%.3f" % g["accuracy"],
      g["accuracy"] >= 0.99)
check("Gaussian 2 sd: runs vs oracle", "<= 2x",
      "%.0f / %.0f = %.2fx" % (g["runs_mean"], o["runs_mean"],
                               g["runs_mean"] / o["runs_mean"]),
      g["runs_mean"] <= 2 * o["runs_mean"])
check("Gaussian 2 sd: runs vs pinpoint", "<= 0.6x",
      "%.0f / %.0f = %.2fx" % (g["runs_mean"], p["runs_mean"],
                               g["runs_mean"] / p["runs_mean"]),
      g["runs_mean"] <= 0.6 * p["runs_mean"])
for e, target in (("1", 0.99), ("0.5", 0.95)):
    r = eng("gaussian-e" + e)
    check("Gaussian %s sd: accuracy" % e, ">= %.2f" % target,
          "%.3f" % r["accuracy"], r["accuracy"] >= target)
for n in noises:
    r = eng("%s-e0" % n)
    check("%s no change: false alarms" % n, "<= 0.01",
          "%.3f" % r["false_alarm"], r["false_alarm"] <= 0.01)
for n in noises[1:]:
    r = eng("%s-e2" % n)
    check("%s 2 sd: accuracy" % n, ">= 0.97", "%.3f" % r["accuracy"],
          r["accuracy"] >= 0.97)
r = eng("merges")
check("merges 2 sd: accuracy", ">= 0.99", "%.3f" % r["accuracy"],
      r["accuracy"] >= 0.99)
r = eng("changes2")
check("two changes: both found", ">= 0.95", "%.3f" % r["both_found"],
      r["both_found"] >= 0.95)
for key, what in (("opposite1", "cancelling at the endpoints"),
                  ("opposite1.5", "improvement 1.5 times the regression")):
    r = eng(key)
    check("opposite changes, %s: both found" % what, ">= 0.95",
          "%.3f" % r["both_found"], r["both_found"] >= 0.95)
unbacked = sum(res[name].get("unbacked_verdicts", 0)
               for name, _ in configs if name.endswith("-engine"))
check("engine: regression or improvement without a confirmed culprit,"
      " every cell", "0", "%d" % unbacked, unbacked == 0)
r = eng("skip0.1")
check("skip-rate 0.1: accuracy", ">= 0.98", "%.3f" % r["accuracy"],
      r["accuracy"] >= 0.98)
check("skip-rate 0.1: failed build as sole culprit", "0",
      "%d" % r["skipped_culprit"], r["skipped_culprit"] == 0)
decision = dict(line.split(": ", 1) for line in
                os.environ.get("DECISION", "").split("\n") if ": " in line)
for key, what in (("", "one decision, 10,000 commits with merges"),
                  ("final_", "the verdict's decision, same range")):
    if "decision_10000_commits_%sus" % key in decision:
        us = float(decision["decision_10000_commits_%sus" % key])
        p95 = float(decision["decision_10000_commits_%sp95_us" % key])
        check(what + " (median, p95)", "< 1000 us",
              "%.0f us, %.0f us" % (us, p95), us < 1000)
bugs = sum(res[name].get("bad_requests", 0) + res[name].get("failed", 0) +
           res[name].get("over_runs_max", 0)
           for name, _ in configs if name.endswith("-engine"))
check("engine: requests for failed builds or beyond runs_max, failed trials",
      "0", "%d" % bugs, bugs == 0)

print("### The engine against the acceptance targets (issue 3)")
print()

print("| check | target | measured | |")
print("| --- | --- | --- | --- |")
for what, target, measured, ok in checks:
    print("| %s | %s | %s | %s |" % (what, target, measured,
                                     "pass" if ok else "**FAIL**"))
print()
failures = [(name, res[name]) for name, _ in configs
            if res[name].get("failed") or res[name].get("bad_requests")]
if failures:
    para("Engine trials that failed (an engine error or a request the"
         " simulator could not run), first failure of each run:")
    for name, r in failures:
        print("- `%s`: %d failed, %d requests for failed builds; %s" % (
            name, r.get("failed", 0), r.get("bad_requests", 0),
            r.get("first_failure", "")))
    print()
print("### Commands")
print()
print("Every cell is one run of")
print()
print("    bin/statbisect-sim --commits %s --trials %s --seed %s --json"
      " OPTIONS" % (os.environ["COMMITS"], os.environ["TRIALS"],
                    os.environ["SEED"]))
print()
print("with these OPTIONS (`bench/sim/run-table.sh` runs them all):")
print()
print("```")
for name, args in configs:
    print(args)
print("```")
EOF

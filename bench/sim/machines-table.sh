#!/usr/bin/env bash
# Prints the table of docs/PERFORMANCE.md's "Several machines per job
# (simulator)": the engine on 1, 2 and 4 machines (bench/sim/machines.c,
# lib/spread.c's k-section) over the standard scenarios, wall clock and
# accuracy, as Markdown; with 2 and 4 machines also when the k-section
# settled on one machine and the runs made by then.
#
#   bench/sim/machines-table.sh > /tmp/machines.md
#
# Environment: SIM (default bin/statbisect-sim), TRIALS (200), COMMITS
# (1024), SEED (1), OUT (build/sim-machines, one JSON per cell), JOBS (2),
# EXTRA (more options for every run, e.g. "--build-seconds 1200");
# RENDER_ONLY=1 prints the table again from the JSON in $OUT.
set -euo pipefail

cd "$(dirname "$0")/../.."
SIM=${SIM:-bin/statbisect-sim}
TRIALS=${TRIALS:-200}
COMMITS=${COMMITS:-1024}
SEED=${SEED:-1}
OUT=${OUT:-build/sim-machines}
JOBS=${JOBS:-2}
EXTRA=${EXTRA:-}
mkdir -p "$OUT"

scenarios() {
	echo "gaussian 2 sd|--noise gaussian --effect 2"
	echo "gaussian 1 sd|--noise gaussian --effect 1"
	echo "lognormal 2 sd|--noise lognormal --effect 2"
	echo "outliers 2 sd|--noise outliers --effect 2"
	echo "drift 2 sd|--noise drift --effect 2"
	echo "t3 2 sd|--noise t3 --effect 2"
	echo "merges 2 sd|--topology merges --effect 2"
	echo "two changes 2 sd|--changes 2 --effect 2"
	echo "skip-rate 0.1, 2 sd|--skip-rate 0.1 --effect 2"
	echo "gaussian no change|--noise gaussian --effect 0"
	echo "outliers no change|--noise outliers --effect 0"
}

cells() {
	local name opts k
	scenarios | while IFS='|' read -r name opts; do
		for k in 1 2 4; do
			echo "$name|$k|$opts"
		done
	done
}

file() { echo "$OUT/$(echo "$1" | tr -c 'a-z0-9\n' '-')-k$2.json"; }

export SIM TRIALS COMMITS SEED OUT EXTRA
[ -n "${RENDER_ONLY:-}" ] || cells | while IFS='|' read -r name k opts; do
	echo "$(file "$name" "$k")|$k|$opts"
done | xargs -P "$JOBS" -d '\n' -n 1 sh -c '
	f=${0%%|*}; rest=${0#*|}; k=${rest%%|*}; opts=${rest#*|}
	$SIM --commits $COMMITS --trials $TRIALS --seed $SEED --json \
		--strategy engine --machines $k $EXTRA $opts > "$f"'

echo "| range | machines | wall mean (s) | vs 1 machine | wall median (s) | vs 1 machine | wall p95 (s) | settled mean (s) | accuracy | wrong verdicts | inconclusive | runs | runs settled |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
scenarios | while IFS='|' read -r name opts; do
	one=$(file "$name" 1)
	for k in 1 2 4; do
		/usr/bin/python3 - "$(file "$name" "$k")" "$one" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
one = json.load(open(sys.argv[2]))
ratio = d["wall_seconds_mean"] / one["wall_seconds_mean"]
median = d["wall_seconds_median"] / one["wall_seconds_median"]
# one machine has no k-section: "-"
settled = d.get("settled_seconds_mean")
settled = "-" if settled is None else f"{settled:.0f}"
runs_settled = d.get("runs_settled_mean")
runs_settled = "-" if runs_settled is None else f"{runs_settled:.0f}"
print(f"| {sys.argv[3]} | {d['machines']} | {d['wall_seconds_mean']:.0f} "
      f"| {ratio:.2f}x | {d['wall_seconds_median']:.0f} | {median:.2f}x "
      f"| {d['wall_seconds_p95']:.0f} | {settled} | {d['accuracy']:.3f} "
      f"| {d['wrong_verdicts']:.3f} | {d['inconclusive']:.3f} "
      f"| {d['runs_mean']:.0f} | {runs_settled} |")
PY
	done
done

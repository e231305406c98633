#!/bin/bash
# Runs each fuzz target for SECONDS from its seed corpus
# (tests/fuzz/corpus/NAME) and its regression inputs (tests/fuzz/regress/NAME:
# inputs that once crashed a parser, kept so they never do again).  New
# inputs found go to a scratch directory, never into the tree; a crash is
# saved as build-fuzz/crash-NAME-* and fails the run.
# Usage: tests/fuzz/run.sh SECONDS build-fuzz/fuzz_NAME...
set -u
seconds=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
passed=0 failed=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for target in "$@"; do
	name=$(basename "$target")
	name=${name#fuzz_}
	mkdir -p "$scratch/$name"
	dirs=("$scratch/$name")
	for d in "$here/corpus/$name" "$here/regress/$name"; do
		[ -d "$d" ] && dirs+=("$d")
	done
	log="$scratch/$name.log"
	# Leaks are errors too (detect_leaks), and so is any sanitizer report.
	if ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		"$target" -max_total_time="$seconds" -timeout=10 \
		-rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$(dirname "$target")/crash-$name-" \
		"${dirs[@]}" >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		echo "PASS fuzz_$name: ${runs:-?} executions in ${seconds} s, no crash"
		passed=$((passed + 1))
	else
		echo "FAIL fuzz_$name:"
		tail -40 "$log"
		failed=$((failed + 1))
	fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

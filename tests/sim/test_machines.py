#!/usr/bin/python3
"""statbisect-sim on several machines (bench/sim/machines.c, --machines).

Checks, on a short run of the simulator:
 - one machine with the wall-clock options gives exactly the output of a
   plain run (the new fields aside): the multi-machine plumbing leaves the
   single-machine engine alone;
 - four machines (lib/spread.c's k-section, then the engine on the
   machine it settles on) find the culprit of every trial of a clear
   change, with no wrong verdict and no failed trial; the k-section
   settles sooner than one machine's verdict, the whole job is at most a
   quarter slower; the other machines' runs are counted;
 - at most 8 machines (lib/spread.h's SPREAD_MACHINES_MAX);
 - four machines give no false alarm on a range without a change.

    /usr/bin/python3 tests/sim/test_machines.py [path/to/statbisect-sim]
"""
import json
import subprocess
import sys

SIM = sys.argv[1] if len(sys.argv) > 1 else "bin/statbisect-sim"
CLOCK_FIELDS = {
    "machines", "machine_offset_pct", "run_seconds", "build_seconds",
    "wall_seconds_mean", "wall_seconds_median", "wall_seconds_p95",
    "wrong_verdicts",
}


def sim(*options):
    out = subprocess.run(
        [SIM, "--commits", "256", "--seed", "3", "--json", *options],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def test_one_machine_output_unchanged():
    for scenario in (["--effect", "2"], ["--noise", "drift", "--effect", "2"],
                     ["--changes", "2", "--effect", "2"]):
        plain = sim("--trials", "40", *scenario)
        clocked = sim("--trials", "40", "--machines", "1", *scenario)
        assert set(clocked) - set(plain) == CLOCK_FIELDS, scenario
        for key in CLOCK_FIELDS:
            del clocked[key]
        assert clocked == plain, scenario


def test_four_machines_settle_sooner_and_find_the_culprit():
    one = sim("--trials", "60", "--effect", "2", "--machines", "1")
    four = sim("--trials", "60", "--effect", "2", "--machines", "4")
    assert four["machines"] == 4
    assert four["accuracy"] == 1.0, four["accuracy"]
    assert four["wrong_verdicts"] == 0.0
    assert four["failed"] == 0 and four["unbacked_verdicts"] == 0
    # lib/spread.c's k-section settles on one machine sooner than one
    # machine alone gives its verdict (measured 0.75x) ...
    assert four["settled_seconds_mean"] < 0.85 * one["wall_seconds_mean"], (
        four["settled_seconds_mean"], one["wall_seconds_mean"])
    # ... and the engine on that machine, preferring the commits it
    # measured (bisect_options.prefer_measured), has little left to do:
    # the job is sooner as a whole (measured 0.78x; 1.09x without).
    assert four["wall_seconds_mean"] < 0.9 * one["wall_seconds_mean"], (
        four["wall_seconds_mean"], one["wall_seconds_mean"])
    assert four["runs_settled_mean"] < four["runs_mean"]
    # every machine measures its own endpoints: more runs in all
    assert four["runs_endpoints_mean"] > 2 * one["runs_endpoints_mean"]


def test_four_machines_no_false_alarm():
    four = sim("--trials", "20", "--effect", "0", "--machines", "4")
    assert four["false_alarm"] == 0.0
    assert four["accuracy"] == 1.0, four["accuracy"]


def test_at_most_spread_machines_max():
    run = subprocess.run([SIM, "--machines", "9"], capture_output=True,
                         text=True)
    assert run.returncode == 2
    assert "invalid value '9' for --machines" in run.stderr


def test_machines_only_for_the_engine():
    run = subprocess.run([SIM, "--strategy", "lkp", "--machines", "2"],
                         capture_output=True, text=True)
    assert run.returncode == 2
    assert "--machines above 1 is for --strategy engine" in run.stderr


if __name__ == "__main__":
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    for test in tests:
        test()
        print("ok", test.__name__)

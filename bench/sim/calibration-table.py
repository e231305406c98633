#!/usr/bin/env python3
"""Prints the calibration table of docs/BISECTION.md from the engine's
JSON of a run-table.sh run: per confidence bin and scenario,
`right / mean confidence (culprits)`, then the scenarios' accuracy.

    bench/sim/calibration-table.py [OUT]      # OUT: build/sim-results
"""
import json
import os
import sys

SCENARIOS = [
    ("gaussian-e2-engine", "Gaussian 2 sd"),
    ("gaussian-e1-engine", "Gaussian 1 sd"),
    ("outliers-e2-engine", "outliers 2 sd"),
    ("lognormal-e2-engine", "lognormal 2 sd"),
    ("drift-e2-engine", "drift 2 sd"),
    ("bimodal-e2-engine", "bimodal 2 sd"),
    ("t3-e2-engine", "t3 2 sd"),
    ("changes2-engine", "two changes"),
    ("merges-engine", "merges"),
    ("skip0.1-engine", "skip-rate 0.1"),
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/sim-results"
    runs = []
    for name, label in SCENARIOS:
        path = os.path.join(out, name + ".json")
        with open(path) as f:
            runs.append((label, json.load(f)))
    print("| confidence | " + " | ".join(l for l, _ in runs) + " |")
    print("| --- |" + " --- |" * len(runs))
    misses = []
    for b, first in enumerate(runs[0][1]["calibration"]):
        cells = []
        for label, r in runs:
            cell = r["calibration"][b]
            if cell["culprits"] == 0:
                cells.append("-")
                continue
            cells.append("%.3f / %.3f (%d)" % (
                cell["right"], cell["confidence_mean"], cell["culprits"]))
            if cell["right"] < cell["confidence_mean"] - 0.02:
                misses.append("%s at %g-%g: %.3f right at mean %.3f "
                              "(%d culprits)" % (
                                  label, cell["lo"], cell["hi"],
                                  cell["right"], cell["confidence_mean"],
                                  cell["culprits"]))
        print("| %g-%g | %s |" % (first["lo"], first["hi"],
                                  " | ".join(cells)))
    print()
    print("Accuracy in the same runs: " + ", ".join(
        "%s %.3f" % (l, r["accuracy"]) for l, r in runs) + ".")
    print()
    if misses:
        print("Bins more than 2 points below their confidence: " +
              "; ".join(misses) + ".")
    else:
        print("Every bin is within 2 points of its confidence or above.")


if __name__ == "__main__":
    main()

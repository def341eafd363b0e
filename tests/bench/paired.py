#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Paired runs of two commands (issue 24): does a speed mechanism earn its place?

    python3 tests/bench/paired.py --pairs 15 -- A_ARGV... -- B_ARGV...

e.g. a build with a mechanism (A) and one without it (B) on the same manifest, or dtypelint
(A) against `jq empty` (B). A and B run one after the other, the order alternating from pair
to pair, so that a busy machine slows both alike. For each pair it takes the wall time and the
CPU time (user + system, from wait4: what the process itself spent, steadier than wall time
on a shared VM), and prints the medians of each side, the median of the ratios B / A over the
pairs with their spread (the lowest and highest ratio, and the quartiles), and the peak RSS.
Standard library only.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def run_once(argv):
    """(wall s, cpu s, peak RSS KiB, exit status) of one run, output discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def quartiles(values):
    if len(values) < 4:
        return min(values), max(values)
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    rest = args.rest
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if "--" not in rest:
        ap.error("give two commands: -- A... -- B...")
    cut = rest.index("--")
    a, b = rest[:cut], rest[cut + 1:]
    if not a or not b:
        ap.error("give two commands: -- A... -- B...")

    run_once(a)  # warm the page cache for both
    run_once(b)
    rows = []
    for i in range(args.pairs):
        first, second = (a, b) if i % 2 == 0 else (b, a)
        r1, r2 = run_once(first), run_once(second)
        ra, rb = (r1, r2) if i % 2 == 0 else (r2, r1)
        if ra[3] != rb[3]:
            print(f"pair {i}: exit status differs: {ra[3]} vs {rb[3]}", file=sys.stderr)
            return 1
        rows.append((ra, rb))

    def med(side, k):
        return statistics.median(r[side][k] for r in rows)

    print(f"{args.pairs} pairs, alternating order; A = {args.label_a}, B = {args.label_b}")
    for k, what in ((0, "wall"), (1, "cpu")):
        ratios = [r[1][k] / r[0][k] for r in rows if r[0][k] > 0]
        q1, q3 = quartiles(ratios)
        print(f"{what:4}: A {med(0, k):.3f} s  B {med(1, k):.3f} s  B/A median {statistics.median(ratios):.3f}"
              f"  quartiles {q1:.3f}-{q3:.3f}  range {min(ratios):.3f}-{max(ratios):.3f}")
    print(f"rss : A {med(0, 2) / 1024:.1f} MiB  B {med(1, 2) / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

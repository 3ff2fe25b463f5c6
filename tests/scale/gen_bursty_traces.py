#!/usr/bin/env python3
"""Synthetic bursty request traces in the formats `--arrivals trace:` reads.

These are NOT the public traces: there is no network here to fetch them,
and they are not to be committed in bulk. They are drawn, with a seed, to
have the statistics a capacity planner reported for a held-out hour of a
real interactive service: a mean of about 2.6 requests/s, inter-arrival
times with a coefficient of variation above 10, and seconds with more than
20 times the mean, because requests come in batches.

The model: batches (compound Poisson) whose rate switches between a busy
and a quiet regime (exponential dwell times: a Markov-modulated batch
process), each batch of a heavy-tailed size (discrete Pareto, P(size >= k)
= k^-ALPHA, capped), its members spread after its start by exponential
offsets.

Usage: gen_bursty_traces.py OUTDIR [--seed N] [--duration S]
writes OUTDIR/bursty.csv (a timestamp column of UTC date-times),
OUTDIR/bursty-azure2021.csv (app,func,end_timestamp,duration) and
OUTDIR/bursty-azure2019.csv (per-minute counts), and prints each file's
statistics.
"""
import argparse
import datetime
import math
import os
import random

BUSY_RATE, QUIET_RATE = 2.0, 0.01  # batches per second
BUSY_DWELL, QUIET_DWELL = 60.0, 120.0  # mean seconds in each regime
ALPHA, SIZE_MAX = 1.2, 60  # batch sizes
SPREAD = 0.3  # mean offset of a batch's members, seconds


def draw(seed, duration):
    r = random.Random(seed)
    t, busy, times = 0.0, False, []
    change = r.expovariate(1 / QUIET_DWELL)
    while t < duration:
        rate = BUSY_RATE if busy else QUIET_RATE
        nxt = t + r.expovariate(rate)
        if nxt >= change:
            t, busy = change, not busy
            change = t + r.expovariate(1 / (BUSY_DWELL if busy else QUIET_DWELL))
            continue
        t = nxt
        size = min(SIZE_MAX, int((1 - r.random()) ** (-1 / ALPHA)))
        times += [t + r.expovariate(1 / SPREAD) for _ in range(size)]
    return sorted(x for x in times if x < duration)


def stats(times, duration):
    gaps = [b - a for a, b in zip(times, times[1:])]
    mean = sum(gaps) / len(gaps)
    sd = math.sqrt(sum((g - mean) ** 2 for g in gaps) / len(gaps))
    per_s = [0] * (int(duration) + 1)
    for x in times:
        per_s[int(x)] += 1
    rate = len(times) / duration
    return "%d arrivals, %.2f/s, inter-arrival CV %.1f, busiest second %d (%.0fx the mean)" % (
        len(times), rate, sd / mean, max(per_s), max(per_s) / rate)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=3600)
    o = ap.parse_args()
    os.makedirs(o.outdir, exist_ok=True)
    start = datetime.datetime(2026, 11, 16, 18, 0, 0)

    t = draw(o.seed, o.duration)
    with open(os.path.join(o.outdir, "bursty.csv"), "w") as f:
        f.write("timestamp\n")
        for x in t:
            f.write((start + datetime.timedelta(seconds=x)).strftime(
                "%Y-%m-%d %H:%M:%S.%f") + "\n")
    print("bursty.csv (seed %d): %s" % (o.seed, stats(t, o.duration)))

    # another draw, so that the two traces are not one
    t = draw(o.seed + 1, o.duration)
    r = random.Random(o.seed + 1000)
    with open(os.path.join(o.outdir, "bursty-azure2021.csv"), "w") as f:
        f.write("app,func,end_timestamp,duration\n")
        for x in t:
            d = round(r.lognormvariate(math.log(0.2), 1.0), 6)
            f.write("a1,f1,%.6f,%.6f\n" % (x + d, d))
    print("bursty-azure2021.csv (seed %d): %s" % (o.seed + 1, stats(t, o.duration)))

    # per-minute counts of a third draw: the 2019 format keeps no more
    # (the reader spreads each minute's count uniformly)
    t = draw(o.seed + 2, o.duration)
    minutes = int(math.ceil(o.duration / 60))
    counts = [0] * minutes
    for x in t:
        counts[int(x // 60)] += 1
    with open(os.path.join(o.outdir, "bursty-azure2019.csv"), "w") as f:
        f.write("HashOwner,HashApp,HashFunction,Trigger," +
                ",".join(str(m + 1) for m in range(minutes)) + "\n")
        f.write("o1,a1,f1,http," + ",".join(map(str, counts)) + "\n")
    print("bursty-azure2019.csv (seed %d): %s before the minute counts" % (
        o.seed + 2, stats(t, o.duration)))


if __name__ == "__main__":
    main()

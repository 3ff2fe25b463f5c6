#!/usr/bin/env python3
"""Synthetic multi-function traces in the Azure Functions 2019 and 2021
formats, for `coldstart tune host`'s benchmark and tests. Synthetic, not
the public traces: no network. Seeded: the same arguments write the same
file.

  gen_functions_trace.py --format azure2019|azure2021 [--functions 100]
      [--minutes 1440] [--seed 1] OUT

Each function draws (from the seed):
  - its mean rate, log-uniform from 1 per 1000 minutes to 100 per minute:
    a heavy tail of popularity, most functions rare and a few busy, as
    the 2019 trace's eight orders of magnitude (narrowed);
  - a pattern: 30 % timers (every 5, 10, 15, 30 or 60 minutes, each
    firing skipped with probability 0.05), 40 % diurnal Poisson (the rate
    times 1 + 0.8 sin(2 pi (minute - phase) / 1440)), 30 % bursty (a
    two-state on/off process: bursts of mean 5 minutes at 10 times the
    rate, gaps of mean 50 minutes, Poisson counts within).
azure2019 writes one row per function (HashOwner,HashApp,HashFunction,
Trigger,1..N, the counts per minute); azure2021 one row per invocation
(app,func,end_timestamp,duration), the start uniform within its minute
and a log-normal duration (median 1 s), sorted by end.

--guests FILE also writes a `tune host --guests` document of three guest
types (128 MiB, cold 100 ms; 512 MiB, cold 400 ms; 2 GiB, cold 1.5 s;
warm 1, 2 and 5 ms), each function in one of them (half, a third and a
sixth of them, drawn from the seed).
"""
import argparse
import hashlib
import json
import math
import random


def poisson(rng, lam):
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def counts(rng, minutes):
    rate = 10 ** rng.uniform(-3, 2)
    kind = rng.random()
    if kind < 0.3:
        period = rng.choice([5, 10, 15, 30, 60])
        first = rng.randrange(period)
        out = [0] * minutes
        for m in range(first, minutes, period):
            if rng.random() >= 0.05:
                out[m] = max(1, poisson(rng, rate))
        return "timer", out
    if kind < 0.7:
        phase = rng.uniform(0, 1440)
        return "http", [poisson(rng, rate * (1 + 0.8 * math.sin(
            2 * math.pi * (m - phase) / 1440))) for m in range(minutes)]
    out, on = [], rng.random() < 0.1
    left = rng.expovariate(1 / (5 if on else 50))
    for m in range(minutes):
        while left <= 0:
            on = not on
            left += rng.expovariate(1 / (5 if on else 50))
        out.append(poisson(rng, 10 * rate) if on else 0)
        left -= 1
    return "queue", out


def name(seed, kind, i):
    return hashlib.sha256(f"{seed}-{kind}-{i}".encode()).hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--format", choices=["azure2019", "azure2021"],
                    required=True)
    ap.add_argument("--functions", type=int, default=100)
    ap.add_argument("--minutes", type=int, default=1440)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--guests")
    ap.add_argument("out")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    rows = []
    for i in range(a.functions):
        trigger, c = counts(rng, a.minutes)
        rows.append((name(a.seed, "owner", i), name(a.seed, "app", i),
                     name(a.seed, "func", i), trigger, c))
    if a.guests:
        types = [("small", 128, 100, 1), ("medium", 512, 400, 2),
                 ("large", 2048, 1500, 5)]
        lists = [[], [], []]
        grng = random.Random(a.seed + 1)
        for r in rows:
            u = grng.random()
            lists[0 if u < 1 / 2 else 1 if u < 5 / 6 else 2].append(r[2])
        doc = {"guests": [{"name": n, "mem_mib": m, "cold_ms": c,
                           "hit_ms": h, "functions": lists[k]}
                          for k, (n, m, c, h) in enumerate(types)]}
        with open(a.guests, "w") as f:
            json.dump(doc, f, indent=1)
    with open(a.out, "w") as f:
        if a.format == "azure2019":
            f.write("HashOwner,HashApp,HashFunction,Trigger,")
            f.write(",".join(str(m + 1) for m in range(a.minutes)) + "\n")
            for o, app, fn, trig, c in rows:
                f.write(f"{o},{app},{fn},{trig},")
                f.write(",".join(map(str, c)) + "\n")
            return
        inv = []
        for o, app, fn, trig, c in rows:
            for m, k in enumerate(c):
                for _ in range(k):
                    d = math.exp(rng.gauss(0, 1))
                    inv.append((60 * m + 60 * rng.random() + d, app, fn, d))
        inv.sort()
        f.write("app,func,end_timestamp,duration\n")
        for end, app, fn, d in inv:
            f.write(f"{app},{fn},{end:.3f},{d:.3f}\n")


if __name__ == "__main__":
    main()

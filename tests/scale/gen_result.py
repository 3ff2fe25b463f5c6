#!/usr/bin/env python3
"""gen_result.py OUT.json [--bench NAME] [--series N] [--samples M]
[--seed S] [--shift F] [--restore]: a synthetic coldstart result document
(schema 1) of N latency series of M samples each, for the scale benchmark
(tests/scale/bench_scale.sh) and the report scale test. Series are spread
over phases, cache states, memory sizes and strategies, as restore's
are (and modes and levels, as rate's), so the report's CDF grouping and
planning and the drivers' tables see many groups and many series per
group. --shift F multiplies every sample by F (a NEW side for compare).
Deterministic for a seed."""
import argparse
import json
import random

PHASES = ["first_run", "first_progress", "done", "request"]
CACHES = ["warm", "cold"]
STRATEGIES = ["mmap", "prefetch", "uffd", "never-stopped"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--bench", default="lifecycle")
    ap.add_argument("--series", type=int, default=100)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shift", type=float, default=1.0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    series = []
    for i in range(a.series):
        base = 1e6 * (1 + i % 97)
        params = {"phase": PHASES[i % 4], "cache": CACHES[(i // 4) % 2],
                  "mem_bytes": (64 << 20) * (1 + (i // 8) % 4),
                  "strategy": STRATEGIES[(i // 32) % 4],
                  "ws_bytes": (1 << 20) * ((i // 128) % 8)}
        samples = [int(base * a.shift * (1 + 0.1 * rng.random()))
                   for _ in range(a.samples)]
        one = {"name": "s%06d" % i, "unit": "ns", "better": "lower",
               "params": params, "samples_ns": samples}
        if a.bench == "rate":  # a level per series, a mode per 8
            params.update({"mode": "mode%d" % (i // 8),
                           "kind": ("sustained", "burst")[i % 2],
                           "workers": 1 + i % 8})
            one["vms_per_s"] = 1e9 / samples[0] * params["workers"]
        series.append(one)
    doc = {"schema": 1, "bench": a.bench,
           "coldstart": {"version": "scale", "commit": "0"},
           "sysinfo": {"hostname": "scale", "cpu": {"model": "scale",
                                                    "online_cpus": 2},
                       "kvm": {"flavour": "pvm", "usable": True}},
           "config": {"count": a.samples},
           "series": series, "warnings": []}
    with open(a.out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Replays a trace library on the machine it was recorded on and sets each
program's replay beside its untraced native runs (the manifest's
`native_ms`), without the programs themselves.

Each recording is replayed under one policy on a topology of the recording
machine (`colab calibrate -o FILE` writes one; every core at rate 1.0, so
speedups do not matter) with seeds 1-3, averaged; a program's replay is the
median of its recordings', compared with the median of its native runs.
The recording's own length (first to last event, tracing slowdown
included) is printed beside it.

Usage: scripts/replay-vs-native.py COLAB LIBRARY_DIR TOPOLOGY [POLICY] [-- SIM_ARGS...]
  e.g. scripts/replay-vs-native.py target/release/colab traces/parsec reports/this-machine.toml cfs
       ... cfs -- --sleep-unnamed-wakes     (replay as it was before 2026-11-29)
"""
import gzip
import json
import statistics
import subprocess
import sys
import tomllib
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor


def main(argv):
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    colab, lib, topo = argv[1:4]
    policy = argv[4] if len(argv) == 5 else "cfs"
    with open(f"{lib}/manifest.toml", "rb") as f:
        manifest = tomllib.load(f)

    def replay(e):
        args = [colab, "sim", "--trace", f"{lib}/{e['file']}", "-t", topo, "-p", policy,
                "--json", "--speedup", str(e["speedup"])] + extra
        for sel, s in e.get("thread_speedup", {}).items():
            args += ["--thread-speedup", f"{sel}={s}"]
        ms = []
        for seed in (1, 2, 3):
            out = subprocess.run(args + ["--seed", str(seed)], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{e['name']}: {out.stderr.strip()}")
            ms.append(json.loads(out.stdout)["makespan_ns"] / 1e6)
        with gzip.open(f"{lib}/{e['file']}", "rt") as f:
            events = [json.loads(line) for line in f][1:]
        times = [x.get("start", x.get("t", x.get("end"))) for x in events]
        own = (max(x.get("end", x.get("t")) for x in events) - min(times)) / 1e6
        return e, statistics.mean(ms), own

    with ThreadPoolExecutor(2) as ex:
        rows = list(ex.map(replay, manifest["trace"]))
    by = defaultdict(list)
    for e, ms, own in rows:
        by[(e["program"], e.get("threads"))].append((e, ms, own))
    print(f"{'program':16} {'threads':>7} {'replay ms':>10} {'native ms':>10} {'error':>7} "
          f"{'recording ms':>13}")
    errs = []
    for (prog, n), rs in sorted(by.items()):
        rep = statistics.median(r[1] for r in rs)
        own = statistics.median(r[2] for r in rs)
        nat = rs[0][0]["native_ms"]["median"]
        errs.append(abs(rep / nat - 1))
        print(f"{prog:16} {n or '-':>7} {rep:10.1f} {nat:10.1f} {100 * (rep / nat - 1):+6.1f}% "
              f"{own:13.1f}")
    print(f"median |error| {100 * statistics.median(errs):.1f}%, maximum {100 * max(errs):.1f}%; "
          f"within 5%: {sum(x <= 0.05 for x in errs)}, within 15%: "
          f"{sum(x <= 0.15 for x in errs)} of {len(errs)}")


if __name__ == "__main__":
    main(sys.argv)

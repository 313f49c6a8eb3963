#!/usr/bin/env python3
"""How each benchmark model and its real program respond to asymmetry.

Reads the cells.csv of a COLAB study (`colab reproduce --out A`: each model
alone, n = 4) and of a study over the trace library (`colab reproduce
--traces parsec --only-traces --out B`), and prints, per program and
machine, H_NTT normalised to CFS under a few policies, model against the
mean of the 4-worker recordings, the policy each side ranks first, and the
rank correlation (Spearman) of all policies between the two.

Usage: scripts/asymmetry-table.py A/cells.csv B/cells.csv [CONFIG...]
"""
import csv
import sys
from collections import defaultdict

SHOWN = ["eevdf", "colab", "rr", "rota"]


def load(path):
    out = defaultdict(dict)
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["h_ntt_norm"]:
                out[(r["workload"], r["config"])][r["policy"]] = float(r["h_ntt_norm"])
    return out


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    rk = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            rk[order[k]] = (i + j) / 2
        i = j + 1
    return rk


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    models, traces = load(sys.argv[1]), load(sys.argv[2])
    configs = sys.argv[3:] or ["2B2S", "4B4S"]
    head = " | ".join(f"{p} model / real" for p in SHOWN)
    print(f"| program | machine | {head} | first: model / real | rank correlation |")
    print("|---|---|" + "---|" * len(SHOWN) + "---|---|")
    for (w, cfg), m in sorted(models.items()):
        if cfg not in configs:
            continue
        recs = [v for (tw, tc), v in traces.items() if tc == cfg and tw.startswith(w + "-t4-")]
        if not recs:
            continue
        pols = sorted(set(m) & set.intersection(*(set(r) for r in recs)))
        t = {p: sum(r[p] for r in recs) / len(recs) for p in pols}
        cells = " | ".join(f"{m[p]:.2f} / {t[p]:.2f}" for p in SHOWN)
        best = lambda d: min(pols, key=lambda p: (d[p], p))
        rho = spearman([m[p] for p in pols], [t[p] for p in pols])
        print(f"| {w} | {cfg} | {cells} | {best(m)} / {best(t)} | {rho:.2f} |")


if __name__ == "__main__":
    main()

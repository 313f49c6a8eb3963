"""Local engine against local Ray, in one run: the same grid as colab.study
(this machine's cores, rayon) and as colab.sweep on a local Ray cluster of
--workers workers, default batching and one run per task; the per-task
overhead of Ray from the difference; and what a cluster of --cores cores
would take for the 96-seed ablation of every ROTA variant, from the
measured cost of a run.

    python crates/python/bench/ray_sweep.py [--workers 2] [--seeds 2]

Prints a Markdown table (book/src/guide/python.md cites it).
"""

import argparse
import re
import time

import colab
from colab import _colab, ray_engine

ROTA_VARIANTS = 35  # colab_campaign::ROTA_MECHANISM_VARIANTS's length on 2026-12-06
ABLATION = dict(workloads=65, machines=4, seeds=96, orders=2)  # the 96-seed ablation


def colab_mixes() -> list[str]:
    """The COLAB papers' mixes among the built-in workloads."""
    pat = re.compile(r"^(2B|4B|Sync|NSync|Comm|Comp|Large)-\d+(-cgo)?$")
    return [w for w in colab.workloads() if pat.match(w)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--cores", type=int, default=1000)
    a = ap.parse_args()
    grid = (colab_mixes(), ["2B2S", "2B4S", "4B2S", "4B4S"], ["cfs", "rota", "rota@3", "rota:rotate=off"])
    seeds = list(range(1, a.seeds + 1))
    args = colab._grid(*grid, seeds, ("big-first", "little-first"), "model")

    t = time.perf_counter()
    local = _colab.study(*args)
    t_local = time.perf_counter() - t
    mix_runs = local.count("\n") - 1

    t = time.perf_counter()
    with ray_engine.cluster(num_cpus=a.workers):
        t_start = time.perf_counter() - t
        results = {}
        for label, batch in (("default", None), ("1 run per task", 1)):
            phases: list[int] = []
            tasks: list[int] = []

            def run_phase(p: str, batch=batch, phases=phases, tasks=tasks) -> str:
                n = len(_colab.PhaseRuns(p))
                phases.append(n)
                b = batch or max(1, -(-n // (4 * a.workers)))
                tasks.append(-(-n // b))
                return ray_engine.run_phase(p, batch_runs=batch, progress=False)

            t = time.perf_counter()
            out = _colab.sweep(*args, run_phase)
            results[label] = (time.perf_counter() - t, sum(tasks), sum(phases))
            assert out == local, "the sweep differs from the study"

    t_def, tasks_def, runs = results["default"]
    t_one, tasks_one, _ = results["1 run per task"]
    overhead = (t_one - t_def) * a.workers / (tasks_one - tasks_def)
    cpu_per_mix_run = t_local * a.workers / mix_runs  # alone runs included, shared out
    ablation_runs = ROTA_VARIANTS
    for v in ABLATION.values():
        ablation_runs *= v
    cpu = ablation_runs * cpu_per_mix_run
    print(f"grid: {len(grid[0])} COLAB mixes x 4 machines x {len(grid[2])} policies x "
          f"{len(seeds)} seeds x 2 orders = {mix_runs} mix runs, {runs} simulations in all\n")
    print("| engine | wall s | tasks | vs local |")
    print("|---|---:|---:|---:|")
    print(f"| local (rayon, {a.workers} threads) | {t_local:.2f} | - | 1.00 |")
    print(f"| Ray, {a.workers} workers, default batches | {t_def:.2f} | {tasks_def} | {t_def / t_local:.2f} |")
    print(f"| Ray, {a.workers} workers, 1 run per task | {t_one:.2f} | {tasks_one} | {t_one / t_local:.2f} |")
    print(f"\nRay cluster start: {t_start:.1f} s (not in the times above)")
    print(f"per-task overhead: {overhead * 1e3:.2f} ms of a worker's time per task")
    print(f"a mix run costs {cpu_per_mix_run * 1e3:.2f} ms of CPU (its runs alone shared out)")
    tasks = -(-ablation_runs // 1000)
    print(f"96-seed ablation of the {ROTA_VARIANTS} ROTA variants: {ablation_runs:,} mix runs, "
          f"{cpu / 60:.0f} CPU-minutes of runs; on {a.cores} cores {cpu / a.cores:.1f} s of runs "
          f"+ {overhead * tasks / a.cores:.3f} s of task overhead in {tasks:,} tasks of 1,000 runs")

if __name__ == "__main__":
    main()

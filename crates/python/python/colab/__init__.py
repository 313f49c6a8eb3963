"""colab from Python: the simulator of asymmetric multicore schedulers and
its studies, returning pandas DataFrames.

>>> import colab
>>> r = colab.sim("Sync-2", machine="2B2S", policy="rota")
>>> r.h_antt, r.programs[["name", "turnaround_ns"]]
>>> df = colab.study(["Sync-2", "blackscholes"], ["2B2S"], ["cfs", "rota"], seeds=[1, 2])

Workloads, machines and policies are named as on the command line (`colab
list`); a workload or machine may also be a TOML file or a TOML text. Errors
raise :class:`ColabError` with the command line's message. Simulations run
with the GIL released.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Optional, Sequence

import pandas as pd

from . import _colab
from ._colab import ColabError

__all__ = [
    "ColabError",
    "SimResult",
    "machines",
    "policies",
    "sim",
    "study",
    "sweep",
    "workloads",
    "RUNS_COLUMNS",
]

#: The columns of :func:`study`'s DataFrame (those of ``runs.csv``) and their units.
RUNS_COLUMNS = {
    "workload": "workload name",
    "classes": "the workload's classes, ';'-separated",
    "config": "machine name",
    "order": "core order: big-first or little-first",
    "seed": "seed (start order, prediction noise)",
    "policy": "policy name",
    "cores": "cores of the machine",
    "threads": "threads of the workload",
    "thread_class": "threads against cores: thread-low, thread-equal or thread-high",
    "programs": "programs in the workload",
    "program_names": "its programs, ';'-separated",
    "h_antt": "harmonic-mean normalised turnaround (lower is better), against T_SB",
    "h_stp": "system throughput (higher is better), against T_SB",
    "unfairness": "colab-tpds's unfairness (lower is fairer)",
    "h_ntt": "normalised turnaround of a single program",
    "asp": "average speedup over running alone",
    "propsp_unfairness": "Prop-SP's unfairness",
    "energy_j": "energy, joules",
    "edp": "energy-delay product, joule-seconds",
    "makespan_ns": "time until the last program ended, ns",
    "events": "simulator events processed",
    "migrations": "threads moved between cores",
    "context_switches": "context switches",
    "fast_idle_share": "share of fast-core time idle while a slower core ran a thread",
    "h_antt_bound": "the least H_ANTT any schedule of this run's step sizes could have (colab-bound); "
    "empty with programs restarted",
}


def workloads() -> list[str]:
    """The built-in mixes and programs (``colab list``)."""
    return _colab.workloads()


def machines() -> list[str]:
    """The built-in machines; any ``<b>B<s>S`` name (``1B3S``, ``6B2S``) works too."""
    return _colab.machines()


def policies() -> list[str]:
    """The built-in policies and hosted sched_ext schedulers (``scx:NAME``).

    ROTA's freezes and switches are spelled ``rota@N`` and ``rota:KEY=VALUE``.
    """
    return _colab.policies()


_PROGRAM_COLUMNS = [
    "name", "n", "threads", "turnaround_ns", "t_sb_ns", "t_alone_ns", "cpu_ns", "fast_cpu_ns",
]
_SLICE_COLUMNS = ["core", "core_name", "thread", "thread_name", "start_ns", "end_ns"]


@dataclass
class SimResult:
    """One run and its metrics, as ``colab sim --json`` reports it."""

    workload: str
    machine: str
    policy: str
    seed: int
    h_antt: float
    h_stp: float
    unfairness: float
    energy_j: float
    makespan_ns: int
    #: One row per program: name, n, threads, turnaround_ns, t_sb_ns
    #: (alone on the all-fast machine), t_alone_ns (alone here), cpu_ns,
    #: fast_cpu_ns (on the fastest core type).
    programs: pd.DataFrame
    #: The simulator's counters (context switches, migrations, ...).
    stats: dict
    #: With ``timeline=True``: one row per run of a thread on a core
    #: (core, core_name, thread, thread_name, start_ns, end_ns); else None.
    timeline: Optional[pd.DataFrame] = None


def sim(
    workload: str,
    machine: str = "2B2S",
    policy: str = "rota",
    seed: int = 1,
    order: str = "big-first",
    predictor: str = "model",
    timeline: bool = False,
) -> SimResult:
    """Simulate ``workload`` on ``machine`` under ``policy``, with the
    baselines its metrics need (each program alone on the all-fast machine
    and alone on this one), as ``colab sim`` does.

    ``workload`` and ``machine``: a built-in name, a TOML file, or a TOML
    text. ``order``: ``big-first`` or ``little-first`` (core numbering).
    ``predictor``: how speedups are predicted (``model``, ``oracle``,
    ``noisy:0.25``, ``constant:2``, ...).
    """
    text, slices = _colab.sim(workload, machine, policy, seed, order, predictor, timeline)
    r = json.loads(text)
    return SimResult(
        workload=r["workload"],
        machine=r["topology"],
        policy=r["policy"],
        seed=r["seed"],
        h_antt=r["h_antt"],
        h_stp=r["h_stp"],
        unfairness=r["unfairness"],
        energy_j=r["energy_j"],
        makespan_ns=r["makespan_ns"],
        programs=pd.DataFrame(r["programs"], columns=_PROGRAM_COLUMNS),
        stats=r["stats"],
        timeline=None if slices is None else pd.DataFrame(json.loads(slices), columns=_SLICE_COLUMNS),
    )


def _grid(workloads, machines, policies, seeds, orders, predictor) -> tuple:
    for name, v in (("workloads", workloads), ("machines", machines), ("policies", policies)):
        if isinstance(v, str):
            raise TypeError(f"{name} must be a list of strings, not the string {v!r}")
    return (
        list(workloads),
        list(machines),
        list(policies),
        [int(s) for s in seeds],
        list(orders),
        predictor,
    )


def study(
    workloads: Sequence[str],
    machines: Sequence[str],
    policies: Sequence[str],
    seeds: Sequence[int] = (1, 2, 3),
    orders: Sequence[str] = ("big-first", "little-first"),
    predictor: str = "model",
) -> pd.DataFrame:
    """Run every workload on every machine under every policy, in each core
    order and seed, and return one row per run with the columns of
    ``runs.csv`` (:data:`RUNS_COLUMNS` gives their units).

    Workloads: built-in names, TOML files or TOML texts; machines: built-in
    names. The runs are spread over the machine's cores.
    """
    text = _colab.study(*_grid(workloads, machines, policies, seeds, orders, predictor))
    return pd.read_csv(io.StringIO(text))


def sweep(
    workloads: Sequence[str],
    machines: Sequence[str],
    policies: Sequence[str],
    seeds: Sequence[int] = (1, 2, 3),
    orders: Sequence[str] = ("big-first", "little-first"),
    predictor: str = "model",
    *,
    address: Optional[str] = None,
    num_cpus: Optional[int] = None,
    checkpoint: Optional[str] = None,
    batch_runs: Optional[int] = None,
    progress: bool = True,
) -> pd.DataFrame:
    """:func:`study` with its runs spread over a Ray cluster: the same rows,
    in the same order, with the same values.

    ``address=None`` starts a local cluster of ``num_cpus`` workers (default:
    every core) that listens on the loopback address only and is stopped
    afterwards; ``address="HOST:6379"`` (or ``"ray://HOST:10001"``,
    ``"auto"``) joins a running cluster, whose nodes need this same package
    installed; if this process already called ``ray.init``, that connection
    is used. A Ray cluster runs whatever its clients send: keep it on a
    trusted network. ``checkpoint``: a directory keeping finished runs, so
    that a stopped sweep started again with the same arguments runs only
    what is missing. ``batch_runs``: runs per Ray task (default: about four
    tasks per CPU). Needs Ray: ``pip install 'colab[ray]'``.
    """
    from . import ray_engine

    grid = _grid(workloads, machines, policies, seeds, orders, predictor)

    def run_phase(phase_json: str) -> str:
        return ray_engine.run_phase(
            phase_json, checkpoint=checkpoint, batch_runs=batch_runs, progress=progress
        )

    with ray_engine.cluster(address, num_cpus):
        text = _colab.sweep(*grid, run_phase)
    return pd.read_csv(io.StringIO(text))

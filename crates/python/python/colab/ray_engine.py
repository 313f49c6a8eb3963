"""Ray as an engine for colab's studies: the runs of a study sent to a Ray
cluster in slices, their results gathered in the order the serial study
makes them, so that the report is the same byte for byte.

A study runs in two phases (each program alone, then the mixes, which read
the runs alone); the Rust side hands each phase over as JSON and gets one
result per run back. This module is that hand-over: :func:`run_phase` cuts a
phase into slices of runs, sends each slice to a Ray worker as one task,
retries a slice whose worker died, keeps each finished slice in a
checkpoint directory if given one (a stopped sweep started again skips
them), and draws a progress bar. ``colab.sweep`` uses it in-process;
``colab reproduce --engine ray`` runs it as ``python -m colab.ray_engine``.

A Ray cluster runs whatever code its clients send it: it belongs on a
trusted network. The local cluster this module starts listens on the
loopback address only, without a dashboard or job server.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import math
import os
import sys
from pathlib import Path
from typing import Iterator, Optional

from . import _colab

# Ray binds its servers to the node's address. With clusters disabled it
# takes the loopback address as the node's (the mode Ray uses for a single
# machine on macOS and Windows), so no port of the local cluster is
# reachable from elsewhere: the environment variable tells the processes
# the cluster starts, the constant (read when ray was imported) this one.
# The package's test checks every listening socket of the cluster.
_LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"

#: How many times a slice whose worker died is sent again.
MAX_RETRIES = 3

# Per worker process: the phase being run, read once, kept for its slices.
_PHASE: dict = {}


def _ray():
    try:
        import ray
    except ImportError:
        raise ImportError(
            "colab's sweeps need Ray: pip install 'colab[ray]' "
            "(from the repository: pip install './crates/python[ray]')"
        ) from None
    return ray


def _run_slice(digest: str, holder: list, start: int, end: int) -> str:
    """On a worker: runs ``start..end`` of the phase ``digest`` (its JSON
    is ``holder[0]``, an object reference, fetched once per worker)."""
    phase = _PHASE.get(digest)
    if phase is None:
        text = _ray().get(holder[0])
        phase = _colab.PhaseRuns(text)
        _PHASE.clear()
        _PHASE[digest] = phase
    return phase.run_range(start, end)


@contextlib.contextmanager
def cluster(address: Optional[str] = None, num_cpus: Optional[int] = None) -> Iterator[None]:
    """Connects to Ray for the ``with`` block.

    ``address=None`` starts a local cluster (``num_cpus`` workers, default
    all cores) listening on the loopback address only, without a dashboard,
    and stops it afterwards. Any other address (``"HOST:6379"``,
    ``"ray://HOST:10001"``, ``"auto"``) joins that cluster. If Ray is already
    initialised in this process, that connection is used and left open.
    """
    ray = _ray()
    if ray.is_initialized():
        yield
        return
    if address is not None:
        ray.init(address=address, logging_level="warning")
        try:
            yield
        finally:
            ray.shutdown()
        return
    from ray._private import ray_constants

    # For the cluster's whole life: workers started later read it too.
    saved = os.environ.get(_LOOPBACK_ONLY), ray_constants.ENABLE_RAY_CLUSTER
    os.environ[_LOOPBACK_ONLY] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        ray.init(
            address="local",
            num_cpus=num_cpus,
            include_dashboard=False,
            logging_level="warning",
        )
        try:
            yield
        finally:
            ray.shutdown()
    finally:
        if saved[0] is None:
            del os.environ[_LOOPBACK_ONLY]
        else:
            os.environ[_LOOPBACK_ONLY] = saved[0]
        ray_constants.ENABLE_RAY_CLUSTER = saved[1]


def _slices(todo: list[int], size: int) -> list[tuple[int, int]]:
    """Consecutive runs of ``todo`` cut into ranges of at most ``size``."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(todo):
        j = i
        while j + 1 < len(todo) and todo[j + 1] == todo[j] + 1 and j + 1 - i < size:
            j += 1
        out.append((todo[i], todo[j] + 1))
        i = j + 1
    return out


def _read_checkpoint(folder: Path, n: int) -> dict[tuple[int, int], str]:
    """The slices a stopped sweep finished, by range."""
    done: dict[tuple[int, int], str] = {}
    for f in sorted(folder.glob("*.json")):
        try:
            start, end = (int(x) for x in f.stem.split("-"))
        except ValueError:
            continue
        if 0 <= start < end <= n and not any(s < end and start < e for s, e in done):
            done[(start, end)] = f.read_text()
    return done


def run_phase(
    phase_json: str,
    *,
    checkpoint: Optional[str] = None,
    batch_runs: Optional[int] = None,
    progress: bool = True,
) -> str:
    """Runs one phase of a study on the connected Ray cluster and returns
    its results as JSON, in run order.

    ``batch_runs``: runs per task (default: about four tasks per worker
    CPU). ``checkpoint``: a directory keeping each finished slice, so that
    the same phase started again runs only what is missing.
    """
    ray = _ray()
    n = len(_colab.PhaseRuns(phase_json))
    digest = hashlib.sha256(phase_json.encode()).hexdigest()[:24]
    folder = None
    done: dict[tuple[int, int], str] = {}
    if checkpoint is not None:
        folder = Path(checkpoint) / digest
        folder.mkdir(parents=True, exist_ok=True)
        done = _read_checkpoint(folder, n)
    covered = {i for s, e in done for i in range(s, e)}
    todo = [i for i in range(n) if i not in covered]
    if batch_runs is None:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        batch_runs = max(1, math.ceil(len(todo) / (4 * cpus)))
    if batch_runs < 1:
        raise ValueError(f"batch_runs must be at least 1, not {batch_runs}")
    task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_run_slice)
    ref = ray.put(phase_json)
    pending = {task.remote(digest, [ref], s, e): (s, e) for s, e in _slices(todo, batch_runs)}
    bar = _bar(n, len(covered), progress)
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=min(len(pending), 64), timeout=0.5)
            for r in ready:
                s, e = pending.pop(r)
                text = ray.get(r)
                done[(s, e)] = text
                if folder is not None:
                    tmp = folder / f".{s}-{e}.tmp"
                    tmp.write_text(text)
                    tmp.replace(folder / f"{s}-{e}.json")
                bar.update(e - s)
    finally:
        bar.close()
        for r in pending:
            ray.cancel(r, force=True)
    parts = [t.strip()[1:-1].strip() for _, t in sorted(done.items())]
    return "[" + ",".join(p for p in parts if p) + "]"


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int, initial: int, show: bool):
    if not show:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, initial=initial, unit="run", desc="colab sweep", file=sys.stderr)


def main(argv: Optional[list[str]] = None) -> int:
    """``python -m colab.ray_engine PHASE RESULTS``: what ``colab reproduce
    --engine ray`` runs for each phase."""
    ap = argparse.ArgumentParser(
        prog="python -m colab.ray_engine",
        description="Run one phase of a colab study (JSON, as colab reproduce --engine ray "
        "writes it) on Ray and write its results (JSON).",
    )
    ap.add_argument("phase", help="the phase's JSON file")
    ap.add_argument("results", help="where to write the results' JSON")
    ap.add_argument("--address", help="a Ray cluster to join (default: a local one, loopback only)")
    ap.add_argument("--num-cpus", type=int, help="workers of the local cluster (default: all cores)")
    ap.add_argument("--checkpoint", help="directory keeping finished slices, to resume")
    ap.add_argument("--batch-runs", type=int, help="runs per task")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    a = ap.parse_args(argv)
    try:
        text = Path(a.phase).read_text()
        with cluster(a.address, a.num_cpus):
            out = run_phase(
                text,
                checkpoint=a.checkpoint,
                batch_runs=a.batch_runs,
                progress=not a.no_progress,
            )
    except (ImportError, OSError, _colab.ColabError, ValueError) as e:
        print(f"colab.ray_engine: {e}", file=sys.stderr)
        return 2
    tmp = Path(a.results + ".tmp")
    tmp.write_text(out)
    tmp.replace(a.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())

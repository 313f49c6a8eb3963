from typing import Callable

class ColabError(Exception): ...

def workloads() -> list[str]: ...
def machines() -> list[str]: ...
def policies() -> list[str]: ...
def sim(
    workload_arg: str,
    machine: str,
    policy: str,
    seed: int,
    order: str,
    predictor: str,
    timeline: bool,
) -> tuple[str, str | None]: ...
def study(
    workload_args: list[str],
    machines: list[str],
    policies: list[str],
    seeds: list[int],
    orders: list[str],
    predictor: str,
) -> str: ...
def sweep(
    workload_args: list[str],
    machines: list[str],
    policies: list[str],
    seeds: list[int],
    orders: list[str],
    predictor: str,
    run_phase: Callable[[str], str],
) -> str: ...

class PhaseRuns:
    """A phase of a campaign read from its JSON (what a Ray worker runs)."""

    def __init__(self, text: str) -> None: ...
    def __len__(self) -> int: ...
    def run_range(self, start: int, end: int) -> str: ...

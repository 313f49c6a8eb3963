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

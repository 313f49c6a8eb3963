"""The Python package against hand-computed values, the command line's
definitions and bad input (run by scripts/test.sh in a fresh venv)."""

import threading
import time

import pandas as pd
import pytest

import colab

PROGRAM = """
name = "spinner"
[thread.main]
ops = [ { compute = 2000, mem_frac = 0.0 } ]
"""

MACHINE = """
name = "mine-1B1S"
[[core_types]]
name = "big"
compute_rate = 1.0
memory_rate = 1.0
active_power_w = 1.0
idle_power_w = 0.05
[[core_types]]
name = "little"
compute_rate = 0.5
memory_rate = 0.8
active_power_w = 0.3
idle_power_w = 0.02
[[clusters]]
name = "big"
core_type = "big"
cores = 1
[[clusters]]
name = "little"
core_type = "little"
cores = 1
"""


def test_the_lists_name_what_the_command_line_knows():
    assert {"Sync-2", "blackscholes", "Heavy-thread"} <= set(colab.workloads())
    assert {"2B2S", "4B4S", "tensor-g1", "lunar-lake-258v"} <= set(colab.machines())
    assert {"cfs", "eevdf", "rota", "colab", "scx:colab"} <= set(colab.policies())


def test_sim_metrics_are_those_of_its_programs():
    r = colab.sim("Sync-2", machine="2B2S", policy="rota", seed=1)
    assert (r.workload, r.machine, r.policy, r.seed) == ("Sync-2", "2B2S", "rota", 1)
    p = r.programs
    assert list(p.columns) == [
        "name", "n", "threads", "turnaround_ns", "t_sb_ns", "t_alone_ns", "cpu_ns", "fast_cpu_ns",
    ]
    # H_ANTT: the mean of each program's turnaround over its T_SB; H_STP:
    # the sum of the inverses (colab-metrics' definitions).
    ratio = p.turnaround_ns / p.t_sb_ns
    assert r.h_antt == pytest.approx(ratio.mean(), rel=1e-6)
    assert r.h_stp == pytest.approx((1 / ratio).sum(), rel=1e-6)
    assert r.makespan_ns == pytest.approx(p.turnaround_ns.max(), rel=0.01)
    assert (p.fast_cpu_ns <= p.cpu_ns).all()
    assert r.timeline is None
    assert r.stats["migrations"] >= 0


def test_sim_is_deterministic_and_seeds_matter():
    a = colab.sim("Comm-2", machine="2B4S", policy="eevdf", seed=3)
    b = colab.sim("Comm-2", machine="2B4S", policy="eevdf", seed=3)
    c = colab.sim("Comm-2", machine="2B4S", policy="eevdf", seed=4)
    pd.testing.assert_frame_equal(a.programs, b.programs)
    assert a.h_antt == b.h_antt
    assert not a.programs.turnaround_ns.equals(c.programs.turnaround_ns)


def test_timeline_slices_never_overlap_on_a_core():
    r = colab.sim("Sync-2", machine="2B2S", policy="cfs", timeline=True)
    t = r.timeline
    assert list(t.columns) == ["core", "core_name", "thread", "thread_name", "start_ns", "end_ns"]
    assert len(t) > 0 and (t.end_ns >= t.start_ns).all()
    assert set(t.core) <= {0, 1, 2, 3}
    for _, runs in t.sort_values("start_ns").groupby("core"):
        assert (runs.start_ns.iloc[1:].values >= runs.end_ns.iloc[:-1].values).all()
    assert t.end_ns.max() <= r.makespan_ns


def test_a_program_and_a_machine_from_toml_text():
    r = colab.sim(PROGRAM, machine=MACHINE, policy="rota")
    assert r.machine == "mine-1B1S"
    assert list(r.programs.name) == ["spinner"]
    # One thread alone on a machine with a free big core: as fast as T_SB.
    assert r.h_antt == pytest.approx(1.0, abs=0.01)


def test_a_study_runs_machines_from_toml_texts_and_files(tmp_path):
    f = tmp_path / "wide.toml"
    f.write_text(MACHINE.replace('name = "mine-1B1S"', "").replace("cores = 1", "cores = 2"))
    df = colab.study(["Sync-2"], [MACHINE, str(f), "2B2S"], ["cfs"], seeds=[1])
    # A text is called by its name, a file by its name or else its stem.
    cores = df.groupby("config").cores.first().to_dict()
    assert cores == {"mine-1B1S": 2, "wide": 4, "2B2S": 4}
    # The same run as sim's on that machine.
    one = df[(df.config == "mine-1B1S") & (df.order == "big-first")]
    r = colab.sim("Sync-2", machine=MACHINE, policy="cfs", seed=1)
    assert one.h_antt.iloc[0] == pytest.approx(r.h_antt, rel=1e-9)


def test_study_rows_are_the_grid_with_runs_csv_columns():
    df = colab.study(["Sync-2", "blackscholes"], ["2B2S"], ["cfs", "rota"], seeds=[1, 2])
    assert df.shape[0] == 2 * 1 * 2 * 2 * 2  # workloads x machines x policies x seeds x orders
    assert list(df.columns) == list(colab.RUNS_COLUMNS)
    assert set(df.order) == {"big-first", "little-first"}
    # The same run as sim's: the same H_ANTT.
    one = df[(df.workload == "Sync-2") & (df.policy == "rota") & (df.seed == 1)
             & (df.order == "big-first")]
    assert len(one) == 1
    r = colab.sim("Sync-2", machine="2B2S", policy="rota", seed=1)
    assert one.h_antt.iloc[0] == pytest.approx(r.h_antt, rel=1e-9)


def test_bad_input_raises_colab_error_with_the_cli_message():
    with pytest.raises(colab.ColabError, match="no-such-workload"):
        colab.sim("no-such-workload")
    with pytest.raises(colab.ColabError, match="9Z9Q"):
        colab.sim("Sync-2", machine="9Z9Q")
    with pytest.raises(colab.ColabError, match="nosuchpolicy"):
        colab.sim("Sync-2", policy="nosuchpolicy")
    with pytest.raises(colab.ColabError, match="order must be"):
        colab.sim("Sync-2", order="sideways")
    with pytest.raises(colab.ColabError, match="invalid topology TOML text"):
        colab.sim("Sync-2", machine="name = 1\n[[nonsense]]")
    with pytest.raises(colab.ColabError, match="needs a name"):
        colab.study(["Sync-2"], [MACHINE.replace('name = "mine-1B1S"', "")], ["cfs"], seeds=[1])
    with pytest.raises(colab.ColabError, match="built-in machine's name"):
        colab.study(["Sync-2"], [MACHINE.replace("mine-1B1S", "2B2S")], ["cfs"], seeds=[1])
    with pytest.raises(colab.ColabError, match="two different machines"):
        colab.study(["Sync-2"], [MACHINE, MACHINE.replace("cores = 1", "cores = 2")], ["cfs"],
                    seeds=[1])
    with pytest.raises(colab.ColabError, match="at least one"):
        colab.study([], ["2B2S"], ["cfs"])
    with pytest.raises(TypeError, match="list of strings"):
        colab.study("Sync-2", ["2B2S"], ["cfs"])


def test_simulation_releases_the_gil():
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    try:
        started = len(ticks)
        colab.study(["Comm-2", "Sync-2"], ["2B2S", "4B4S"], ["cfs", "rota"], seeds=range(1, 7))
        during = len(ticks) - started
    finally:
        done.set()
        t.join()
    # The counting thread ran while Rust simulated (it would not, holding the GIL).
    assert during > 5


def test_an_rt_app_task_set_runs_and_refusals_name_what_is_missing(tmp_path):
    root = __import__("pathlib").Path(__file__).resolve().parents[2]
    periodic = root / "workload" / "tests" / "rt-app" / "periodic.json"
    r = colab.sim(str(periodic), machine="tensor-g1", policy="rota")
    # Ten 16 ms periods, each with 10 ms of work that fits on an X1.
    assert r.programs.turnaround_ns.iloc[0] == pytest.approx(160e6, rel=1e-3)
    bad = tmp_path / "affine.json"
    bad.write_text('{"tasks": {"a": {"loop": 1, "cpus": [0], "run": 5}}}')
    with pytest.raises(colab.ColabError, match="tasks.a.cpus: not modelled: CPU affinity"):
        colab.sim(str(bad))

"""colab.sweep on a local Ray cluster: the same rows as colab.study, a
worker killed mid-slice retried, a stopped sweep resumed, the cluster on the
loopback address only, and `colab reproduce --engine ray` writing the same
report as the serial study."""

import _thread
import ipaddress
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import colab
from colab import ray_engine

# Under CI a missing Ray fails the tests instead of skipping them.
if os.environ.get("CI"):
    import psutil
    import ray  # noqa: F401
else:
    psutil = pytest.importorskip("psutil")
    pytest.importorskip("ray")

REPO = Path(__file__).resolve().parents[3]

# About 1,000 runs of a few milliseconds each: long enough that a slice of
# them can be caught running.
MIXES = [f"{k}-{i}" for k in ("Sync", "NSync", "Comm", "Comp", "Large") for i in (1, 2, 3, 4)]
GRID = (MIXES, ["2B2S", "4B4S"], ["cfs", "eevdf", "rota"])
SEEDS = [1, 2, 3]


@pytest.fixture(scope="module")
def local_ray():
    with ray_engine.cluster(num_cpus=2):
        yield


@pytest.fixture(scope="module")
def serial():
    return colab.study(*GRID, seeds=SEEDS).to_csv(index=False)


def test_sweep_gives_the_serial_study(local_ray, serial):
    got = colab.sweep(*GRID, seeds=SEEDS, progress=False)
    assert len(got) == len(MIXES) * 2 * 3 * len(SEEDS) * 2
    assert got.to_csv(index=False) == serial


def _ray_processes() -> set:
    me = psutil.Process()
    return {me.pid} | {p.pid for p in me.children(recursive=True)}


def test_the_local_cluster_listens_on_loopback_only(local_ray):
    pids = _ray_processes()
    listening = [
        c
        for c in psutil.net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN and c.pid in pids
    ]
    assert len(listening) >= 3, "expected the GCS, the raylet and workers listening"
    for c in listening:
        ip = ipaddress.ip_address(c.laddr.ip)
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        name = psutil.Process(c.pid).name()
        assert ip.is_loopback, f"{name} (pid {c.pid}) listens on {c.laddr.ip}:{c.laddr.port}"


def _kill_a_running_slice(stop: threading.Event, killed: list) -> None:
    while not stop.is_set():
        for p in psutil.process_iter(["name", "cmdline"]):
            title = (p.info["name"] or "") + " " + " ".join(p.info["cmdline"] or [])
            if "ray::_run_slice" in title:
                try:
                    p.send_signal(signal.SIGKILL)
                    killed.append(p.pid)
                    return
                except psutil.NoSuchProcess:
                    pass
        time.sleep(0.002)


def test_a_killed_worker_s_slice_is_run_again_and_counted_once(local_ray, serial):
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_a_running_slice, args=(stop, killed))
    killer.start()
    try:
        got = colab.sweep(*GRID, seeds=SEEDS, batch_runs=60, progress=False)
    finally:
        stop.set()
        killer.join()
    assert killed, "no worker was caught running a slice"
    assert got.to_csv(index=False) == serial


def test_a_stopped_sweep_resumes_without_redoing_finished_slices(local_ray, serial, tmp_path):
    ck = tmp_path / "ck"

    def stop_after_first_slice():
        while not list(ck.glob("*/*.json")):
            time.sleep(0.002)
        _thread.interrupt_main()

    stopper = threading.Thread(target=stop_after_first_slice)
    stopper.start()
    with pytest.raises(KeyboardInterrupt):
        colab.sweep(*GRID, seeds=SEEDS, checkpoint=str(ck), batch_runs=40, progress=False)
        time.sleep(5)  # the interrupt lands here if every slice was already done
    stopper.join()
    kept = {f: f.stat().st_mtime_ns for f in ck.glob("*/*.json")}
    assert kept
    got = colab.sweep(*GRID, seeds=SEEDS, checkpoint=str(ck), batch_runs=40, progress=False)
    assert got.to_csv(index=False) == serial
    # What the first try finished was read back, not run again.
    assert {f: f.stat().st_mtime_ns for f in kept} == kept
    assert len(list(ck.glob("*/*.json"))) > len(kept)


def test_bad_batch_size_is_refused(local_ray):
    with pytest.raises(ValueError, match="batch_runs"):
        colab.sweep(["Sync-2"], ["2B2S"], ["cfs"], seeds=[1], batch_runs=0, progress=False)


def _colab_binary() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    b = Path(os.environ.get("COLAB_BIN", target / "release" / "colab"))
    if not b.exists():
        pytest.fail(f"{b} not found: build it with cargo build --release -p colab-cli")
    return b


def test_reproduce_engine_ray_writes_the_serial_report(tmp_path):
    colab_bin = _colab_binary()
    common = ["reproduce", "--quick", "--policies", "cfs,rota", "--configs", "2B2S"]
    subprocess.run([colab_bin, *common, "--out", tmp_path / "serial"], check=True)
    subprocess.run(
        [colab_bin, *common, "--out", tmp_path / "ray", "--engine", "ray", "-j", "2",
         "--python", sys.executable],
        check=True,
    )
    for f in ("cells.csv", "runs.csv"):
        assert (tmp_path / "ray" / f).read_bytes() == (tmp_path / "serial" / f).read_bytes(), f

    # summary.md the same but for the line naming the command that made it.
    def made_by_and_rest(d):
        lines = (d / "summary.md").read_text().splitlines()
        made = [x for x in lines if x.startswith("Made by `colab reproduce ")]
        return made, [x for x in lines if x not in made]

    made_ray, ray = made_by_and_rest(tmp_path / "ray")
    made_serial, serial = made_by_and_rest(tmp_path / "serial")
    assert ray == serial
    assert len(made_ray) == 1 and "--engine ray" in made_ray[0], made_ray
    assert len(made_serial) == 1 and "--engine" not in made_serial[0], made_serial
    assert not (tmp_path / "ray.ray-checkpoint").exists(), "the checkpoint outlived the report"


def test_reproduce_engine_ray_without_the_package_says_what_to_install(tmp_path):
    r = subprocess.run(
        [_colab_binary(), "reproduce", "--quick", "--policies", "cfs", "--configs", "2B2S",
         "--out", tmp_path / "r", "--engine", "ray", "--python", "/bin/false"],
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0
    assert "pip install './crates/python[ray]'" in r.stderr


ONE_BIG_TWO_LITTLE = """
name = "own-1B2S"
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
core_type = "big"
cores = 1
[[clusters]]
core_type = "little"
cores = 2
"""


def test_a_machine_of_ones_own_goes_to_the_workers(local_ray):
    grid = (["Sync-2", "Comm-2"], [ONE_BIG_TWO_LITTLE, "2B2S"], ["cfs", "rota"])
    got = colab.sweep(*grid, seeds=[1, 2], progress=False)
    assert set(got.config) == {"own-1B2S", "2B2S"}
    assert got.to_csv(index=False) == colab.study(*grid, seeds=[1, 2]).to_csv(index=False)

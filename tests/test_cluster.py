"""Sweeps on real clusters: a Dask scheduler and two workers started here, and a single-node SLURM started here.

Every daemon listens on 127.0.0.1 (SLURM's own slurmctld and slurmd bind their ports on every interface: SLURM has no
setting for it) and is stopped by the fixture that started it. The Dask and SLURM recipes run here are read from
book/reproduce.md, so that the chapter shows what is tested. The runs are tiny (tests/conftest.py::tiny_config) with
one torch thread each, so that a sweep on a cluster must equal the serial sweep bit for bit.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import xarray as xr

pytest.importorskip("distributed")

import initmem.sweeps.cluster
from initmem.base.claims import CLAIM_SUFFIX
from initmem.cli import main
from initmem.run.variables import TIMINGS
from initmem.sweeps.driver import sweep
from initmem.sweeps.slurm import SlurmResources, job_options
from initmem.sweeps.store import load_run

REPRODUCE = Path(__file__).resolve().parents[1] / "book" / "reproduce.md"
BIN = Path(sys.executable).parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
#: Seconds a daemon is given to start, or to stop once told to.
DAEMON_S = 60.0


def recipe(marker: str) -> str:
    """The fenced block of book/reproduce.md that follows the comment line starting with ``% <marker>``."""
    text = REPRODUCE.read_text()
    match = re.search(rf"^% {re.escape(marker)}[^\n]*\n```[a-z]*\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert match, f"book/reproduce.md has no block after '% {marker}'"
    return match.group(1)


def _command(line: str) -> list[str]:
    """A recipe line as an argument list: the trailing ``&`` dropped, ``dask`` and ``initmem`` from this Python."""
    words = shlex.split(line.split(" #")[0].rstrip().removesuffix("&"))
    if words[0] == "initmem":
        return [sys.executable, "-m", "initmem", *words[1:]]
    return [str(BIN / words[0]), *words[1:]]


def _write_spec(folder: Path, config, values=(0.5, 1.0, 2.0, 2.5)) -> dict:
    spec = {"base": config.to_dict(), "grid": {"sigma_w": list(values)}}
    (folder / "spec.yaml").write_text(json.dumps(spec))
    return spec


def _same_numbers(a: xr.Dataset, b: xr.Dataset) -> None:
    """Every variable but the timings equal, bit for bit."""
    xr.testing.assert_identical(a.drop_vars(list(TIMINGS)).drop_attrs(), b.drop_vars(list(TIMINGS)).drop_attrs())


class Daemons:
    """Processes started in their own process groups, stopped (SIGTERM, then SIGKILL) with all they started."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.processes: list[subprocess.Popen] = []

    def start(self, command: list[str], name: str, env: dict | None = None) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "wb")
        process = subprocess.Popen(
            command,
            cwd=self.folder,
            env=env or ENV,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        self.processes.append(process)
        return process

    def kill(self, process: subprocess.Popen, how: int = signal.SIGKILL) -> None:
        """Signal ``process`` and everything of its process group."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, how)

    def stop(self) -> None:
        family = []
        for process in self.processes:
            with contextlib.suppress(psutil.NoSuchProcess):
                family += psutil.Process(process.pid).children(recursive=True)
        for process in reversed(self.processes):
            self.kill(process, signal.SIGTERM)
        deadline = time.monotonic() + DAEMON_S / 4
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(max(0.1, deadline - time.monotonic()))
        for process in self.processes:
            self.kill(process)
            process.wait()
        for child in family:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()
        _, alive = psutil.wait_procs(family, timeout=DAEMON_S / 4)
        alive = [c.pid for c in alive if _running(c)]
        assert not alive, f"processes {alive} outlived their daemons"

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait_for(condition, what: str, timeout: float = DAEMON_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {timeout:.0f} s"
        time.sleep(0.1)


# --- a Dask scheduler and two workers ------------------------------------------------------------------------------
@pytest.fixture
def dask_cluster(tmp_path):
    """The Dask recipe of book/reproduce.md, started in ``tmp_path``: a scheduler and two workers on 127.0.0.1.

    Yields ``(daemons, workers, sweep_line)``: the :class:`Daemons`, the two worker processes and the recipe's
    ``initmem sweep`` line. Everything started is stopped afterwards.
    """
    lines = [line for line in recipe("tests/test_cluster.py runs this block").splitlines() if line.strip()]
    scheduler_line, *worker_lines, sweep_line = lines
    assert scheduler_line.startswith("dask scheduler") and sweep_line.startswith("initmem sweep")
    assert len(worker_lines) == 2 and all(line.startswith("dask worker") for line in worker_lines)
    daemons = Daemons(tmp_path)
    try:
        daemons.start(_command(scheduler_line), "scheduler")
        _wait_for(lambda: (tmp_path / "scheduler.json").exists(), "the scheduler wrote scheduler.json")
        workers = [daemons.start(_command(line), f"worker{i}") for i, line in enumerate(worker_lines)]
        address = json.loads((tmp_path / "scheduler.json").read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:"), address
        from distributed import Client

        with Client(address, timeout=DAEMON_S) as client:
            client.wait_for_workers(2, timeout=DAEMON_S)
            assert all(w.startswith("tcp://127.0.0.1:") for w in client.scheduler_info()["workers"])
        yield daemons, workers, sweep_line
    finally:
        daemons.stop()


def _listeners(daemons: Daemons) -> list[str]:
    """The addresses on which the daemons' processes listen."""
    found = []
    for process in daemons.processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            for member in [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]:
                for conn in member.net_connections(kind="inet"):
                    if conn.status == psutil.CONN_LISTEN:
                        found.append(f"{conn.laddr.ip}:{conn.laddr.port}")
    return found


@pytest.mark.slow
@pytest.mark.daemons
def test_a_sweep_on_a_running_dask_cluster_equals_the_serial_sweep(dask_cluster, tiny_config, tmp_path, monkeypatch):
    daemons, _, sweep_line = dask_cluster
    listeners = _listeners(daemons)
    assert listeners and all(a.startswith("127.0.0.1:") for a in listeners), listeners
    spec = _write_spec(tmp_path, tiny_config)
    monkeypatch.chdir(tmp_path)  # the recipe's relative names: spec.yaml, cache, scheduler.json, sweep.nc
    assert main(_command(sweep_line)[3:]) == 0
    on_cluster = xr.load_dataset(tmp_path / "sweep.nc", engine="h5netcdf")
    serial = sweep(spec, tmp_path / "serial", progress=False)
    _same_numbers(on_cluster, serial)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")) == sorted(
        p.name for p in (tmp_path / "serial").glob("*.nc")
    )  # the same run files, no claim left behind
    from distributed import Client

    with Client(json.loads((tmp_path / "scheduler.json").read_text())["address"]) as client:  # trained there
        counts = client.run_on_scheduler(
            lambda dask_scheduler: dict(dask_scheduler.task_prefixes["execute"].state_counts)
        )
    assert sum(counts.values()) >= len(spec["grid"]["sigma_w"]), counts


@pytest.mark.slow
@pytest.mark.daemons
def test_a_worker_killed_mid_run_costs_that_run_and_a_rerun_completes_the_cache(
    dask_cluster, tiny_config, tmp_path, monkeypatch
):
    daemons, workers, sweep_line = dask_cluster
    config = tiny_config.replace(epochs=8)
    spec = _write_spec(tmp_path, config)
    cache = tmp_path / "cache"
    first = subprocess.Popen(
        _command(sweep_line), cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        victim = None

        def a_worker_trains() -> bool:
            nonlocal victim
            for claim in cache.glob("*" + CLAIM_SUFFIX) if cache.is_dir() else []:
                with contextlib.suppress(OSError, ValueError):
                    pid = json.loads(claim.read_text())["pid"]
                    victim = next((w for w in workers if os.getpgid(pid) == w.pid), None)
            assert first.poll() is None, "the sweep ended before a worker was killed"
            return victim is not None

        _wait_for(a_worker_trains, "a worker started training", timeout=240)
        daemons.kill(victim)  # the worker and its nanny: lost for good
        out, err = first.communicate(timeout=600)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode in (0, 2), err
    finished = [p for p in cache.glob("*.nc") if load_run(p) is not None]
    assert len(finished) >= len(spec["grid"]["sigma_w"]) - 1, err  # the lost worker cost at most its run
    monkeypatch.chdir(tmp_path)
    assert main(_command(sweep_line)[3:]) == 0  # the other worker trains what is missing
    serial = sweep(spec, tmp_path / "serial", progress=False)
    _same_numbers(xr.load_dataset(tmp_path / "sweep.nc", engine="h5netcdf"), serial)


@pytest.mark.slow
@pytest.mark.daemons
def test_a_scheduler_killed_mid_sweep_is_one_line_and_a_rerun_completes(
    dask_cluster, tiny_config, tmp_path, capsys, monkeypatch
):
    daemons, _, sweep_line = dask_cluster
    scheduler = daemons.processes[0]
    # its dashboard's port first: an HTTP server, not a scheduler, refused within the connect timeout
    monkeypatch.setattr(initmem.sweeps.cluster, "CONNECT_TIMEOUT_S", 2.0)
    dashboard = json.loads((tmp_path / "scheduler.json").read_text())["services"]["dashboard"]
    flags = ["--cache", str(tmp_path / "cache"), "--executor", "dask", "--out", str(tmp_path / "d.nc")]
    spec = _write_spec(tmp_path, tiny_config, values=(0.5, 2.0, 2.5))
    assert main(["sweep", str(tmp_path / "spec.yaml"), *flags, "--scheduler", f"tcp://127.0.0.1:{dashboard}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(
        f"initmem sweep: error: --scheduler: cannot reach a Dask scheduler at tcp://127.0.0.1:{dashboard}"
    )
    assert len(err.splitlines()) == 1, err
    cache = tmp_path / "cache"
    first = subprocess.Popen(
        _command(sweep_line), cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait_for(lambda: _a_run_trains(cache, first), "a worker started training", timeout=240)
        daemons.kill(scheduler)  # kill -9
        out, err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 2 and len(err.strip().splitlines()) == 1, err  # was exit 1, a 61-line traceback
    address = json.loads((tmp_path / "scheduler.json").read_text())["address"]
    match = re.fullmatch(
        rf"initmem sweep: error: the scheduler at {re.escape(address)} went away; (\d) of 3 runs finished \(kept in "
        rf"{re.escape(str(cache.resolve()))}\), rerun to resume",
        err.strip(),
    )
    assert match, err
    finished = int(match.group(1))
    assert finished <= len([p for p in cache.glob("*.nc") if load_run(p) is not None])
    assert not (tmp_path / "sweep.nc").exists()
    rerun = sweep(spec, cache, progress=False)  # nothing lost: the rerun (serial: the same runs) completes the cache
    assert rerun.attrs["n_runs"] == 3 and rerun.attrs["n_cached"] >= finished
    assert len([p for p in cache.glob("*.nc") if load_run(p) is not None]) == 3


@pytest.mark.slow
@pytest.mark.daemons
def test_initmem_experiments_trains_a_notebooks_sweep_on_the_running_cluster(dask_cluster, tmp_path, monkeypatch):
    pytest.importorskip("papermill")
    from distributed import Client

    from initmem.study.design.presets import notebook_parameters
    from initmem.study.design.registry import experiment_spec
    from initmem.sweeps.spec import SweepSpec

    line = recipe("tests/test_cluster.py runs this experiments line").strip()
    assert line.startswith("initmem experiments")
    words = shlex.split(line)[2:]
    words[words.index("--preset") + 1] = "smoke"  # the recipe's notebook, at the preset that trains in seconds
    results, out = tmp_path / "results", tmp_path / "notebooks"
    repo = REPRODUCE.parents[1]
    command = [*words, "--results-dir", str(results), "--out-dir", str(out), "--root", str(repo)]
    monkeypatch.chdir(tmp_path)  # scheduler.json
    assert main(["experiments", *command]) == 0
    n_runs = SweepSpec.from_dict(experiment_spec("01_optimizers", notebook_parameters("smoke", "01_optimizers"))).n_runs
    assert len(list((results / "smoke" / "01_optimizers" / "runs").glob("*.nc"))) == n_runs
    with Client(json.loads((tmp_path / "scheduler.json").read_text())["address"]) as client:  # trained there
        counts = client.run_on_scheduler(
            lambda dask_scheduler: dict(dask_scheduler.task_prefixes["execute"].state_counts)
        )
    assert sum(counts.values()) >= n_runs, counts


@pytest.mark.daemons
def test_a_cache_the_workers_do_not_share_is_refused_before_training(tmp_path, tiny_config, capsys):
    """A worker in its own mount namespace sees another folder at the cache's path: one line, exit 2."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) to give a worker a private mount of the cache folder")
    cache = tmp_path / "cache"
    cache.mkdir()
    daemons = Daemons(tmp_path)
    try:
        daemons.start(
            _command(
                "dask scheduler --host 127.0.0.1 --port 0 --dashboard-address 127.0.0.1:0 "
                "--scheduler-file scheduler.json"
            ),
            "scheduler",
        )
        _wait_for(lambda: (tmp_path / "scheduler.json").exists(), "the scheduler wrote scheduler.json")
        worker = shlex.join(
            _command(
                "dask worker --scheduler-file scheduler.json --nthreads 1 --host 127.0.0.1 "
                "--dashboard-address 127.0.0.1:0"
            )
        )
        daemons.start(
            [
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                f"mount -t tmpfs tmpfs {shlex.quote(str(cache))} && exec {worker}",
            ],
            "worker",
        )
        from distributed import Client

        with Client(json.loads((tmp_path / "scheduler.json").read_text())["address"], timeout=DAEMON_S) as client:
            client.wait_for_workers(1, timeout=DAEMON_S)
        _write_spec(tmp_path, tiny_config, values=(0.5,))
        code = main(
            [
                "sweep",
                str(tmp_path / "spec.yaml"),
                "--cache",
                str(cache),
                "--executor",
                "dask",
                "--scheduler",
                str(tmp_path / "scheduler.json"),
                "--out",
                str(tmp_path / "sweep.nc"),
            ]
        )
    finally:
        daemons.stop()
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"--cache: {cache} is not shared with the Dask workers tcp://127.0.0.1:" in err
    assert not list(cache.glob("*.nc")) and not (tmp_path / "sweep.nc").exists()


def test_a_run_file_that_is_not_the_one_its_worker_wrote_fails_that_run(tiny_config, tmp_path):
    from initmem.sweeps.executors import Outcome, RunJob, _landed
    from initmem.sweeps.store import write_run

    job = RunJob(tiny_config, tmp_path / f"{tiny_config.hash()}.nc")
    with pytest.raises(RuntimeError, match="which this process cannot see: the cache is not on a file system"):
        _landed(job, Outcome("trained", "0" * 64, "elsewhere"))
    checksum = write_run(xr.Dataset(attrs={"config_hash": tiny_config.hash()}), job.path)
    _landed(job, Outcome("trained", checksum, "here"))  # the file the worker wrote
    with pytest.raises(RuntimeError, match=f"with checksum {'0' * 64}, but the file here has {checksum}"):
        _landed(job, Outcome("trained", "0" * 64, "elsewhere"))


def test_an_unreachable_scheduler_is_one_line(tmp_path, tiny_config, capsys, monkeypatch):
    monkeypatch.setattr(initmem.sweeps.cluster, "CONNECT_TIMEOUT_S", 2.0)
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    _write_spec(tmp_path, tiny_config, values=(0.5,))

    def sweep(*flags: str) -> int:
        files = ["--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "s.nc")]
        return main(["sweep", str(tmp_path / "spec.yaml"), *files, *flags])

    code = sweep("--executor", "dask", "--scheduler", f"tcp://127.0.0.1:{port}")
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"error: --scheduler: cannot reach a Dask scheduler at tcp://127.0.0.1:{port}" in err
    assert sweep("--scheduler", "x.json") == 2
    assert "error: --scheduler: only with --executor dask" in capsys.readouterr().err
    assert sweep("--gpus", "1") == 2
    assert "error: --gpus: only with --executor slurm" in capsys.readouterr().err


@contextlib.contextmanager
def _listener(kind: str):
    """A server on 127.0.0.1 that is no Dask scheduler: ``silent`` accepts connections and never speaks, ``http``
    answers HTTP (as a scheduler's dashboard does). Yields its port; stopped on leaving."""
    import http.server
    import threading

    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # not on the test's stderr
            pass

    if kind == "http":
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield server.server_address[1]
        finally:
            server.shutdown()
            server.server_close()
        return
    accepted = []
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        sock.settimeout(0.1)
        stop = threading.Event()

        def accept() -> None:
            while not stop.is_set():
                with contextlib.suppress(OSError):
                    accepted.append(sock.accept()[0])  # kept open, never answered

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        try:
            yield sock.getsockname()[1]
        finally:
            stop.set()
            thread.join()
            for conn in accepted:
                conn.close()


@pytest.mark.timeout(120)  # distributed alone waited 180 s on the silent server (its timeout left out the handshake)
@pytest.mark.parametrize("kind", ["silent", "http"])
def test_something_else_than_a_scheduler_at_the_address_is_one_line_within_the_connect_timeout(
    kind, tmp_path, tiny_config, capsys, monkeypatch
):
    monkeypatch.setattr(initmem.sweeps.cluster, "CONNECT_TIMEOUT_S", 2.0)
    _write_spec(tmp_path, tiny_config, values=(0.5,))
    with _listener(kind) as port:
        started = time.monotonic()
        code = main(
            [
                "sweep",
                str(tmp_path / "spec.yaml"),
                "--cache",
                str(tmp_path / "cache"),
                "--out",
                str(tmp_path / "s.nc"),
                "--executor",
                "dask",
                "--scheduler",
                f"tcp://127.0.0.1:{port}",
            ]
        )
        waited = time.monotonic() - started
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"error: --scheduler: cannot reach a Dask scheduler at tcp://127.0.0.1:{port} (" in err, err
    assert waited < 60, waited  # the connect timeout (2 s here) and its margin, not minutes
    assert not (tmp_path / "s.nc").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON (line 1 column 2"),
        ("[1, 2]", "must hold a mapping, not a list"),
        ('{"address": 5}', "has no scheduler address"),
        ("", "is not valid JSON (line 1 column 1: Expecting value)"),
    ],
)
def test_a_scheduler_file_that_is_not_one_is_one_line_naming_it(content, message, tmp_path, tiny_config, capsys):
    _write_spec(tmp_path, tiny_config, values=(0.5,))
    sched = tmp_path / "sched.json"
    sched.write_text(content)
    files = ["--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "s.nc")]
    code = main(["sweep", str(tmp_path / "spec.yaml"), *files, "--executor", "dask", "--scheduler", str(sched)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err  # was a 40-line traceback ending in a bare AssertionError
    assert err.startswith(f"initmem sweep: error: --scheduler: {sched} ") and message in err, err


class _FakeClient:
    """What :class:`ClusterWatch` asks of a ``distributed.Client``: its status, its scheduler's address and the
    workers the scheduler knows."""

    def __init__(self, workers: int = 2) -> None:
        self.status = "running"
        self.scheduler = type("Scheduler", (), {"address": "tcp://127.0.0.1:8786"})()
        self.workers = workers
        self.asked = 0

    def scheduler_info(self) -> dict:
        self.asked += 1
        return {"workers": {f"tcp://127.0.0.1:{9000 + i}": {} for i in range(self.workers)}}


def test_a_cluster_whose_workers_are_all_gone_is_given_up_after_the_bound_on_the_injected_clock(caplog):
    """SLURM jobs at their time limit (or cancelled) take the workers with them and nothing starts new ones: the
    watch raises ClusterLost once the cluster has had no worker for WORKERS_GONE_S by its clock (injected here)."""
    from initmem.sweeps.cluster import WORKERS_GONE_S, ClusterLost, ClusterWatch

    now = [1000.0]
    client = _FakeClient(workers=2)
    watch = ClusterWatch(client, clock=lambda: now[0])
    watch.check()  # two workers
    client.workers = 0  # the jobs ended
    now[0] += 5
    with caplog.at_level("WARNING", logger="initmem.sweeps.cluster"):
        watch.check()  # first seen empty
        assert caplog.text == ""
        now[0] += 5
        watch.check()  # still empty at the next look: a warning, no error yet
    assert "has had no worker for 5 s; giving up on it after 120 s" in caplog.text
    now[0] += WORKERS_GONE_S - 6
    watch.check()  # not yet
    client.workers = 1  # one came back (a requeued job): the count starts again
    now[0] += 5
    watch.check()
    client.workers = 0
    now[0] += 5
    watch.check()
    now[0] += WORKERS_GONE_S / 2
    watch.check()
    now[0] += WORKERS_GONE_S / 2
    with pytest.raises(ClusterLost, match=r"^the Dask cluster at tcp://127.0.0.1:8786 has had no worker for 120 s: "):
        watch.check()
    asked = client.asked
    fresh = ClusterWatch(client, clock=lambda: now[0])
    fresh.check()
    fresh.check()  # within WATCH_POLL_S of the last look: the scheduler is not asked again
    assert client.asked == asked + 1


def test_a_client_that_lost_its_scheduler_is_a_cluster_lost_at_once():
    from initmem.sweeps.cluster import ClusterLost, ClusterWatch

    client = _FakeClient()
    watch = ClusterWatch(client, clock=lambda: 0.0)
    watch.check()
    client.status = "connecting"  # distributed's state once the connection is gone: every future is cancelled
    with pytest.raises(ClusterLost, match=r"^the scheduler at tcp://127.0.0.1:8786 went away$"):
        watch.check()


def test_an_open_client_drops_distributeds_own_records_of_a_lost_scheduler_and_keeps_the_others():
    """distributed logs "Failed to reconnect to scheduler after 20.00 seconds, closing client" at ERROR when a killed
    scheduler does not come back (the sweep's own one line says so), and a cancelled reconnect's traceback; any other
    record of distributed.client still reaches the handlers."""
    import asyncio
    import logging

    from initmem.sweeps.cluster import closing_client

    logger = logging.getLogger("distributed.client")
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())
    logger.addHandler(handler)
    client = _FakeClient()
    client.close = lambda timeout=None: None
    try:
        with closing_client(client):
            logger.error("Failed to reconnect to scheduler after %.2f seconds, closing client", 20.0)
            try:
                raise asyncio.CancelledError
            except asyncio.CancelledError:
                logger.exception("reconnect cancelled")
            logger.error("something else went wrong")
    finally:
        logger.removeHandler(handler)
    assert seen == ["something else went wrong"]


# --- SLURM ----------------------------------------------------------------------------------------------------------
def test_the_slurm_flags_of_the_gpu_recipe_make_the_job_script():
    """The GPU command of book/reproduce.md: its flags become these lines of dask-jobqueue's job script."""
    pytest.importorskip("dask_jobqueue")
    from dask_jobqueue.slurm import SLURMJob

    from initmem.cli import build_parser
    from initmem.sweeps.cluster import cluster_from_args

    line = recipe("tests/test_cluster.py checks the job script").strip()
    args = build_parser().parse_args(shlex.split(line)[1:])
    _, resources = cluster_from_args(args, args.executor)
    assert resources == SlurmResources(
        cores=1, memory="32GB", gpus=1, walltime="04:00:00", partition="gpu", account="myproject", jobs=16
    )
    script = SLURMJob("tcp://127.0.0.1:8786", name="w", **job_options(resources)).job_script()
    for directive in ("-p gpu", "-A myproject", "-t 04:00:00", "--cpus-per-task=1", "--mem=30G", "--gres=gpu:1"):
        assert f"#SBATCH {directive}\n" in script, script
    assert "--nthreads 1" in script


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_SLURM_CONF = """\
ClusterName=initmemtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
AuthInfo=socket={folder}/munge.socket
CredType=cred/munge
SlurmUser={user}
SlurmdUser={user}
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


class SlurmEnv(dict):
    """The environment a SLURM client needs (``SLURM_CONF``), with the :class:`Daemons` that run that SLURM and its
    configuration file, for the tests that stop and restart its controller."""

    daemons: Daemons
    conf: Path
    controller: subprocess.Popen

    def restart_controller(self) -> subprocess.Popen:
        """Start slurmctld again (after a test killed it); returns once it answers."""
        process = self.daemons.start(["slurmctld", "-D", "-f", str(self.conf)], "slurmctld-again", self)
        _wait_for(lambda: subprocess.run(["squeue", "-h"], env=self, capture_output=True).returncode == 0, "slurmctld")
        return process


@pytest.fixture
def slurm(tmp_path):
    """A single-node SLURM (munged, slurmctld, slurmd) configured in ``tmp_path/slurm``; yields the environment its
    clients need (``SLURM_CONF``), a :class:`SlurmEnv`. Skipped where SLURM is not installed (``make slurm`` installs
    it)."""
    missing = [name for name in ("munged", "slurmctld", "slurmd", "sbatch") if shutil.which(name) is None]
    if missing:
        pytest.skip(f"SLURM is not installed ({', '.join(missing)} missing; `make slurm` installs it as root with apt)")
    pytest.importorskip("dask_jobqueue")
    folder = tmp_path / "slurm"
    for sub in ("state", "spool"):
        (folder / sub).mkdir(parents=True)
    folder.chmod(0o700)
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    conf = folder / "slurm.conf"
    conf.write_text(
        _SLURM_CONF.format(
            host=socket.gethostname(),
            ctld_port=_free_port(),
            slurmd_port=_free_port(),
            folder=folder,
            user=getpass.getuser(),
            cpus=os.cpu_count(),
            memory_mb=int(psutil.virtual_memory().total / 2**20 * 0.8),
        )
    )
    env = SlurmEnv({**ENV, "SLURM_CONF": str(conf)})
    daemons = env.daemons = Daemons(folder)
    env.conf = conf
    try:
        daemons.start(
            [
                "munged",
                "--foreground",
                "--force",
                f"--socket={folder}/munge.socket",
                f"--key-file={key}",
                f"--pid-file={folder}/munged.pid",
                f"--seed-file={folder}/munged.seed",
                f"--log-file={folder}/munged.file.log",
            ],
            "munged",
            env,
        )
        _wait_for(lambda: (folder / "munge.socket").exists(), "munged created its socket")
        env.controller = daemons.start(["slurmctld", "-D", "-f", str(conf)], "slurmctld", env)
        daemons.start(["slurmd", "-D", "-f", str(conf), "-N", socket.gethostname()], "slurmd", env)

        def idle() -> bool:
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True)
            return state.stdout.strip() == "idle"

        _wait_for(idle, "the SLURM node became idle")
        yield env
    finally:
        try:
            _cancel_jobs(env)
        finally:
            daemons.stop()
            for step in _job_steps(conf):  # slurmstepd leaves slurmd's process tree: found by its SLURM_CONF
                step.kill()


def _cancel_jobs(env: dict) -> None:
    """Cancel every job of this user and wait until the queue is empty (their steps report to slurmd first)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(["scancel", "--user", getpass.getuser()], env=env, capture_output=True, timeout=30)
        _wait_for(
            lambda: not subprocess.run(["squeue", "-h"], env=env, capture_output=True, text=True).stdout.strip(),
            "the cancelled jobs left the queue",
            timeout=DAEMON_S / 2,
        )


def _job_steps(conf: Path) -> list[psutil.Process]:
    """The slurmstepd processes of the SLURM configured by ``conf``."""
    steps = []
    for process in psutil.process_iter(["name"]):
        with contextlib.suppress(psutil.Error):
            if process.info["name"] == "slurmstepd" and process.environ().get("SLURM_CONF") == str(conf):
                steps.append(process)
    return steps


@pytest.mark.slow
@pytest.mark.daemons
def test_a_sweep_through_slurm_equals_the_serial_sweep(slurm, tiny_config, tmp_path):
    dask_config = tmp_path / "dask-config"
    dask_config.mkdir()
    (dask_config / "jobqueue.yaml").write_text(recipe("tests/test_cluster.py writes this block"))
    spec = _write_spec(tmp_path, tiny_config)
    env = {**slurm, "DASK_CONFIG": str(dask_config)}
    line = recipe("tests/test_cluster.py runs this command").strip()
    result = subprocess.run(_command(line), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    serial = sweep(spec, tmp_path / "serial", progress=False)
    _same_numbers(xr.load_dataset(tmp_path / "sweep.nc", engine="h5netcdf"), serial)
    queue = subprocess.run(["squeue", "-h"], env=env, capture_output=True, text=True).stdout.strip()
    assert queue == "", f"jobs left in the queue: {queue}"  # the sweep cancelled its worker jobs
    # A GPU this cluster lacks: SLURM refuses the job script before anything is submitted; one line, exit 2.
    refused = subprocess.run(
        [*_command(line), "--gpus", "1"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "error: executor: SLURM refuses the worker job script" in refused.stderr


def _slurm_sweep(slurm: SlurmEnv, config, tmp_path: Path, jobs: int, **constants: float) -> subprocess.Popen:
    """``initmem sweep`` of the recipe (book/reproduce.md) with ``--jobs jobs``, started in ``tmp_path`` with the
    recipe's jobqueue.yaml; ``constants`` of initmem.sweeps.cluster or initmem.sweeps.slurm set first
    (WORKERS_GONE_S=5, SCANCEL_TIMEOUT_S=20, say)."""
    dask_config = tmp_path / "dask-config"
    dask_config.mkdir()
    (dask_config / "jobqueue.yaml").write_text(recipe("tests/test_cluster.py writes this block"))
    _write_spec(tmp_path, config)
    words = _command(recipe("tests/test_cluster.py runs this command").strip())
    words[words.index("--jobs") + 1] = str(jobs)
    modules = "(initmem.sweeps.cluster, initmem.sweeps.slurm)"  # each constant set on the module that defines it
    setup = "".join(
        f"setattr(next(m for m in {modules} if hasattr(m, {name!r})), {name!r}, {value!r}); "
        for name, value in constants.items()
    )
    code = (
        f"import sys, initmem.sweeps.cluster, initmem.sweeps.slurm; {setup}"
        "from initmem.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, *words[3:]],
        cwd=tmp_path,
        env={**slurm, "DASK_CONFIG": str(dask_config)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _queue(env: dict) -> list[str]:
    """The ids of the jobs in the SLURM queue."""
    result = subprocess.run(["squeue", "-h", "-o", "%i"], env=env, capture_output=True, text=True, timeout=60)
    return sorted(result.stdout.split(), key=int)


def _a_run_trains(cache: Path, sweep: subprocess.Popen) -> bool:
    """A worker holds the claim of a run (it trains), while the sweep still runs."""
    assert sweep.poll() is None, sweep.communicate()
    return cache.is_dir() and any(cache.glob("*" + CLAIM_SUFFIX))


@pytest.mark.slow
@pytest.mark.daemons
@pytest.mark.parametrize(
    "ending",
    [
        ["scancel"],
        # SLURM's own time limit (the case of issue 34: a silent hang): a minute from the job's start, enforced at
        # slurmctld's next periodic check (every 30 s), so this case takes about 1.5 min
        pytest.param(["scontrol", "update", "TimeLimit=1"], marks=pytest.mark.slow, id="time-limit"),
    ],
    ids=lambda ending: "-".join(ending[:1]),
)
def test_a_sweep_whose_slurm_jobs_are_all_gone_says_so_and_exits_2(ending, slurm, tiny_config, tmp_path):
    """Its only job cancelled mid-run, or ended by SLURM at its time limit, the sweep has no worker and nothing starts
    one: it says so once WORKERS_GONE_S (5 s here) has passed, rather than wait forever."""
    sweep = _slurm_sweep(slurm, tiny_config.replace(epochs=2000), tmp_path, jobs=1, WORKERS_GONE_S=5.0)
    try:
        _wait_for(lambda: _a_run_trains(tmp_path / "cache", sweep), "a worker started training", timeout=240)
        jobs = _queue(slurm)
        assert len(jobs) == 1, jobs
        job = [f"JobId={jobs[0]}"] if ending[0] == "scontrol" else jobs
        subprocess.run([*ending[:2], *job, *ending[2:]], env=slurm, check=True, timeout=60)
        out, err = sweep.communicate(timeout=300)
    finally:
        if sweep.poll() is None:
            sweep.kill()
    assert sweep.returncode == 2, err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    match = re.fullmatch(
        r"initmem sweep: error: the Dask cluster at tcp://127\.0\.0\.1:\d+ has had no worker for \d+ s: its workers "
        r"are gone \(SLURM jobs that reached their time limit or were cancelled, or stopped workers\); (\d) of 4 runs "
        rf"finished \(kept in {re.escape(str((tmp_path / 'cache').resolve()))}\), rerun to resume",
        last,
    )
    assert match, err
    # a fast CPU finishes a run or two of the tiny config within the time limit's minute; whatever finished is kept
    finished = int(match.group(1))
    assert finished < 4 and finished <= len([p for p in (tmp_path / "cache").glob("*.nc") if load_run(p) is not None])
    assert "has had no worker for " in err and "; giving up on it after 5 s" in err, err  # said while it waited
    assert _queue(slurm) == []


@pytest.mark.slow
@pytest.mark.daemons
def test_slurm_jobs_a_sweep_cannot_cancel_are_named_in_one_line(slurm, tiny_config, tmp_path):
    """The controller killed mid-sweep, the sweep completes (its scheduler runs here, its workers under slurmd), but
    scancel cannot reach the controller: one line names the jobs and how to cancel them."""
    sweep = _slurm_sweep(slurm, tiny_config, tmp_path, jobs=2, SCANCEL_TIMEOUT_S=20.0)
    killed = False
    try:
        _wait_for(lambda: _a_run_trains(tmp_path / "cache", sweep), "a worker started training", timeout=240)
        jobs = _queue(slurm)
        assert len(jobs) == 2, jobs
        slurm.daemons.kill(slurm.controller)  # kill -9 slurmctld
        killed = True
        out, err = sweep.communicate(timeout=600)
    finally:
        if sweep.poll() is None:
            sweep.kill()
        if killed:
            slurm.restart_controller()  # for the fixture to cancel what is left, whatever happens here
    assert sweep.returncode == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"WARNING initmem.sweeps.slurm: could not cancel SLURM jobs {', '.join(jobs)}: "), err
    assert lines[0].endswith(f"; cancel them with: scancel {' '.join(jobs)}"), err
    assert "Unable to contact slurm controller" in lines[0], err
    assert set(_queue(slurm)) <= set(jobs)  # what is left is what the line named

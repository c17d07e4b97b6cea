"""Faults around training (issues 12 and 24: nothing lost, nothing executed, nothing stuck): corrupt or foreign
cache files, unsafe checkpoints, unwritable outputs and outputs that are not regular files, runs killed at a random
step, killed and interrupted sweeps, concurrent sweeps over one cache and their claims, diverged runs, runs that do
not fit in memory, oversized images, checkpoints that do not fit their model, and the one-line errors of the command
line. The faults of clusters (a lost worker, a cache the workers do not share) are in tests/test_cluster.py."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
import torch
import xarray as xr

import initmem.base.files
import initmem.run.loop
import initmem.run.training
import initmem.sweeps.executors
import initmem.sweeps.store
import initmem.sweeps.workers
from initmem.base.claims import RunClaim
from initmem.base.files import OutputError, temp_name
from initmem.cli import main
from initmem.run.config import ConfigError, RunConfig
from initmem.run.mapping_files import read_mapping_file
from initmem.run.training import load_checkpoint, train
from initmem.run.variables import TIMINGS
from initmem.study.statistics.stats import spread
from initmem.study.statistics.summary import summary_table
from initmem.sweeps.driver import sweep
from initmem.sweeps.spec import SweepSpec
from initmem.sweeps.store import CHECKSUM_ATTR, load_run, run_path, write_run
from sweep_fakes import fake_sweep
from tiny import TINY_FLAGS, TINY_RUN, as_flags  # tests/ is on sys.path under pytest


def _spec(config):
    return {"base": config.to_dict(), "grid": {"sigma_w": [0.5, 2.0]}}


def test_corrupt_truncated_or_foreign_cached_runs_are_moved_aside_and_retrained(tiny_config, tmp_path, caplog):
    config = tiny_config.replace(epochs=1)
    first = sweep(_spec(config), tmp_path, progress=False)
    files = sorted(tmp_path.glob("*.nc"))
    assert len(files) == 2
    # truncate one file, flip one float inside the other (a readable file with a wrong number)
    files[0].write_bytes(files[0].read_bytes()[:300])
    with xr.load_dataset(files[1], engine="h5netcdf") as ds:
        tampered = ds.copy()
    tampered["selected_test_acc"] = tampered["selected_test_acc"] * 0 + 99.0
    tampered.to_netcdf(files[1], engine="h5netcdf")  # keeps the old checksum: content no longer matches
    again = sweep(_spec(config), tmp_path, progress=False)
    assert again.attrs["n_cached"] == 0
    assert len(list(tmp_path.glob("*.nc.rejected"))) == 2
    assert "corrupt" in caplog.text and "unreadable" in caplog.text
    xr.testing.assert_identical(first["selected_test_acc"], again["selected_test_acc"])


def test_checksum_survives_the_round_trip(tiny_config, tmp_path):
    ds = train(tiny_config.replace(epochs=1))
    path = run_path(tmp_path, tiny_config)
    write_run(ds, path)
    loaded = load_run(path, tiny_config.replace(epochs=1))
    assert loaded is not None and len(loaded.attrs[CHECKSUM_ATTR]) == 64
    assert load_run(path, tiny_config.replace(epochs=2)) is None  # another config: set aside, not trusted
    assert not path.exists() and path.with_name(path.name + ".rejected").exists()


class _Payload:
    def __reduce__(self):
        return (os.system, (f"touch {_Payload.marker}",))


@pytest.mark.parametrize("content", ["payload", "truncated", "garbage", "directory"])
def test_unsafe_or_corrupt_checkpoints_are_refused_and_training_starts_fresh(tiny_config, tmp_path, content, caplog):
    config = tiny_config.replace(epochs=2, checkpoint_every=1)
    checkpoint = tmp_path / "run.ckpt"
    _Payload.marker = tmp_path / "executed"
    if content == "payload":
        torch.save({"version": 2, "config_hash": config.hash(), "x": _Payload()}, checkpoint)
    elif content == "truncated":
        torch.save({"version": 2, "config_hash": config.hash(), "w": torch.zeros(1000)}, checkpoint)
        checkpoint.write_bytes(checkpoint.read_bytes()[:200])
    elif content == "garbage":
        checkpoint.write_bytes(b"\x00not a checkpoint" * 10)
    else:
        checkpoint.mkdir()
    assert load_checkpoint(checkpoint, config) is None
    assert not _Payload.marker.exists()  # nothing was executed
    assert "ignoring checkpoint" in caplog.text
    if content != "directory":
        assert checkpoint.with_name("run.ckpt.rejected").exists()
        ds = train(config, checkpoint_path=checkpoint)
        reference = train(config)
        np.testing.assert_array_equal(ds["test_acc"], reference["test_acc"])


# --- helpers for the tests below ----------------------------------------------------------------------


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def _forbid_training(monkeypatch):
    """Make any training attempt fail the test loudly."""

    def refuse(*args, **kwargs):
        raise AssertionError("training started although an output location was unusable")

    monkeypatch.setattr(initmem.run.training, "train", refuse)
    monkeypatch.setattr(initmem.sweeps.executors, "execute", refuse)


def _data_vars_equal(a: xr.Dataset, b: xr.Dataset) -> None:
    """Every variable but the timings equal, bit for bit."""
    xr.testing.assert_identical(a.drop_vars(list(TIMINGS)).drop_attrs(), b.drop_vars(list(TIMINGS)).drop_attrs())


# --- 1: nothing lost when an output cannot be written ---------------------------------------------------
def test_unwritable_out_fails_before_training(tmp_path, monkeypatch, capsys):
    _forbid_training(monkeypatch)
    (tmp_path / "f").write_text("a file, not a folder")
    out = tmp_path / "f" / "o.nc"
    checkpoint = ["--checkpoint", str(tmp_path / "ck"), "--checkpoint-every", "1"]
    code = main(["train", *TINY_FLAGS, "--out", str(out), *checkpoint])
    assert code == 2
    assert f"error: --out: cannot write to {out} ({tmp_path / 'f'} is a file)" in _one_error_line(capsys)
    assert main(["train", *TINY_FLAGS, "--out", str(tmp_path), "--epochs", "1"]) == 2
    assert "--out: cannot write" in _one_error_line(capsys)
    assert (
        main(
            [
                "train",
                *TINY_FLAGS,
                "--out",
                str(tmp_path / "o.nc"),
                "--checkpoint",
                str(tmp_path / "f" / "ck"),
                "--checkpoint-every",
                "1",
            ]
        )
        == 2
    )
    assert "error: --checkpoint: cannot write" in _one_error_line(capsys)


@pytest.mark.parametrize("cache", ["file", "below-a-file", "empty"])
def test_unusable_sweep_cache_fails_before_training(tmp_path, monkeypatch, capsys, cache):
    _forbid_training(monkeypatch)
    (tmp_path / "f").write_text("a file")
    spec = tmp_path / "spec.yaml"
    spec.write_text("base: {data: synthetic, width: 4}\ngrid: {sigma_w: [0.5, 2.0]}\n")
    folder = {"file": tmp_path / "f", "below-a-file": tmp_path / "f" / "cache", "empty": ""}[cache]
    assert main(["sweep", str(spec), "--cache", str(folder), "--out", str(tmp_path / "s.nc")]) == 2
    assert "error: --cache:" in _one_error_line(capsys)
    if cache != "empty":
        with pytest.raises(OutputError, match="cache_dir: cannot write"):
            sweep(str(spec), folder, progress=False)
    assert not (tmp_path / "s.nc").exists()


def test_checkpoint_is_removed_only_after_the_result_is_written(tmp_path, monkeypatch, capsys):
    out, checkpoint = tmp_path / "run.nc", tmp_path / "run.ckpt"
    flags = [
        "train",
        *TINY_FLAGS,
        "--epochs",
        "2",
        "--out",
        str(out),
        "--checkpoint",
        str(checkpoint),
        "--checkpoint-every",
        "1",
    ]

    def full_disk(ds, path):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(initmem.sweeps.store, "write_run", full_disk)
        assert main(flags) == 2
    assert "error: --out: cannot write to" in _one_error_line(capsys)
    assert checkpoint.exists() and not out.exists()  # the finished run survives in its checkpoint
    assert main(flags) == 0  # resumes from the final checkpoint: nothing to train again
    assert out.exists() and not checkpoint.exists()
    reference = train(RunConfig.from_json(xr.load_dataset(out, engine="h5netcdf").attrs["config"]))
    _data_vars_equal(xr.load_dataset(out, engine="h5netcdf").drop_attrs(), reference.drop_attrs())


# --- kill at a random step, resume -> identical ----------------------------------------------------------
def test_run_killed_at_a_random_step_resumes_to_the_identical_result(tiny_config, tmp_path, monkeypatch):
    config = tiny_config.replace(epochs=3, checkpoint_every=1)
    reference = train(config)
    n_steps = 3 * 4  # 200 images / batch 50, 3 epochs
    kill_at = int(np.random.default_rng().integers(1, n_steps))
    calls = []
    real = initmem.run.loop.apply_lr_multiplier

    def killed(optimizer, factor):
        calls.append(1)
        if len(calls) == kill_at:
            raise KeyboardInterrupt(f"killed at step {kill_at}")
        real(optimizer, factor)

    checkpoint = tmp_path / "run.ckpt"
    with monkeypatch.context() as patch:
        patch.setattr(initmem.run.loop, "apply_lr_multiplier", killed)
        with pytest.raises(KeyboardInterrupt):
            train(config, checkpoint_path=checkpoint)
    assert checkpoint.exists() == (kill_at > 4), kill_at  # a checkpoint exists once the first epoch is done
    resumed = train(config, checkpoint_path=checkpoint)
    _data_vars_equal(resumed, reference)
    assert not checkpoint.exists()


def test_stale_checkpoint_temp_files_are_removed(tiny_config, tmp_path):
    checkpoint = tmp_path / "run.ckpt"
    stale = temp_name(checkpoint).with_name(f".run.ckpt.{socket.gethostname()}.{_dead_pid()}.0123456789abcdef.tmp")
    stale.write_bytes(b"half a checkpoint")
    live = stale.with_name(f".run.ckpt.{socket.gethostname()}.{os.getppid()}.0123456789abcdef.tmp")  # a live writer's
    live.write_bytes(b"being written")
    train(tiny_config.replace(epochs=1, checkpoint_every=1), checkpoint_path=checkpoint)
    assert not stale.exists() and live.exists()


def test_stale_temp_files_of_this_and_earlier_versions_are_removed_on_a_host_whose_name_has_dots(tmp_path, monkeypatch):
    from initmem.base.files import remove_stale_temp_files

    monkeypatch.setattr(initmem.base.files, "hostname", lambda: "node1.cluster.org")
    dead, live = _dead_pid(), os.getppid()
    stale = [f".o.nc.node1.cluster.org.{dead}.0123456789abcdef.tmp", f".o.nc.node1.cluster.org.{dead}.tmp"]
    kept = [
        f".o.nc.node1.cluster.org.{live}.0123456789abcdef.tmp",  # a live writer's
        f".o.nc.node2.cluster.org.{dead}.0123456789abcdef.tmp",  # another host's
        ".notes.tmp",
    ]
    for name in (*stale, *kept):
        (tmp_path / name).write_bytes(b"")
    remove_stale_temp_files(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)


# --- 5: killing a processes sweep stops its workers --------------------------------------------------------
_SWEEP_SCRIPT = """
import sys
from initmem.sweeps.driver import sweep
if __name__ == "__main__":
    base = dict(data="synthetic", width=4, image_size=16, train_size=200, val_size=100, test_size=100,
                train_eval_size=100, batch_size=50, epochs=int(sys.argv[3]), progress=False, device="cpu",
                num_threads=1)
    sweep({"base": base, "grid": {"sigma_w": [0.5, 1.0, 2.0, 2.5]}}, sys.argv[1], executor=sys.argv[2], workers=2,
          progress=False)
"""


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _live_workers(pid: int) -> list[psutil.Process]:
    """The live descendants of `pid` other than multiprocessing's resource tracker; a child that exits
    (or turns zombie) while it is being listed is not one."""
    workers = []
    for process in _descendants(pid):
        try:
            if "resource_tracker" not in " ".join(process.cmdline()):
                workers.append(process)
        except psutil.NoSuchProcess:  # ZombieProcess is one
            pass
    return workers


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["processes", "dask"])
def test_killing_a_parallel_sweep_stops_its_workers(tmp_path, executor):
    if executor == "dask":
        pytest.importorskip("distributed")
    script = tmp_path / "sweep_script.py"
    script.write_text(_SWEEP_SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    parent = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "cache"), executor, "500"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        workers: list[psutil.Process] = []
        while len(workers) < 2:  # both workers started (they import torch: seconds)
            assert parent.poll() is None, "the sweep ended before it was killed"
            assert time.monotonic() < deadline, "the workers did not start within 120 s"
            workers = _live_workers(parent.pid)
            time.sleep(0.2)
        time.sleep(1.0)  # let them start training
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 30  # they exit within a second; a loaded machine may delay the watchdog
        while any(_running(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        alive = [w.pid for w in workers if _running(w)]
    finally:
        for worker in _descendants(parent.pid) + workers:
            with contextlib.suppress(psutil.NoSuchProcess):
                if _running(worker):
                    worker.kill()
        parent.kill()
    assert not alive, f"workers {alive} outlived the killed sweep"


# --- 8: concurrent sweeps over one cache train each run once -----------------------------------------------
_COUNTING_SCRIPT = """
import logging, sys
from initmem.sweeps.driver import sweep
logging.basicConfig(level=logging.WARNING, format="%(message)s")
logging.getLogger("initmem.sweeps").setLevel(logging.INFO)
base = dict(data="synthetic", width=4, image_size=16, train_size=200, val_size=100, test_size=100,
            train_eval_size=100, batch_size=50, epochs=2, progress=False, device="cpu", num_threads=1)
ds = sweep({"base": base, "grid": {"sigma_w": [0.5, 1.0, 2.0, 2.5]}}, sys.argv[1], progress=False)
print("selected", list(ds["selected_test_acc"].values))
"""


@pytest.mark.slow
def test_concurrent_sweeps_over_one_cache_train_each_run_once(tmp_path):
    script = tmp_path / "count.py"
    script.write_text(_COUNTING_SCRIPT)
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    processes = [
        subprocess.Popen(
            [sys.executable, str(script), str(cache)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in processes]
    for process, (_, err) in zip(processes, outputs):
        assert process.returncode == 0, err
    trained = [line for _, err in outputs for line in err.splitlines() if line.startswith("trained run ")]
    assert len(trained) == 4 and len(set(trained)) == 4, trained  # each of the 4 runs trained exactly once
    assert outputs[0][0] == outputs[1][0]  # both sweeps return the same numbers
    assert sorted(p.name for p in cache.iterdir() if not p.name.startswith(".")) == sorted(
        f"{line.split()[-1]}.nc" for line in trained
    )  # no claim left behind


def test_a_claim_of_a_killed_holder_is_taken_over(tiny_config, tmp_path):
    config = tiny_config.replace(epochs=1)
    claim = RunClaim(run_path(tmp_path, config))
    claim.path.write_text(json.dumps({"host": socket.gethostname(), "pid": _dead_pid(), "started": time.time()}))
    assert claim.is_stale()
    ds = sweep({"base": config.to_dict()}, tmp_path, progress=False)
    assert ds.attrs["n_cached"] == 0 and run_path(tmp_path, config).exists() and not claim.path.exists()


def test_a_claim_of_another_host_is_stale_only_after_the_timeout(tmp_path):
    claim = RunClaim(tmp_path / "0123456789abcdef.nc", timeout_s=60)
    assert claim.path.name == "0123456789abcdef.claim"
    claim.path.write_text(json.dumps({"host": "another-host", "pid": 1, "started": time.time()}))
    assert not claim.is_stale() and not claim.acquire()
    old = time.time() - 120
    os.utime(claim.path, (old, old))
    assert claim.is_stale() and claim.acquire()
    assert claim.holder()["pid"] == os.getpid()
    claim.release()
    assert not claim.path.exists()


def test_a_live_claim_holder_keeps_its_claim(tmp_path):
    with RunClaim(tmp_path / "run.nc") as held:
        assert held.acquire()
        other = RunClaim(tmp_path / "run.nc")
        assert not other.is_stale() and not other.acquire()
    assert not held.path.exists()


# --- 6: diverged runs are excluded and counted ---------------------------------------------------------------
def test_summary_table_excludes_diverged_runs_and_counts_them():
    ds = fake_sweep({"sigma_w": [0.5, 1.0, 2.0], "seed": [0, 1, 2]})
    clean = summary_table(ds)
    assert clean["n_diverged"].item() == 0
    # seed 2 at sigma_w 2.0 diverged; an old file recorded its epoch-0 accuracy (10 %) instead of NaN
    diverged = ds.copy(deep=True)
    diverged["diverged"].loc[{"sigma_w": 2.0, "seed": 2}] = 1.0
    diverged["selected_test_acc"].loc[{"sigma_w": 2.0, "seed": 2}] = 10.0
    diverged["final_test_acc"].loc[{"sigma_w": 2.0, "seed": 2}] = 10.0
    table = summary_table(diverged)
    assert table["n_diverged"].item() == 1
    kept = ds["selected_test_acc"].sel(seed=[0, 1])
    per_seed = kept.max("sigma_w") - kept.min("sigma_w")  # seed 2 has no complete spread: it drops out
    assert table["selected_spread_pp"].item() == pytest.approx(float(per_seed.mean()))
    assert table["selected_n_seeds"].item() == 2
    assert spread(diverged).sel(seed=2).item() == pytest.approx(
        float(np.ptp(ds["selected_test_acc"].sel(seed=2, sigma_w=[0.5, 1.0]).values))
    )


# --- 7 and 10: one-line errors with exit 2 ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("flags", "expected", "before_training"),
    [
        (["--data", "/nonexistent/cifar"], "error: data: CIFAR-10 not found: /nonexistent/cifar does not exist", False),
        (["--train-size", "10000000"], "error: train_size: synthetic data has at most 50000", False),
        (["--test-size", "20000"], "error: test_size: synthetic data has at most 10000", False),
        (["--checkpoint", "CKPT"], "error: --checkpoint: needs --checkpoint-every", True),
        (["--checkpoint-every", "1"], "error: --checkpoint-every: needs --checkpoint FILE", True),
        (["--config", "BINARY"], "error: --config: ", True),
    ],
)
def test_recognised_errors_are_one_line_with_exit_2(flags, expected, before_training, tmp_path, capsys, monkeypatch):
    if before_training:
        _forbid_training(monkeypatch)
    (tmp_path / "binary.yaml").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00binary")
    flags = [{"CKPT": str(tmp_path / "ck"), "BINARY": str(tmp_path / "binary.yaml")}.get(f, f) for f in flags]
    assert main(["train", *TINY_FLAGS, "--epochs", "1", *flags, "--out", str(tmp_path / "o.nc")]) == 2
    assert expected in _one_error_line(capsys)
    assert not (tmp_path / "o.nc").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_cuda_without_a_gpu_is_one_line(tmp_path, capsys, monkeypatch):
    _forbid_training(monkeypatch)
    assert main(["train", *as_flags({**TINY_RUN, "device": "cuda"}), "--out", str(tmp_path / "o.nc")]) == 2
    assert "error: device: 'cuda' was requested but no CUDA device is available" in _one_error_line(capsys)


def test_failed_runs_of_a_sweep_are_one_line_and_finished_runs_are_kept(tmp_path, capsys):
    base = {k: v for k, v in RunConfig(**_TINY).to_dict().items() if k != "data"}
    spec = tmp_path / "spec.json"
    grid = {"data": ["synthetic", str(tmp_path / "nothing")]}  # the second run cannot find its data
    spec.write_text(json.dumps({"base": {**base, "epochs": 1}, "grid": grid}))
    assert main(["sweep", str(spec), "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "s.nc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("initmem sweep: error: 1 of 2 runs failed") and "DataError" in err[-1]
    assert "CIFAR-10 not found" in err[-1]
    assert len(list((tmp_path / "cache").glob("*.nc"))) == 1  # the finished run is kept
    assert not (tmp_path / "s.nc").exists()


# --- 10: config files: 1e-3, pipes, replay of a result file ------------------------------------------------------
def test_yaml_and_json_configs_accept_exponent_floats(tmp_path):
    (tmp_path / "run.yaml").write_text("optimizer: adam\nlr: 1e-3\neps: 1e-08\nweight_decay: 5E-4\nseed: 3\n")
    values = read_mapping_file(tmp_path / "run.yaml", "--config")
    assert values == {"optimizer": "adam", "lr": 0.001, "eps": 1e-8, "weight_decay": 5e-4, "seed": 3}
    assert isinstance(values["seed"], int)
    assert RunConfig.from_dict(values).lr == 0.001
    (tmp_path / "run.json").write_text(RunConfig(eps=1e-8, lr=1e-3).to_json())
    assert RunConfig.from_dict(read_mapping_file(tmp_path / "run.json", "--config")) == RunConfig(eps=1e-8, lr=1e-3)
    (tmp_path / "evil.yaml").write_text("lr: !!python/object/apply:os.system ['touch EXECUTED']\n")
    with pytest.raises(ConfigError, match="not valid JSON/YAML"):
        read_mapping_file(tmp_path / "evil.yaml", "--config")
    assert not (tmp_path / "EXECUTED").exists() and not Path("EXECUTED").exists()


def test_a_spec_can_come_from_a_pipe():
    read, write = os.pipe()
    os.write(write, b"base: {data: synthetic, lr: 1e-3}\ngrid: {sigma_w: [0.5, 1]}\n")
    os.close(write)
    try:
        spec = SweepSpec.from_file(f"/dev/fd/{read}")
    finally:
        os.close(read)
    assert spec.n_runs == 2 and spec.configs()[0][1].lr == 0.001


def test_train_config_result_file_replays_the_run_bit_for_bit(tmp_path, capsys):
    first, again = tmp_path / "first.nc", tmp_path / "again.nc"
    assert (
        main(
            [
                "train",
                *TINY_FLAGS,
                "--epochs",
                "2",
                "--optimizer",
                "adam",
                "--lr",
                "1e-3",
                "--sigma-w",
                "0.7",
                "--out",
                str(first),
            ]
        )
        == 0
    )
    assert main(["train", "--config", str(first), "--out", str(again)]) == 0
    a, b = (xr.load_dataset(p, engine="h5netcdf") for p in (first, again))
    assert a.attrs["config"] == b.attrs["config"] and a.attrs["config_hash"] == b.attrs["config_hash"]
    _data_vars_equal(a, b)
    # flags still override the replayed config
    assert main(["train", "--config", str(first), "--sigma-w", "0.9", "--out", str(tmp_path / "other.nc")]) == 0
    assert RunConfig.from_json(xr.load_dataset(tmp_path / "other.nc", engine="h5netcdf").attrs["config"]).sigma_w == 0.9


_TINY = {**TINY_RUN, "epochs": 1}


# --- 2: a planted CIFAR-10 batch file is refused, nothing executed -------------------------------------------
def test_a_planted_cifar_batch_pickle_is_refused_without_running_it(tmp_path):
    import pickle

    from initmem.run.data import decode, sources

    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    _Payload.marker = tmp_path / "executed"
    for name in sources.BATCH_FILES:
        with open(folder / name, "wb") as handle:
            pickle.dump({b"labels": [0], b"data": np.zeros((1, 3072), np.uint8), b"x": _Payload()}, handle)
    with open(folder / "batches.meta", "wb") as handle:
        pickle.dump({b"label_names": [b"c"] * 10}, handle)
    with pytest.raises(sources.DataError, match="refused to load posix.system|refused to load os.system"):
        decode._decode_batches(folder)
    assert not _Payload.marker.exists()


def test_runs_whose_recorded_losses_or_norms_exploded_count_as_diverged():
    # a file written before the trainer applied the divergence rule: finite, but 1e17 x its initial kernel norm
    from initmem.study.statistics.stats import diverged_runs

    ds = fake_sweep({"sigma_w": [0.5, 1.0, 2.0], "seed": [0, 1, 2]})
    blown = ds.copy(deep=True)
    at = {"sigma_w": 1.0, "seed": 1}
    blown["weight_norm"].loc[at] = blown["weight_norm"].loc[at] * np.r_[1.0, np.full(blown.sizes["epoch"] - 1, 1e17)]
    assert not bool(diverged_runs(ds).any())
    assert diverged_runs(blown).sum().item() == 1 and bool(diverged_runs(blown).sel(at))
    table = summary_table(blown)
    assert table["n_diverged"].item() == 1 and table["selected_n_seeds"].item() == 2


# --- issue 24: claims with a heartbeat, across hosts ------------------------------------------------------------
def test_a_claim_records_its_holder_and_beats(tmp_path):
    from initmem.base.files import process_start

    claim = RunClaim(tmp_path / "run.nc", timeout_s=0.4)  # a heartbeat every 0.1 s
    assert claim.acquire()
    try:
        holder = claim.holder()
        assert holder["host"] == socket.gethostname() and holder["pid"] == os.getpid()
        assert holder["pid_start"] == process_start(os.getpid()) is not None
        old = time.time() - 3600
        os.utime(claim.path, (old, old))
        deadline = time.monotonic() + 30
        while claim.path.stat().st_mtime == old:  # the holder's heartbeat touches it again
            assert time.monotonic() < deadline, "no heartbeat"
            time.sleep(0.05)
        assert not RunClaim(tmp_path / "run.nc", timeout_s=0.4).acquire()
    finally:
        claim.release()
    assert not claim.path.exists()


def test_a_claim_whose_pid_now_belongs_to_another_process_is_stale(tmp_path):
    from initmem.base.files import process_start

    live = os.getppid()  # a live process of this host
    claim = RunClaim(tmp_path / "run.nc")
    claim.path.write_text(
        json.dumps(
            {"host": socket.gethostname(), "pid": live, "pid_start": process_start(live), "started": time.time()}
        )
    )
    assert claim.stale_reason() is None and not claim.acquire()  # its own process: alive
    claim.path.write_text(
        json.dumps({"host": socket.gethostname(), "pid": live, "pid_start": "another-boot:1", "started": time.time()})
    )  # a pid reused since (a container restart, say)
    assert claim.stale_reason() == f"pid {live} now belongs to another process"
    assert claim.acquire() and claim.holder()["pid"] == os.getpid()
    claim.release()


_ME = {"host": socket.gethostname(), "pid": os.getpid()}


@pytest.mark.parametrize(
    "content",
    [
        "",  # a full disk, a holder killed while writing it
        "{not json",
        "[1, 2]",
        json.dumps({**_ME, "pid": 1180591620717411303424}),  # os.kill raised OverflowError
        json.dumps({**_ME, "pid": 0}),  # os.kill(0, 0) signals the whole process group
        json.dumps({**_ME, "pid": True}),
        json.dumps({**_ME, "pid": 2**22 + 1}),
        json.dumps({**_ME, "started": 10**400}),
        json.dumps({**_ME, "pad": "x" * 4096}),  # longer than a claim is
    ],
    ids=["empty", "not json", "a list", "pid 2**70", "pid 0", "pid true", "pid 2**22 + 1", "started 1e400", "5 KiB"],
)
def test_an_empty_or_unreadable_claim_is_stale_after_the_heartbeat_timeout(tmp_path, content):
    claim = RunClaim(tmp_path / "run.nc", timeout_s=60)
    claim.path.write_text(content)
    assert claim.holder() == {} and claim.describe().startswith("an empty or unreadable claim")
    assert not claim.is_stale() and not claim.acquire()  # fresh: perhaps being written
    old = time.time() - 61
    os.utime(claim.path, (old, old))
    assert claim.stale_reason() == "no heartbeat for 61 s (timeout 60 s)"
    assert claim.acquire()
    claim.release()


def test_a_pid_outside_the_systems_range_is_never_signalled(tmp_path):
    from initmem.base.claims import remove_stale_claims
    from initmem.base.files import process_alive, remove_stale_temp_files

    assert process_alive(os.getpid())
    for pid in (0, -1, 2**22 + 1, 1180591620717411303424):
        assert not process_alive(pid), pid
    huge = tmp_path / f".run.ckpt.{socket.gethostname()}.1180591620717411303424.0123456789abcdef.tmp"
    huge.write_bytes(b"")
    remove_stale_temp_files(tmp_path)
    assert not huge.exists()
    fresh = tmp_path / "0123456789abcdef.claim"
    fresh.write_text(json.dumps({**_ME, "pid": 1180591620717411303424}))
    remove_stale_claims(tmp_path)  # unreadable but fresh: kept until its heartbeat times out
    assert fresh.exists()


def test_a_claim_whose_heartbeat_is_ahead_of_the_clock_is_taken_over_once_it_has_not_moved_for_the_timeout(
    tmp_path, caplog
):
    clock = [1_000_000_000.0]
    claim = RunClaim(tmp_path / "run.nc", timeout_s=60, clock=lambda: clock[0])
    claim.path.write_text(json.dumps({"host": "another-host", "pid": 1, "started": clock[0]}))
    tomorrow = clock[0] + 86_400
    os.utime(claim.path, (tomorrow, tomorrow))
    with caplog.at_level(logging.WARNING):
        assert claim.stale_reason() is None and not claim.acquire()
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1 and warned[0].startswith(f"the claim {claim.path} has a heartbeat 86400 s ahead of this ")
    assert claim.describe().endswith("last heartbeat 86400 s ahead of this host's clock")
    clock[0] += 40
    os.utime(claim.path, (tomorrow + 40, tomorrow + 40))  # its heartbeat moves: a holder is alive
    assert claim.stale_reason() is None
    clock[0] += 50
    assert claim.stale_reason() is None  # not moved for 50 s of this clock
    assert len(caplog.records) == 1  # said once
    clock[0] += 11
    assert claim.stale_reason() == (
        "its heartbeat is 86339 s ahead of this host's clock and has not moved for 61 s (timeout 60 s)"
    )
    assert claim.acquire() and claim.holder()["pid"] == os.getpid()
    claim.release()
    assert not claim.path.exists()
    claim.path.write_text(json.dumps({"host": "another-host", "pid": 1}))
    os.utime(claim.path, (clock[0] + 59, clock[0] + 59))  # within the skew allowed between hosts: alive
    assert claim.stale_reason() is None and claim.describe().endswith("last heartbeat 0 s ago")


@pytest.mark.timeout(120)  # before: a FIFO was read until a writer came, a folder was waited on forever
@pytest.mark.parametrize("kind", ["fifo", "folder", "old folder", "link to a fifo", "link to a claim"])
def test_a_fifo_folder_or_link_at_a_claims_path_is_taken_over_at_once(tiny_config, tmp_path, caplog, kind):
    config = tiny_config.replace(epochs=1)
    cache = tmp_path / "cache"
    cache.mkdir()
    path = RunClaim(run_path(cache, config)).path
    elsewhere = tmp_path / "elsewhere"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind.endswith("folder"):
        path.mkdir()
        (path / "inside").write_text("kept")
        if kind == "old folder":
            os.utime(path, (time.time() - 3600,) * 2)
    elif kind == "link to a fifo":
        os.mkfifo(elsewhere)
        path.symlink_to(elsewhere)
    else:  # a live holder's claim, elsewhere: never believed through a link
        elsewhere.write_text(json.dumps({**_ME, "started": time.time()}))
        path.symlink_to(elsewhere)
    with caplog.at_level(logging.INFO, logger="initmem.base.claims"):
        ds = sweep({"base": config.to_dict()}, cache, progress=False)
    assert ds.attrs["n_cached"] == 0 and run_path(cache, config).exists() and not os.path.lexists(path)
    removed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("removing the claim")]
    assert len(removed) == 1 and removed[0].endswith("): not a claim file"), caplog.text
    if kind.endswith("folder"):
        assert (path.with_name(path.name + ".rejected") / "inside").read_text() == "kept"
    if kind.startswith("link"):
        assert os.path.lexists(elsewhere)


def test_a_folder_at_a_claims_path_that_cannot_be_moved_aside_is_one_line(tmp_path, capsys, monkeypatch):
    _forbid_training(monkeypatch)
    cache = tmp_path / "cache"
    (cache / "0123456789abcdef.claim").mkdir(parents=True)
    (cache / "0123456789abcdef.claim.rejected" / "inside").mkdir(parents=True)  # the place aside is taken
    os.utime(cache / "0123456789abcdef.claim", (time.time() - 3600,) * 2)  # before: IsADirectoryError, each sweep
    spec = tmp_path / "spec.yaml"
    spec.write_text(json.dumps({"base": _TINY}))
    assert main(["sweep", str(spec), "--cache", str(cache), "--out", str(tmp_path / "s.nc")]) == 2
    line = _one_error_line(capsys)
    assert f"error: cache: cannot remove the stale claim {cache / '0123456789abcdef.claim'} (" in line
    assert line.endswith("; remove it by hand")


def test_a_sweep_waiting_on_a_claim_says_which_run_which_holder_and_how_long(
    tiny_config, tmp_path, caplog, monkeypatch
):
    import threading

    monkeypatch.setattr(initmem.sweeps.executors, "CLAIM_REPORT_S", 0.5)
    config = tiny_config.replace(epochs=1)
    held = RunClaim(run_path(tmp_path, config))
    assert held.acquire()  # "another sweep" of this process: alive, beating
    threading.Timer(2.0, held.release).start()
    with caplog.at_level(logging.WARNING):  # normal verbosity
        ds = sweep({"base": config.to_dict()}, tmp_path, progress=False)
    assert ds.attrs["n_cached"] == 0
    waits = [
        r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "waiting for run" in r.getMessage()
    ]
    assert waits, caplog.text
    assert waits[0].startswith(
        f"waiting for run {config.hash()}, claimed by another sweep (host "
        f"{socket.gethostname()}, pid {os.getpid()}, claimed "
    )
    assert re.search(r"for \d+ s so far", waits[-1])


def test_stale_claims_left_in_a_cache_are_removed_by_the_next_sweep(tiny_config, tmp_path):
    config = tiny_config.replace(epochs=1)
    stale = tmp_path / "0123456789abcdef.claim"
    stale.write_text(json.dumps({"host": socket.gethostname(), "pid": _dead_pid(), "started": time.time()}))
    sweep({"base": config.to_dict()}, tmp_path, progress=False)
    assert not stale.exists() and not list(tmp_path.glob("*.claim"))


# --- issue 24: blown-up runs, from the command line -------------------------------------------------------------
def test_a_sweep_at_lr_1e6_reports_its_runs_diverged_and_no_spread(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(json.dumps({"base": {**_TINY, "epochs": 2, "lr": 1e6}, "grid": {"sigma_w": [0.5, 2.0]}}))
    assert main(["sweep", str(spec), "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "s.nc")]) == 0
    out = capsys.readouterr().out
    table = out.splitlines()[-1].split()
    header = out.splitlines()[-2]
    assert header.split()[-1] == "diverged" and table[-1] == "2", out  # both runs
    assert table[1] == "NaN", out  # no selected spread from blown-up runs
    ds = xr.load_dataset(tmp_path / "s.nc", engine="h5netcdf")
    assert ds["diverged"].values.tolist() == [1.0, 1.0] and np.isnan(ds["selected_test_acc"].values).all()


@pytest.mark.timeout(30)  # the wait below lasts 60 s unless the signal wakes it
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupt_raised_inside_a_finaliser_still_stops_the_command(signum):
    """A signal whose handler runs inside a finaliser (here a ``__del__``; in a dask sweep it was a WeakValueDictionary's
    weakref callback) has its exception ignored by Python: the command must still stop, with that signal's number,
    even from a blocking wait."""
    from initmem.cli import Interrupted, _interruptible

    class SignalsWhileFinalised:
        def __del__(self):
            os.kill(os.getpid(), signum)
            for _ in range(100_000):  # the handler runs at one of these steps, inside __del__
                pass

    handler, hook = signal.getsignal(signum), sys.unraisablehook
    with pytest.raises(Interrupted) as caught, _interruptible():
        SignalsWhileFinalised()  # dropped at once: __del__ runs here
        threading.Event().wait(timeout=60)  # blocked, as a sweep waiting for its workers: the signal must wake it
        pytest.fail("the wait ran to its timeout: the signal was not delivered again")
    assert caught.value.signum == signum
    assert signal.getsignal(signum) is handler and sys.unraisablehook is hook  # both restored


def test_an_interrupted_dask_sweep_kills_its_own_workers_and_no_other_child_of_the_process():
    """The nannies of the LocalCluster a sweep started know their workers' pids: those are killed, and a child of the
    same process that the cluster did not start (a notebook kernel's own, say) keeps running."""
    import multiprocessing
    from types import SimpleNamespace

    context = multiprocessing.get_context("spawn")
    worker, other = context.Process(target=time.sleep, args=(60,)), context.Process(target=time.sleep, args=(60,))
    worker.start(), other.start()
    try:
        cluster = SimpleNamespace(workers={"0": SimpleNamespace(pid=worker.pid), "1": SimpleNamespace(pid=None)})
        initmem.sweeps.workers.kill_workers_of(cluster)
        worker.join(timeout=10)
        assert worker.exitcode == -signal.SIGKILL and other.is_alive()
    finally:
        for process in (worker, other):
            process.kill()
            process.join()


# --- issue 24: SIGINT and SIGTERM to a sweep's parent ------------------------------------------------------------
_LONG = {**_TINY, "epochs": 1}


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["serial", "processes", "dask"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_to_a_sweep_stops_its_workers_with_one_line_and_keeps_finished_runs(tmp_path, executor, signum):
    if executor == "dask":
        pytest.importorskip("distributed")
    spec = tmp_path / "spec.yaml"  # two runs of 1 epoch finish first; two of 500 epochs are running when it stops
    spec.write_text(json.dumps({"base": _LONG, "grid": {"epochs": [1, 500], "sigma_w": [0.5, 2.0]}}))
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    parent = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "initmem",
            "sweep",
            str(spec),
            "--cache",
            str(cache),
            "--executor",
            executor,
            "--workers",
            "2",
            "--out",
            str(tmp_path / "s.nc"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    workers: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 240
        while len(list(cache.glob("*.nc"))) < 2 or not list(cache.glob("*.claim")):  # finished runs, one in flight
            assert parent.poll() is None, parent.communicate()
            assert time.monotonic() < deadline, "the short runs did not finish within 240 s"
            time.sleep(0.1)
        workers = _live_workers(parent.pid)
        assert executor == "serial" or workers
        os.kill(parent.pid, signum)  # the parent alone, as a Jupyter interrupt does
        out, err = parent.communicate(timeout=120)
        _, alive = psutil.wait_procs(workers, timeout=30)
        alive = [w.pid for w in alive if _running(w)]
    finally:
        for process in [*_descendants(parent.pid), *workers]:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        parent.kill()
        parent.wait()
    name = signal.Signals(signum).name
    assert parent.returncode == 128 + signum, err
    assert err.strip() == (
        f"initmem sweep: interrupted by {name}; the finished runs are kept in {cache}; a rerun trains only the others"
    ), err
    assert not alive, f"workers {alive} outlived the interrupted sweep"
    finished = list(cache.glob("*.nc"))
    assert len(finished) >= 2 and all(load_run(p) is not None for p in finished)
    assert not list(cache.glob("*.claim")) and not (tmp_path / "s.nc").exists()


# --- issue 34: SIGINT to initmem experiments while a notebook's kernel runs a cell -----------------------------------
_BUSY_NOTEBOOK = """\
# %% tags=["parameters"]
marker = "busy.started"

# %%
import time
from pathlib import Path

Path(marker).touch()
try:
    time.sleep(600)
except KeyboardInterrupt:  # a graceful shutdown interrupts the kernel first: the cell ends a moment later, replying
    time.sleep(1.0)
"""


@pytest.mark.slow
def test_sigint_to_initmem_experiments_mid_cell_is_one_line_and_130_without_a_kernel_traceback(tmp_path):
    """Papermill shut the kernel down gracefully in the middle of its cell (an interrupt, then a shutdown request): a
    cell that ended after the kernel had closed its sockets made it print a 19-line ZMQ traceback before the command's
    line. The kernel is now killed at once. The notebook, of a repository made here, is busy in its cell until then."""
    pytest.importorskip("papermill")
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "initmem"\n')
    (root / "notebooks" / "Z1_busy.py").write_text(_BUSY_NOTEBOOK)
    command = [sys.executable, "-m", "initmem", "experiments", "--preset", "smoke", "--only", "Z1", "--no-render"]
    command += ["--results-dir", str(tmp_path / "results"), "--out-dir", str(tmp_path / "out"), "--root", str(root)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    parent = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    family: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 240
        while not (root / "busy.started").exists():  # the kernel runs the notebook's cell (in the root)
            assert parent.poll() is None, parent.communicate()
            assert time.monotonic() < deadline, "the kernel did not start the cell within 240 s"
            time.sleep(0.05)
        family = _descendants(parent.pid)  # the kernel
        assert family
        parent.send_signal(signal.SIGINT)  # the command alone, as a Jupyter interrupt does (Ctrl-C: its group)
        _, err = parent.communicate(timeout=120)
        _, alive = psutil.wait_procs(family, timeout=30)
    finally:
        for process in [*_descendants(parent.pid), *family]:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        parent.kill()
        parent.wait()
    assert parent.returncode == 130, err
    assert "Traceback" not in err and "zmq" not in err.lower(), err
    bars = re.compile(r"\d+/\d+ \[[\d:]+<")  # the progress bar of the notebooks, drawn on stderr
    lines = [line for line in re.split(r"[\r\n]", err) if line.strip() and not bars.search(line)]
    assert lines == [
        "initmem experiments: interrupted by SIGINT; the finished runs are kept in the results folder; a rerun trains "
        "only the others"
    ], err
    assert not [p.pid for p in alive if _running(p)], "the kernel outlived the command"


# --- issue 24: outputs that are not regular files ------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["symlink", "fifo", "device", "socket"])
@pytest.mark.parametrize("command", ["train", "sweep"])
def test_out_naming_a_symlink_fifo_device_or_socket_is_refused_before_training(
    tmp_path, monkeypatch, capsys, kind, command
):
    _forbid_training(monkeypatch)
    out = tmp_path / "out.nc"
    target = tmp_path / "precious.txt"
    target.write_text("kept")
    if kind == "symlink":
        out.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(out)
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(out, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers, in tmp_path
    else:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(out))
        server.close()
    spec = tmp_path / "spec.yaml"
    spec.write_text(json.dumps({"base": _TINY}))
    args = ["train", *TINY_FLAGS] if command == "train" else ["sweep", str(spec), "--cache", str(tmp_path / "c")]
    assert main([*args, "--out", str(out)]) == 2
    expected = {
        "symlink": "a symlink",
        "fifo": "a FIFO (named pipe)",
        "device": "a character device",
        "socket": "a socket",
    }[kind]
    assert f"error: --out: {out} is {expected}, not a regular file" in _one_error_line(capsys)
    assert os.path.lexists(out) and not stat.S_ISREG(os.lstat(out).st_mode) and target.read_text() == "kept"


def test_the_atomic_writer_never_replaces_a_symlink(tmp_path):
    from initmem.base.files import atomic_write

    target = tmp_path / "target"
    target.write_text("kept")
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(OutputError, match="is a symlink, not a regular file"):
        atomic_write(link, lambda handle: handle.write(b"new"))
    assert link.is_symlink() and target.read_text() == "kept" and not list(tmp_path.glob(".*.tmp"))


# --- issue 34: links planted at temporary and probe names ------------------------------------------------------
def _plant(at: Path, target: Path, kind: str) -> None:
    """A symlink to ``target``, or a FIFO, at ``at``."""
    if kind == "symlink":
        at.symlink_to(target)
    else:
        os.mkfifo(at)


@pytest.mark.timeout(120)  # a FIFO opened for writing blocks until a reader comes: none will
@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_links_planted_at_the_old_temporary_and_probe_names_are_not_followed(tmp_path, capsys, kind):
    folder, target = tmp_path / "d", tmp_path / "precious.txt"
    folder.mkdir()
    target.write_text("kept")
    host, pid = socket.gethostname(), os.getpid()
    planted = [folder / f".{name}.{host}.{pid}.tmp" for name in ("o.nc", "probe")]  # the names once used
    for at in planted:
        _plant(at, target, kind)
    out = folder / "o.nc"
    assert main(["train", *TINY_FLAGS, "--epochs", "1", "--out", str(out)]) == 0
    assert target.read_text() == "kept"
    assert stat.S_ISREG(os.lstat(out).st_mode) and load_run(out) is not None
    assert all(os.path.lexists(at) for at in planted)  # left alone
    assert not [p for p in folder.glob(".*.tmp") if p not in planted]  # and no temporary file of ours is left


def test_a_link_planted_at_a_temporary_or_probe_name_is_never_opened(tmp_path, monkeypatch):
    from initmem.base.files import atomic_write, check_output_file

    monkeypatch.setattr(initmem.base.files.secrets, "token_hex", lambda n: "0" * 2 * n)  # the names made guessable
    target = tmp_path / "precious.txt"
    target.write_text("kept")
    out = tmp_path / "d" / "o.nc"
    out.parent.mkdir()
    probe = temp_name(out.parent / "probe")
    probe.symlink_to(target)
    with pytest.raises(OutputError, match=r"--out: cannot write to .*o\.nc \(File exists\)"):
        check_output_file(out, "--out")
    probe.unlink()
    temp_name(out).symlink_to(target)
    with pytest.raises(FileExistsError):
        atomic_write(out, lambda handle: handle.write(b"new"))
    assert target.read_text() == "kept" and not os.path.lexists(out)


# --- issue 34: inputs are bounded -------------------------------------------------------------------------------
def test_specs_and_configs_are_read_up_to_1_mib_and_never_from_a_device(tmp_path, capsys, monkeypatch):
    _forbid_training(monkeypatch)
    big = tmp_path / "big.yaml"
    big.write_text("base: {data: synthetic}\n" + "# a comment\n" * 100_000)  # valid YAML, 1.2 MB
    out = ["--out", str(tmp_path / "o.nc")]
    sweep_of = ["--cache", str(tmp_path / "c"), *out]
    assert main(["sweep", str(big), *sweep_of]) == 2
    assert _one_error_line(capsys).endswith(
        f"error: sweep spec: {big} is larger than 1 MiB; a config or sweep spec is a few KiB"
    )
    assert main(["train", *TINY_FLAGS, "--config", str(big), *out]) == 2
    assert f"error: --config: {big} is larger than 1 MiB" in _one_error_line(capsys)
    for argv, what in (
        (["sweep", "/dev/zero", *sweep_of], "sweep spec"),
        (["train", "--config", "/dev/zero", *out], "--config"),
    ):
        assert main(argv) == 2
        assert _one_error_line(capsys).endswith(
            f"error: {what}: /dev/zero is a character device, not a file; give a JSON/YAML file or a pipe"
        )
    assert not (tmp_path / "o.nc").exists()


def _alias_bomb(levels: int) -> str:
    """A YAML "billion laughs": ``width`` is a list nested ``levels`` deep, 9 items a level, in a few hundred bytes."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join([*lines, f"width: *l{levels - 1}"]) + "\n"


def test_a_yaml_alias_bomb_is_one_line_and_no_error_formats_a_whole_value(tmp_path, capsys, monkeypatch):
    from initmem.cli.experiments import parse_parameter_value

    _forbid_training(monkeypatch)
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_alias_bomb(5))  # 9**5 items once expanded (9**9 took minutes and all memory to format)
    out = ["--out", str(tmp_path / "o.nc")]
    assert main(["train", "--config", str(bomb), *out]) == 2
    assert _one_error_line(capsys).endswith(
        f"error: --config: {bomb} uses a YAML alias (*l0, line 2); aliases are not accepted, write the values out"
    )
    assert parse_parameter_value(_alias_bomb(5)) == _alias_bomb(5)  # -p: not YAML to us, a string
    long = tmp_path / "long.json"
    long.write_text(json.dumps({"width": list(range(100_000))}))
    assert main(["train", "--config", str(long), *out]) == 2
    assert _one_error_line(capsys).endswith("error: width: must be an integer or null, got [0, 1, 2, 3, 4, 5, ...]")
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"base": _TINY, "grid": {"sigma_w": [[0.5] * 100_000]}}))
    assert main(["sweep", str(spec), "--cache", str(tmp_path / "c"), *out]) == 2
    line = _one_error_line(capsys)
    assert len(line) < 200 and line.endswith("got [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, ...]"), line
    digits = tmp_path / "digits.yaml"
    digits.write_text("width: " + "1" * 5000 + "\n")  # an int str() refuses: a ValueError out of the loader
    assert main(["train", "--config", str(digits), *out]) == 2
    assert f"error: --config: {digits} is not valid JSON/YAML (Exceeds the limit (4300 digits)" in _one_error_line(
        capsys
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("sigma_w: " + "9" * 400, "error: sigma_w: must be a finite number, got 99999999"),  # OverflowError before
        ('betas: ["a", 0.9]', "error: betas: must be a list of numbers, got ['a', 0.9]"),  # ValueError before
        ("betas: [[0.9], 0.9]", "error: betas: must be a list of numbers, got [[0.9], 0.9]"),  # TypeError before
        ("1: 2\nwidht: 4", "error: 1: unknown field; known fields are "),  # TypeError (sorting 1 and 'widht') before
    ],
    ids=["a 400-digit float", "a string in betas", "a list in betas", "a number as a key"],
)
def test_a_config_value_python_cannot_convert_is_one_line(tmp_path, capsys, monkeypatch, content, expected):
    _forbid_training(monkeypatch)
    config = tmp_path / "run.yaml"
    config.write_text(content + "\n")
    assert main(["train", "--config", str(config), "--out", str(tmp_path / "o.nc")]) == 2
    assert expected in _one_error_line(capsys)


@pytest.mark.timeout(60)  # before: 300 s and 2.2 GB without a word, building every run's config
def test_a_sweep_of_too_many_runs_is_refused_from_its_lists_lengths(tmp_path, capsys, monkeypatch):
    _forbid_training(monkeypatch)
    spec = tmp_path / "spec.yaml"
    values = [round(0.01 * (i + 1), 2) for i in range(100)]
    spec.write_text(json.dumps({"base": _TINY, "grid": {"sigma_w": values, "lr": values, "seed": list(range(100))}}))
    assert main(["sweep", str(spec), "--cache", str(tmp_path / "c"), "--out", str(tmp_path / "o.nc")]) == 2
    assert _one_error_line(capsys).endswith(
        "error: sweep spec: 1,000,000 runs (100 x 100 x 100) are more than the 100,000 a sweep may have; split it "
        "into several sweeps"
    )


def test_initmem_sweep_says_what_it_will_train_and_about_how_long_before_training(tmp_path, capsys, monkeypatch):
    import initmem.sweeps.driver

    spec = tmp_path / "spec.yaml"
    spec.write_text(json.dumps({"base": _TINY, "grid": {"sigma_w": [0.5, 1.0, 2.0]}}))
    cache = tmp_path / "cache"
    cache.mkdir()
    run_path(cache, SweepSpec.from_file(spec).configs()[0][1]).write_bytes(b"")  # one run counts as cached
    said: list[str] = []

    def stop(*args, **kwargs):
        said.append(capsys.readouterr().out)
        raise KeyboardInterrupt  # what a user would do: nothing trains

    monkeypatch.setattr(initmem.sweeps.driver, "train_jobs", stop)
    assert main(["sweep", str(spec), "--cache", str(cache), "--out", str(tmp_path / "o.nc")]) == 130
    price = r"(about \d+ core-s \(p10-p90 \d+-\d+\)|under 1 core-s), under 1 A100-s"
    assert re.fullmatch(rf"spec\.yaml: 3 runs: 1 in its own cache, 2 to train \({price}\)\n", said[0])


# --- issue 34: a disk that fills up in the middle of a sweep ---------------------------------------------------------
@pytest.fixture()
def small_disk(tmp_path):
    """A 3 MB tmpfs at ``tmp_path / "disk"``, unmounted afterwards; the test is skipped where it cannot be mounted
    (mounting needs root)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if shutil.which("mount") is None or shutil.which("umount") is None:
        pytest.skip("mount/umount are not installed")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip() or mounted.returncode}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


@pytest.mark.timeout(300)
def test_a_disk_that_fills_up_mid_sweep_is_one_line_loses_nothing_and_the_rerun_completes(small_disk, tmp_path):
    spec = tmp_path / "s8.yaml"
    grid = {"sigma_w": [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0]}
    spec.write_text(json.dumps({"base": {**_TINY, "epochs": 2}, "grid": grid}))
    cache, out = small_disk / "cache", tmp_path / "o.nc"
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * (shutil.disk_usage(small_disk).free - 75 * 1024))  # room for two runs or so
    command = [sys.executable, "-m", "initmem", "sweep", str(spec), "--cache", str(cache), "--out", str(out)]
    full = subprocess.run(command, capture_output=True, text=True, timeout=240)  # its own process: it crashed
    assert full.returncode == 2, full.stderr[-3000:]  # before: SIGSEGV after HDF5's "No space left on device"
    assert re.fullmatch(
        rf"initmem sweep: error: cache_dir: no space left in {re.escape(str(cache))} \(writing run [0-9a-f]{{16}}: No "
        r"space left on device\); the runs finished are kept there, a rerun trains only the others: free some space "
        r"first",
        full.stderr.strip(),  # one line
    ), full.stderr
    kept = {p.name: p.read_bytes() for p in cache.glob("*.nc")}
    assert 0 < len(kept) < 8 and all(load_run(cache / name) is not None for name in kept)
    assert sorted(p.name for p in cache.iterdir()) == sorted(kept)  # no half-written file, no claim left behind
    assert not out.exists()
    filler.unlink()
    again = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.startswith(f"s8.yaml: 8 runs: {len(kept)} in its own cache, {8 - len(kept)} to train")
    assert all((cache / name).read_bytes() == content for name, content in kept.items())  # not trained again
    assert len(list(cache.glob("*.nc"))) == 8 and xr.load_dataset(out, engine="h5netcdf").sizes["sigma_w"] == 8


def test_a_claim_that_cannot_be_written_on_a_full_disk_is_not_left_to_be_waited_on(small_disk):
    (small_disk / "filler").write_bytes(b"\0" * shutil.disk_usage(small_disk).free)
    claim = RunClaim(small_disk / "run.nc")
    with pytest.raises(OSError, match="No space left on device"):
        claim.acquire()
    assert not os.path.lexists(claim.path)  # before: an empty claim, that every sweep waited on for 120 s


# --- issue 24: out of memory, an oversized image, a checkpoint that does not fit its model ----------------------------
def test_a_run_that_does_not_fit_in_memory_is_one_line(tmp_path, capsys):
    assert main(["train", *TINY_FLAGS, "--width", "200000", "--epochs", "1", "--out", str(tmp_path / "o.nc")]) == 2
    line = _one_error_line(capsys)
    assert "error: memory: the run does not fit in the memory of device 'cpu'" in line
    assert "resnet9 at width 200000" in line and "reduce width or batch_size" in line
    assert not (tmp_path / "o.nc").exists()


def _png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` pixels (no image data: a decompression bomb's front)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def test_an_oversized_image_in_an_archive_is_one_line(tmp_path, capsys, monkeypatch):
    import io
    import tarfile

    archive = tmp_path / "images.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name in ("train/cat/0.png", "test/cat/0.png"):
            data = _png_header(40000, 40000)
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    monkeypatch.setenv("HOME", str(tmp_path))  # any decoded-data cache stays in tmp_path
    flags = [f for f in TINY_FLAGS if f != "synthetic"]
    flags[flags.index("--data") + 1 : flags.index("--data") + 1] = [str(archive)]
    assert main(["train", *flags, "--epochs", "1", "--out", str(tmp_path / "o.nc")]) == 2
    line = _one_error_line(capsys)
    assert "train/cat/0.png: refused before decoding, not a 32x32 image (Image size (1600000000 pixels) exceeds" in line


def test_a_checkpoint_that_does_not_fit_its_model_is_set_aside_and_the_run_restarts(tmp_path, caplog):
    config_flags = [*TINY_FLAGS, "--epochs", "2", "--checkpoint-every", "1"]
    checkpoint = tmp_path / "run.ckpt"
    config = RunConfig.from_dict({**_TINY, "epochs": 2, "checkpoint_every": 1})
    train(config, checkpoint_path=checkpoint, keep_checkpoint=True)
    state = torch.load(checkpoint, weights_only=True)
    removed = next(iter(state["model"]))
    del state["model"][removed]  # one tensor removed
    torch.save(state, checkpoint)
    out = tmp_path / "run.nc"
    with caplog.at_level(logging.WARNING):
        assert main(["train", *config_flags, "--checkpoint", str(checkpoint), "--out", str(out)]) == 0
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and "\n" not in lines[0], lines  # one line, then the run trains from scratch
    line = lines[0]
    assert f"ignoring checkpoint {checkpoint} of run {config.hash()}: its model state lacks {removed!r}" in line
    assert "moved to run.ckpt.rejected, training starts fresh" in line
    assert checkpoint.with_name("run.ckpt.rejected").exists() and not checkpoint.exists()
    _data_vars_equal(xr.load_dataset(out, engine="h5netcdf").drop_attrs(), train(config).drop_attrs())


# --- issue 24: API misuse, JSON specs, make clean -------------------------------------------------------------------
def test_train_given_something_else_than_a_run_config_says_what_it_takes():
    with pytest.raises(
        TypeError, match=r"train: takes a RunConfig, e.g. train\(RunConfig\(model='resnet9'.*got str 'resnet9'"
    ):
        train("resnet9")


def test_a_json_spec_is_parsed_as_json(tmp_path, capsys, monkeypatch):
    _forbid_training(monkeypatch)
    spec = tmp_path / "spec.json"
    spec.write_text('{"base": {"data": "synthetic", "width": 4,}, "grid": {"sigma_w": [0.5, 1.0]}}')  # trailing comma
    assert main(["sweep", str(spec), "--cache", str(tmp_path / "c"), "--out", str(tmp_path / "s.nc")]) == 2
    assert (
        f"error: sweep spec: {spec} is not valid JSON (line 1 column 43: Expecting property name enclosed in "
        f"double quotes)"
    ) in _one_error_line(capsys)
    yaml_spec = tmp_path / "spec.yaml"
    yaml_spec.write_text("base: {data: synthetic, width: 4,}\ngrid: {sigma_w: [0.5, 1.0]}\n")  # YAML allows it
    assert SweepSpec.from_file(yaml_spec).n_runs == 2


def test_make_clean_removes_only_untracked_build_output(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    repo = Path(__file__).resolve().parents[1]
    shutil.copy(repo / "Makefile", tmp_path / "Makefile")
    record = tmp_path / "book" / "generated" / "01_optimizers.ipynb"
    leftovers = [
        tmp_path / "_build" / "html" / "index.html",
        tmp_path / "book" / "generated" / "_failed" / "x.ipynb",
        tmp_path / "book" / "generated" / ".x.running.ipynb",
        tmp_path / ".pytest_cache" / "v",
    ]
    for path in (record, *leftovers):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    subprocess.run(["make", "-s", "clean"], cwd=tmp_path, check=True, capture_output=True)
    assert record.read_text() == "{}", "make clean deleted the committed executed notebooks"
    assert not any(path.exists() for path in leftovers)


# --- issue 46: no traceback, no trap ------------------------------------------------------------------------------
_REPO = Path(__file__).resolve().parents[1]


def _capped_initmem(*args: str, cwd: Path = _REPO, python: list[str] | None = None) -> subprocess.CompletedProcess:
    """``python -m initmem ARGS`` in a subprocess whose address space is capped at 4 GB, so that a command that would
    allocate without bound fails there rather than waking the machine's OOM killer. ``python``: code the
    interpreter runs first (``-c``), before the command (a module made missing)."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    code = "; ".join(["import sys", *(python or []), "from initmem.cli import main", "sys.exit(main())"])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=cap,
        timeout=600,
    )


@pytest.mark.parametrize("command", ["train", "experiments"])
def test_epochs_beyond_their_range_are_one_line_naming_epochs_before_anything_is_allocated(tmp_path, command):
    """Before: experiments built the set of all 10^9 epochs before printing its plan (killed by the OOM killer), and
    train blamed the width and the batch size."""
    if command == "train":
        args = ["train", *TINY_FLAGS, "--epochs", "1000000000", "--out", str(tmp_path / "o.nc")]
    else:
        args = ["experiments", "--preset", "cpu", "--only", "01", "-p", "epochs", "1000000000", "--no-render"]
        args += ["--results-dir", str(tmp_path / "results"), "--out-dir", str(tmp_path / "out")]
    done = _capped_initmem(*args)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert "epochs: must be an integer in [1, 100000], got 1000000000" in line
    assert not list(tmp_path.iterdir())


def _damaged(content: str, damage: str) -> str:
    """A package data file's text, cut in the middle (``truncated``) or with one of its numbers made a string
    (``tampered``)."""
    if damage == "truncated":
        return content[: len(content) // 2]
    table = json.loads(content)
    if "levels" in table:
        table["calibration"]["p90"] = "high"
    else:
        next(iter(table["spread"].values()))["low"] = "x"
    return json.dumps(table)


@pytest.mark.parametrize("damage", ["truncated", "tampered"])
@pytest.mark.parametrize("name", ["cost_model.json", "critical_values.json"])
def test_a_damaged_package_data_file_is_one_line_naming_it_before_anything_is_written(
    tmp_path, capsys, monkeypatch, request, name, damage
):
    """Before: a traceback that did not name the cost model, and for the critical values a traceback after the sweep
    had written its output."""
    from initmem.study.costs import costs
    from initmem.study.statistics import calibration

    damaged = tmp_path / name
    attribute = (costs, "COST_MODEL_PATH") if name == "cost_model.json" else (calibration, "TABLE_PATH")
    damaged.write_text(_damaged(getattr(*attribute).read_text(encoding="utf-8"), damage), encoding="utf-8")
    monkeypatch.setattr(*attribute, damaged)
    for cached in (costs.cost_model, calibration.committed_table, calibration.critical):
        cached.cache_clear()
        request.addfinalizer(cached.cache_clear)  # the next tests read the package's own file again
    _forbid_training(monkeypatch)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"base": _TINY, "grid": {"sigma_w": [0.5, 2.0]}}))
    out = tmp_path / "s.nc"
    assert main(["sweep", str(spec), "--cache", str(tmp_path / "cache"), "--out", str(out)]) == 2
    said = capsys.readouterr()
    (line,) = said.err.strip().splitlines()
    assert line.startswith(f"initmem sweep: error: {damaged}: ")
    assert line.endswith(f"restore it with git checkout -- {damaged} (or reinstall initmem)")
    assert ("is not valid JSON" if damage == "truncated" else "is not a finite number") in line
    assert said.out == "" and not out.exists()


@pytest.mark.parametrize(
    ("extra", "command"),
    [
        ("book", ["book", "--check"]),
        ("book", ["experiments", "--preset", "smoke", "--only", "T1", "--no-render", "--out-dir", "OUT"]),
        ("dask", ["sweep", "SPEC", "--cache", "OUT", "--executor", "dask", "--out", "OUT/s.nc"]),
    ],
    ids=["book --check", "experiments", "sweep --executor dask"],
)
def test_a_missing_optional_dependency_is_one_line_naming_its_extra(tmp_path, extra, command):
    """The wheel installed without its [book] or [dask] extra, simulated by making their modules unimportable
    (``sys.modules[name] = None``). Before: a ModuleNotFoundError traceback."""
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"base": _TINY, "grid": {"sigma_w": [0.5, 2.0]}}))
    args = [
        {"SPEC": str(spec), "OUT": str(tmp_path / "out"), "OUT/s.nc": str(tmp_path / "s.nc")}.get(a, a) for a in command
    ]
    missing = f"import initmem.cli; sys.modules.update(dict.fromkeys(initmem.cli.EXTRA_MODULES[{extra!r}]))"
    done = _capped_initmem(*args, python=[missing])
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"initmem {command[0]}: error: ") and "is not installed" in line, line
    assert line.endswith(f"install initmem[{extra}] (pip install 'initmem[{extra}]')"), line
    assert done.stdout == "" and not (tmp_path / "out").exists() and not (tmp_path / "s.nc").exists()


@pytest.mark.parametrize("preset", ["nosuch", "paper"])
def test_initmem_book_at_an_unknown_or_a_gpu_preset_is_one_line_naming_preset(preset, tmp_path, capsys, monkeypatch):
    """Before: ``--preset nosuch`` was a traceback, and ``--preset paper`` a chapter-11 parameter error rather than
    the GPU price that ``initmem experiments --preset paper`` gives."""
    if preset == "paper" and torch.cuda.is_available():
        pytest.skip("a GPU is present")
    import initmem.book.build

    monkeypatch.setattr(initmem.book.build, "build_book", lambda **kwargs: pytest.fail("the book was built"))
    assert main(["book", "--preset", preset, "--root", str(_REPO)]) == 2
    line = _one_error_line(capsys)
    if preset == "nosuch":
        assert line == "initmem book: error: --preset: allowed values are smoke, cpu, gpu, paper; got 'nosuch'"
    else:
        price = r"\d+ experiments: about [\d,]+ core-h \(p10-p90 [\d,]+-[\d,]+\), about \d+ A100-h"
        assert re.fullmatch(
            rf"initmem book: error: --preset paper: sized for a GPU \(full-width networks on full CIFAR-10; {price}\), "
            r"and this machine has none; use --preset cpu \(the reduced-scale record\)",
            line,
        ), line


#: What a run with ``compile: true`` on the CPU is refused with.
_COMPILE_OFF_CUDA = (
    "compile: allowed values on cpu are false; got true (torch.compile is applied on CUDA only: it would change the "
    "run's hash but not what it computes); drop --compile (compile: false)"
)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_compile_off_cuda_is_refused_in_one_line_rather_than_ignored_into_another_hash(
    device, tmp_path, capsys, monkeypatch
):
    """Before: --compile on the CPU was ignored yet changed the run's hash: two identical runs, two cache entries."""
    _forbid_training(monkeypatch)
    flags = as_flags({**TINY_RUN, "device": device, "compile": True})
    assert main(["train", *flags, "--epochs", "1", "--out", str(tmp_path / "o.nc")]) == 2
    assert _one_error_line(capsys) == f"initmem train: error: {_COMPILE_OFF_CUDA}"
    assert not (tmp_path / "o.nc").exists()
    with pytest.raises(ConfigError, match=r"^compile: allowed values on cpu are false; got true"):
        train(RunConfig(**{**TINY_RUN, "device": device, "compile": True, "epochs": 1}))


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_a_sweep_with_compile_off_cuda_is_refused_before_anything_trains(tmp_path, capsys, monkeypatch):
    """Issue 46: before, every run of such a sweep started and failed on its own (a log line each, exit status 1);
    now the sweep is refused once, before its plan is printed, and the run already in its cache is left as it was.
    The library's sweep refuses it too (a notebook's sweep, measure_init_memory)."""
    _forbid_training(monkeypatch)
    spec = tmp_path / "spec.yaml"
    spec.write_text(json.dumps({"base": {**_TINY, "compile": True}, "grid": {"sigma_w": [0.5, 1.0, 2.0]}}))
    cache = tmp_path / "cache"
    cache.mkdir()
    config = SweepSpec.from_file(spec).configs()[0][1]
    cached = run_path(cache, config)  # one run trained on a GPU, say
    write_run(xr.Dataset({"selected_test_acc": ((), 61.5)}, attrs={"config_hash": config.hash()}), cached)
    before = cached.read_bytes()
    assert main(["sweep", str(spec), "--cache", str(cache), "--out", str(tmp_path / "o.nc")]) == 2
    assert _one_error_line(capsys) == f"initmem sweep: error: {_COMPILE_OFF_CUDA}"
    assert capsys.readouterr().out == ""
    with pytest.raises(ConfigError, match=re.escape(_COMPILE_OFF_CUDA)):
        sweep(SweepSpec.from_file(spec), cache, progress=False)
    assert sorted(cache.iterdir()) == [cached] and cached.read_bytes() == before
    assert not (tmp_path / "o.nc").exists()


@pytest.fixture
def killed_kernel_filter_removed():
    """Leaves the loggers as they were: :func:`initmem.book.kernel.kill_kernels` filters them for the process."""
    from initmem.book import kernel

    yield kernel
    for name in kernel._DEATH_REPORTERS:
        logging.getLogger(name).removeFilter(kernel.KILLED_KERNEL_REPORTS)


def _abandoned_dead_kernel_task() -> None:
    """What an interrupt leaves in nbclient: the cell's task, failing with DeadKernelError, never awaited; its loop
    closed and the task collected, which makes asyncio log "Task exception was never retrieved"."""
    import asyncio
    import gc

    from nbclient.exceptions import DeadKernelError

    async def cell() -> None:
        raise DeadKernelError("Kernel died")

    loop = asyncio.new_event_loop()
    task = loop.create_task(cell())
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()
    del task
    gc.collect()


def test_an_interrupt_that_kills_a_kernel_leaves_no_dead_kernel_traceback(killed_kernel_filter_removed, caplog):
    """Issue 46: ``initmem experiments --fresh`` interrupted with Ctrl-C printed its line, then papermill's "Kernel
    died" error and asyncio's DeadKernelError traceback. Once the interrupt has killed a kernel, both are silenced;
    before, and for any other error, they are reported."""
    pytest.importorskip("nbclient")
    kernel = killed_kernel_filter_removed
    caplog.set_level(logging.ERROR)
    _abandoned_dead_kernel_task()
    assert "DeadKernelError" in caplog.text  # what the user saw, before a kernel was killed
    caplog.clear()

    class Manager:  # stands for an IPCKernelManager whose kernel runs
        def __init__(self) -> None:
            self.provisioner = type(
                "P",
                (),
                {"process": subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE), "pgid": None},
            )()

    manager = Manager()
    kernel._MANAGERS.add(manager)
    try:
        assert kernel.kill_kernels() == 1
        assert manager.provisioner.process.wait(timeout=30) == -signal.SIGKILL
    finally:
        kernel._MANAGERS.discard(manager)
    _abandoned_dead_kernel_task()
    logging.getLogger("papermill").error("Kernel died while waiting for execute reply.")
    assert caplog.text == ""
    logging.getLogger("asyncio").error("another failure", exc_info=ValueError("kept"))
    logging.getLogger("papermill").error("another papermill error")
    assert "ValueError: kept" in caplog.text and "another papermill error" in caplog.text

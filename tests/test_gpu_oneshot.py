"""benchmarks/gpu_oneshot.py end to end on the CPU (--dry-run), its clean stop at the deadline, and the GPU column.

The script's step 3 is experiment 01 at preset gpu through initmem.study.timed.run_timed_experiment; the budget's
own logic is tested in tests/test_budget.py, the one judge in tests/test_claims.py.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import xarray as xr

from initmem.study import claims, gpu_results, presets
from initmem.sweeps.budget import DeadlineExceeded, train_group
from initmem.sweeps.store import CHECKSUM_ATTR, load_run

pytestmark = pytest.mark.slow  # the dry run of the one-shot GPU script (a minute on 2 cores)

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "gpu_oneshot.py"
OPTIMIZERS = presets.notebook_parameters("gpu", "01_optimizers")["optimizers"]


@pytest.fixture(scope="module")
def oneshot():
    spec = importlib.util.spec_from_file_location("gpu_oneshot", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_oneshot"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("gpu_oneshot", None)


class FakeClock:
    """A clock that moves only when told to (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def manifest(results_dir: Path) -> dict:
    return json.loads((results_dir / "gpu" / "oneshot.json").read_text())


@pytest.fixture(scope="module")
def dry_run(oneshot, tmp_path_factory):
    """The whole dry run (every optimizer of preset gpu, its four sigma_w, the stacked trainer forced), once. Its
    budget runs on a clock that does not move (FakeClock: the hard timer off), so that a loaded machine cannot end it
    "partial"; stopping at the deadline is tested on its own below."""
    out = tmp_path_factory.mktemp("oneshot")
    argv = ["--dry-run", "--results-dir", str(out), "--mode", "stacked", "--throughput-seconds", "1"]
    code = oneshot.main(argv, clock=FakeClock())
    return out, code


def test_dry_run_writes_ordinary_run_files_and_a_summary(dry_run):
    out, code = dry_run
    assert code == 0
    m = manifest(out)
    assert m["status"] == "complete" and m["dry_run"]
    assert m["parameters"]["optimizers"] == OPTIMIZERS and m["parameters"]["sigma_ws"] == [0.1, 0.25, 1.0, 2.5]
    assert {"sequential fp32", "stacked x4 fp32"} <= {p["name"] for p in m["throughput"]}
    assert m["parity"]["ok"] and max(m["parity"]["max_rel_diff"].values()) <= m["parity"]["rtol"]
    assert m["trainer"]["mode"] == "stacked" and m["sweep"]["plan"]["epochs"] >= 1
    runs = m["sweep"]["runs"]
    assert len(runs) == 5 * 4 and all(r["status"] == "finished" for r in runs)
    for entry in runs:
        path = out / "gpu" / "01_optimizers" / "runs" / entry["file"]
        # stacked runs carry their stack size in the file name; muon is trained one run at a time
        assert path.name.endswith(".stacked4.nc") == (entry["optimizer"] != "muon")
        ds = xr.load_dataset(path, engine="h5netcdf")
        assert ds.attrs[CHECKSUM_ATTR] and ds.attrs["device"] == "cpu" and ds.attrs["config_hash"] == entry["hash"]
        assert json.loads(ds.attrs["config"])["epochs"] == m["sweep"]["plan"]["epochs"]
    combined = gpu_results.load_paper_scale(out)
    assert combined.attrs["preset"] == "gpu" and combined.attrs["experiment"] == "01_optimizers"
    assert combined.attrs["sweep_status"] == "complete"
    assert combined["selected_test_acc"].dims == ("sigma_w", "seed", "optimizer")
    assert list(combined["optimizer"].values) == OPTIMIZERS
    summary = (out / "gpu" / "summary.txt").read_text()
    for needle in ("1. training throughput", "2. stacked vs sequential", "3. 01 at preset gpu", "C1:", "C2 Muon:"):
        assert needle in summary


def test_the_ledger_column_is_the_ledgers_own_verdict(dry_run, tmp_path):
    out, _ = dry_run
    assert gpu_results.ledger_column(tmp_path / "nothing") is None and gpu_results.paper_scale(tmp_path) == ""
    column = gpu_results.ledger_column(out)
    table = claims.reproduction_table({"01_optimizers": gpu_results.load_paper_scale(out)})
    ours = table[table["experiment"] == "01_optimizers"]
    assert list(column.index) == list(ours.index) == ["C1", "C2 Adam", "C2 AdamW", "C2 Muon", "C7"]
    for key, text in column.items():  # one seed: the raw spreads, and the verdict the rules give
        assert f"{ours.loc[key, 'verdict']}: {ours.loc[key, 'reason']}" in text
        assert ours.loc[key, "verdict"] == claims.INCONCLUSIVE and "1 seed, no interval" in text
    assert column["C1"].startswith("spread: SGD ") and "pp (raw, 1 seed" in column["C1"]
    assert column["C2 Muon"].startswith("spreads: Muon ") and " against SGD " in column["C2 Muon"]
    scale = gpu_results.paper_scale(out)
    assert "1 seed, 4 sigma_w in [0.1, 2.5]" in scale and "w4" in scale and "stacked" in scale


def test_a_rerun_reuses_the_finished_runs(dry_run, oneshot):
    out, _ = dry_run
    runs = out / "gpu" / "01_optimizers" / "runs"
    before = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.nc")}
    epochs = str(manifest(out)["sweep"]["plan"]["epochs"])
    argv = ["--dry-run", "--results-dir", str(out), "--mode", "stacked", "--throughput-seconds", "0.3"]
    assert oneshot.main([*argv, "--min-epochs", epochs, "--max-epochs", epochs]) == 0
    assert all(r["status"] == "cached" for r in manifest(out)["sweep"]["runs"])
    assert {p.name: p.stat().st_mtime_ns for p in runs.glob("*.nc")} == before


SMALL = ["--dry-run", "--optimizers", "sgd,muon", "-p", "sigma_ws", "[0.5, 2.0]", "--throughput-seconds", "0.3"]
SMALL += ["--min-epochs", "2", "--max-epochs", "2", "--mode", "stacked"]


def test_a_run_that_would_overflow_the_budget_stops_cleanly(oneshot, tmp_path):
    clock = FakeClock()

    def slow(jobs):  # a group of step 3 "takes" 200 s of a 120 s budget
        errors = train_group(jobs)
        clock.now += 200.0
        return errors

    code = oneshot.main([*SMALL, "--results-dir", str(tmp_path), "--budget-min", "2"], clock=clock, train=slow)
    assert code == 3
    m = manifest(tmp_path)
    assert m["status"] == "partial"
    status = {(r["optimizer"], r["sigma_w"]): r["status"] for r in m["sweep"]["runs"]}
    assert status[("sgd", 0.5)] == status[("sgd", 2.0)] == "finished"
    assert all(status[("muon", s)].startswith("skipped: budget") for s in (0.5, 2.0))
    files = sorted(p.name for p in (tmp_path / "gpu" / "01_optimizers" / "runs").glob("*.nc"))
    assert len(files) == 2 and all(name.endswith(".stacked2.nc") for name in files)
    combined = gpu_results.load_paper_scale(tmp_path)
    assert list(combined["optimizer"].values) == ["sgd"] and combined.attrs["sweep_status"] == "partial"
    column = gpu_results.ledger_column(tmp_path)
    assert list(column.index) == ["C1", "C7"]  # C2 needs an adaptive optimizer: none finished
    assert "run partial" in gpu_results.paper_scale(tmp_path)


def test_a_group_interrupted_by_the_timer_keeps_what_finished(oneshot, tmp_path):
    calls = []

    def interrupted(jobs):
        calls.append(jobs)
        if len(calls) == 2:  # the first muon run: the budget's timer fires inside it
            raise DeadlineExceeded("muon x1: 0 s ran out")
        return train_group(jobs)

    code = oneshot.main([*SMALL, "--results-dir", str(tmp_path)], clock=FakeClock(), train=interrupted)
    assert code == 3
    status = [r["status"] for r in manifest(tmp_path)["sweep"]["runs"]]
    assert status[:2] == ["finished", "finished"]
    assert status[2].startswith("interrupted") and status[3].startswith("skipped: interrupted")
    assert load_run(calls[0][0].path) is not None
    assert "status: partial" in (tmp_path / "gpu" / "summary.txt").read_text()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-p", "sigma_ws", "[0.5]"], "at least two"),
        (["-p", "sigma_ws", "0.5"], "at least two"),
        (["-p", "sigmas", "[0.5, 1]"], "unknown parameter 'sigmas'"),
        (["-p", "lrs", "[-1, 0.02, 0.008, 0.008, 0.004]"], "lr"),
        (["--optimizers", "sgd,lbfgs"], "--optimizers"),
        (["--optimizers", "sgd,sgd"], "--optimizers"),
        (["--budget-min", "0"], "must be > 0"),
        (["--safety", "2"], "--safety"),
        (["--min-epochs", "5", "--max-epochs", "2"], "exceeds"),
        (["-p", "seeds", "[-1]"], "seed"),
    ],
)
def test_bad_arguments_are_one_line_errors(oneshot, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        oneshot.parse_args(["--dry-run", *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err


def test_the_full_protocol_refuses_a_machine_without_gpu(oneshot, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(SystemExit) as exit_info:
        oneshot.parse_args([])
    assert exit_info.value.code == 2 and "no CUDA device" in capsys.readouterr().err


def test_the_preset_is_the_table_and_the_command_line_changes_it(oneshot):
    full = presets.notebook_parameters("gpu", "01_optimizers")
    args = oneshot.parse_args(["--allow-cpu", "--device", "cpu"])
    assert args.parameters == full and args.max_epochs == full["epochs"]  # the preset, as it is
    args = oneshot.parse_args(["--dry-run", "--optimizers", "adam,sgd", "-p", "lrs", "[0.05, 0.02, 0.1, 0.008, 0.004]"])
    assert args.parameters["optimizers"] == ["adam", "sgd"] and args.parameters["lrs"] == [0.1, 0.05]
    assert args.parameters["width"] == presets.notebook_parameters("smoke", "01_optimizers")["width"]  # dry run
    spec = oneshot.experiment_spec(args, bf16=False, compile_=False)
    assert spec["zip"]["optimizer"] == ["adam", "sgd"] and spec["base"]["device"] == "cpu"
    assert presets.notebook_parameters("gpu", "01_optimizers") == full  # the preset is unchanged


def test_the_wrapper_is_valid_bash():
    subprocess.run(["bash", "-n", str(REPO / "benchmarks" / "gpu_oneshot.sh")], check=True)

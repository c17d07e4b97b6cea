"""benchmarks/gpu_oneshot.py end to end on the CPU (--dry-run), its budget logic, and initmem.study.gpu_results."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import xarray as xr

from initmem.study.gpu_results import NOT_RUN, load_paper_scale, paper_scale_column
from initmem.sweeps.store import CHECKSUM_ATTR, load_run

pytestmark = pytest.mark.slow  # the dry run of the one-shot GPU script (a minute on 2 cores)

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "gpu_oneshot.py"


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


@pytest.fixture(scope="module")
def dry_run(oneshot, tmp_path_factory):
    """The whole dry run (every optimizer, four sigma_w, stacked trainer forced), once for this module."""
    out = tmp_path_factory.mktemp("oneshot")
    code = oneshot.main(["--dry-run", "--out", str(out), "--mode", "stacked", "--throughput-seconds", "1"])
    return out, code


def test_dry_run_writes_ordinary_run_files_and_a_summary(dry_run, oneshot, capsys):
    out, code = dry_run
    assert code == 0
    manifest = json.loads((out / "oneshot.json").read_text())
    assert manifest["status"] == "complete" and manifest["dry_run"]
    assert [r["optimizer"] for r in manifest["optimizer_table"]] == [r.optimizer for r in oneshot.OPTIMIZER_TABLE]
    names = {p["name"] for p in manifest["throughput"]}
    assert {"sequential fp32", "stacked x4 fp32"} <= names
    assert manifest["parity"]["ok"] and max(manifest["parity"]["max_rel_diff"].values()) <= manifest["parity"]["rtol"]
    assert manifest["plan"]["mode"] == "stacked" and manifest["plan"]["epochs"] >= 1
    runs = manifest["runs"]
    assert len(runs) == 5 * 4 and all(r["status"] == "finished" for r in runs)
    for entry in runs:
        path = out / entry["file"]
        # stacked runs carry their stack size in the file name; muon is trained one run at a time
        assert path.name.endswith(".stacked4.nc") == (entry["optimizer"] != "muon")
        ds = xr.load_dataset(path, engine="h5netcdf")
        assert ds.attrs[CHECKSUM_ATTR] and ds.attrs["device"] == "cpu" and ds.attrs["config_hash"] == entry["hash"]
        assert json.loads(ds.attrs["config"])["epochs"] == manifest["plan"]["epochs"]
    combined = load_paper_scale(out)
    assert combined.attrs["preset"] == "gpu" and combined.attrs["experiment"] == "01_optimizers"
    assert combined["selected_test_acc"].dims == ("sigma_w", "seed", "optimizer")
    assert list(combined["optimizer"].values) == [r.optimizer for r in oneshot.OPTIMIZER_TABLE]
    summary = (out / "summary.txt").read_text()
    for needle in ("1. training throughput", "2. stacked vs sequential", "3. reduced paper-scale 01", "C1:", "C2:"):
        assert needle in summary


def test_the_ledger_column(dry_run, tmp_path):
    out, _ = dry_run
    assert paper_scale_column(tmp_path / "nothing") == {"C1": NOT_RUN, "C2": NOT_RUN}
    column = paper_scale_column(out)
    assert set(column) == {"C1", "C2"}
    assert column["C1"].startswith("SGD spread ") and "1 seed" in column["C1"] and "w4" in column["C1"]
    assert "muon" in column["C2"] and "against SGD" in column["C2"]


def test_a_rerun_reuses_the_finished_runs(dry_run, oneshot):
    out, _ = dry_run
    before = {p.name: p.stat().st_mtime_ns for p in (out / "01_optimizers" / "runs").glob("*.nc")}
    code = oneshot.main(["--dry-run", "--out", str(out), "--mode", "stacked", "--throughput-seconds", "0.3",
                         "--min-epochs", str(json.loads((out / "oneshot.json").read_text())["plan"]["epochs"]),
                         "--max-epochs", str(json.loads((out / "oneshot.json").read_text())["plan"]["epochs"])])  # fmt: skip
    assert code == 0
    manifest = json.loads((out / "oneshot.json").read_text())
    assert all(r["status"] == "cached" for r in manifest["runs"])
    after = {p.name: p.stat().st_mtime_ns for p in (out / "01_optimizers" / "runs").glob("*.nc")}
    assert after == before


SMALL = ["--dry-run", "--optimizers", "sgd,muon", "--sigmas", "0.5,2.0", "--throughput-seconds", "0.3",
         "--min-epochs", "2", "--max-epochs", "2", "--mode", "stacked"]  # fmt: skip


def test_a_run_that_would_overflow_the_budget_stops_cleanly(oneshot, tmp_path, monkeypatch):
    clock = FakeClock()
    real = oneshot._train_group

    def slow(configs, data, stacked):
        result = real(configs, data, stacked)
        if configs[0].epochs == 2:  # a step-3 group (the probes train one epoch): it "takes" 200 s
            clock.now += 200.0
        return result

    monkeypatch.setattr(oneshot, "_train_group", slow)
    code = oneshot.main([*SMALL, "--out", str(tmp_path), "--budget-min", "2"], clock=clock)
    assert code == 3
    manifest = json.loads((tmp_path / "oneshot.json").read_text())
    assert manifest["status"] == "partial"
    status = {(r["optimizer"], r["sigma_w"]): r["status"] for r in manifest["runs"]}
    assert status[("sgd", 0.5)] == status[("sgd", 2.0)] == "finished"
    assert all(status[("muon", s)].startswith("skipped: budget") for s in (0.5, 2.0))
    files = sorted(p.name for p in (tmp_path / "01_optimizers" / "runs").glob("*.nc"))
    assert len(files) == 2 and all(name.endswith(".stacked2.nc") for name in files)
    combined = load_paper_scale(tmp_path)
    assert list(combined["optimizer"].values) == ["sgd"]
    column = paper_scale_column(tmp_path)
    assert column["C1"].startswith("SGD spread") and "run partial" in column["C1"]
    assert column["C2"].startswith("not measured")


def test_a_group_interrupted_by_the_timer_keeps_what_finished(oneshot, tmp_path, monkeypatch):
    real = oneshot._train_group
    calls = {"step3": 0}

    def interrupted(configs, data, stacked):
        if configs[0].epochs == 2:
            calls["step3"] += 1
            if calls["step3"] == 2:  # the first muon run: the budget's timer fires inside it
                raise oneshot.BudgetExceeded("muon x1: 0 s ran out")
        return real(configs, data, stacked)

    monkeypatch.setattr(oneshot, "_train_group", interrupted)
    code = oneshot.main([*SMALL, "--out", str(tmp_path)], clock=FakeClock())
    assert code == 3
    manifest = json.loads((tmp_path / "oneshot.json").read_text())
    status = [r["status"] for r in manifest["runs"]]
    assert status[:2] == ["finished", "finished"]
    assert status[2].startswith("interrupted") and status[3].startswith("skipped: interrupted")
    assert load_run(tmp_path / manifest["runs"][0]["file"]) is not None
    assert "status: partial" in (tmp_path / "summary.txt").read_text()


def test_the_real_timer_interrupts(oneshot):
    import time

    budget = oneshot.Budget(60.0)
    with pytest.raises(oneshot.BudgetExceeded):
        with budget.guard(0.05, what="test"):
            time.sleep(5)
    with pytest.raises(oneshot.BudgetExceeded):
        with oneshot.Budget(0.0).guard():
            pass


def test_plan_epochs_fills_the_budget(oneshot):
    assert oneshot.plan_epochs(lambda e: 10.0 * e, 95.0, 200) == 9
    assert oneshot.plan_epochs(lambda e: 10.0 * e, 5000.0, 200) == 200
    assert oneshot.plan_epochs(lambda e: 10.0 * e, 5.0, 200) == 1  # nothing fits: the minimum
    assert oneshot.plan_epochs(lambda e: 10.0 * e, 5.0, 200, min_epochs=3) == 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sigmas", "0.5"], "at least two"),
        (["--sigmas", "0.5,x"], "comma-separated numbers"),
        (["--optimizers", "sgd,lbfgs"], "unknown optimizer 'lbfgs'"),
        (["--opt", "adam:lr=-1"], "lr must be > 0"),
        (["--opt", "adam:momentum=0.9"], "keys are"),
        (["--budget-min", "0"], "must be > 0"),
        (["--safety", "2"], "--safety"),
        (["--min-epochs", "5", "--max-epochs", "2"], "exceeds"),
        (["--seed", "-1"], "seed"),
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


def test_the_optimizer_table_is_overridable(oneshot):
    args = oneshot.parse_args(["--dry-run", "--optimizers", "adam,sgd", "--opt", "sgd:lr=0.05,logit_scale=0.125"])
    assert [r.optimizer for r in args.table] == ["adam", "sgd"]
    assert args.table[1].lr == 0.05 and args.table[1].logit_scale == 0.125
    assert {r.optimizer: r.lr for r in oneshot.OPTIMIZER_TABLE}["sgd"] == 0.04  # the constant is unchanged


def test_the_wrapper_is_valid_bash():
    subprocess.run(["bash", "-n", str(REPO / "benchmarks" / "gpu_oneshot.sh")], check=True)

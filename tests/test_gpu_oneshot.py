"""benchmarks/gpu_oneshot.py (the scale ladder's GPU rung) end to end on the CPU (--dry-run), its plan, its fallback
when every probe overruns, and its clean stop at the deadline. Every budget here runs on an injected clock: no test
depends on how fast this machine is.

The script's step 4 is chapter 11's sweep through initmem.study.costs.timed.run_timed_experiment; the budget's own logic is
tested in tests/test_budget.py, the ladder's reading in tests/test_ladder.py.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import xarray as xr

from initmem.study.design import presets
from initmem.sweeps.budget import DeadlineExceeded, train_group
from initmem.sweeps.store import CHECKSUM_ATTR, load_run
from repo_scripts import load_script

pytestmark = pytest.mark.slow  # the dry run of the one-shot GPU script (half a minute on 2 cores)

REPO = Path(__file__).resolve().parents[1]
LADDER = presets.notebook_parameters("cpu", "11_scale_ladder")


@pytest.fixture(scope="module")
def oneshot():
    yield load_script("benchmarks/gpu_oneshot.py")
    sys.modules.pop("gpu_oneshot", None)


class FakeClock:
    """A clock that moves only when told to (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def manifest(results_dir: Path) -> dict:
    return json.loads((results_dir / "gpu" / "oneshot.json").read_text())


def run_files(results_dir: Path) -> list[Path]:
    return sorted((results_dir / "gpu" / "11_scale_ladder" / "runs").glob("*.nc"))


@pytest.fixture(scope="module")
def dry_run(oneshot, tmp_path_factory):
    """The whole dry run (the rung's two conditions, two sigma_w and five seeds, the stacked trainer forced), once.
    Its budget runs on a clock that does not move (FakeClock: the hard timer off), so that a loaded machine cannot
    end it "partial"; stopping at the deadline is tested on its own below."""
    out = tmp_path_factory.mktemp("oneshot")
    argv = ["--dry-run", "--results-dir", str(out), "--mode", "stacked", "--throughput-seconds", "1"]
    code = oneshot.main(argv, clock=FakeClock())
    return out, code


def test_dry_run_trains_a_ladder_rung_into_ordinary_run_files_and_a_summary(dry_run):
    out, code = dry_run
    assert code == 0
    m = manifest(out)
    assert m["status"] == "complete" and m["dry_run"]
    assert m["parameters"]["seeds"] == [0, 1, 2, 3, 4] and m["parameters"]["sigma_ws"] == LADDER["sigma_ws"]
    assert [p["name"] for p in m["throughput"]] == [
        f"width {w} {k}" for w in (8, 4) for k in ("sequential", "stacked x2")
    ]
    assert m["parity"]["ok"] and max(m["parity"]["max_rel_diff"].values()) <= m["parity"]["rtol"]
    plan = m["plan"]
    assert plan["width"] == 8 and plan["mode"] == "stacked" and plan["fits"] and not plan["conservative"]
    assert plan["dropped"] == [] and plan["runs"] == 2 * 2 * 5 and plan["groups"] == 2 * 5  # a stack per seed
    runs = m["sweep"]["runs"]
    assert len(runs) == 20 and all(r["status"] == "finished" for r in runs)
    assert [r["optimizer"] for r in runs] == ["sgd"] * 10 + ["adam"] * 10  # C1's runs first
    for path in run_files(out):
        assert path.name.endswith(".stacked2.nc")  # one seed's two sigma_w as one model
        ds = xr.load_dataset(path, engine="h5netcdf")
        assert ds.attrs[CHECKSUM_ATTR] and ds.attrs["device"] == "cpu" and ds.attrs["hardware"]
        assert ds.attrs["cpu_model"] in ds.attrs["hardware"]  # the hardware facts every run records
        config = json.loads(ds.attrs["config"])
        assert (config["width"], config["train_size"], config["epochs"]) == (8, 200, 2)
        assert config["schedule"] == "constant" and not config["bf16"]
    combined = xr.load_dataset(out / "gpu" / "11_scale_ladder.nc", engine="h5netcdf")
    assert combined.attrs["preset"] == "gpu" and combined.attrs["sweep_status"] == "complete"
    assert dict(combined["selected_test_acc"].sizes) == {"width": 1, "train_size": 1, "sigma_w": 2, "seed": 5, "lr": 2}
    summary = (out / "gpu" / "summary.txt").read_text()
    for needle in (
        "1. training throughput",
        "2. stacked vs sequential",
        "3. plan: the ladder's rung width 8",
        "epoch rule:",
    ):
        assert needle in summary
    assert "4. runs: 20 finished" in summary and "premise (low-lr SGD interpolates)" in summary
    assert summary.count("w8, 200 img") == 2  # chapter 11's table: a row per condition


def test_a_rerun_reuses_the_finished_runs(dry_run, oneshot):
    out, _ = dry_run
    before = {p.name: p.stat().st_mtime_ns for p in run_files(out)}
    argv = ["--dry-run", "--results-dir", str(out), "--mode", "stacked", "--throughput-seconds", "0.3", "--width", "8"]
    assert oneshot.main(argv, clock=FakeClock()) == 0
    assert all(r["status"] == "cached" for r in manifest(out)["sweep"]["runs"])
    assert {p.name: p.stat().st_mtime_ns for p in run_files(out)} == before


def test_the_epoch_rule_extrapolates_the_ladders_declared_epochs(oneshot):
    assert [oneshot.rule_epochs(n) for n in (5000, 20000, 45000)] == [40, 60, 72]
    assert "72 on 45,000" in oneshot.epoch_rule_text()


def _probes(rates: dict[tuple[int, int], float]) -> list[dict]:
    return [{"width": w, "stacked": k, "images_per_s": rate} for (w, k), rate in rates.items()]


def test_the_plan_takes_the_widest_width_that_fits_and_says_what_it_dropped(oneshot, capsys):
    args = oneshot.parse_args(["--allow-cpu", "--device", "cpu"])
    assert (args.widths, args.train_size, args.epochs) == ((64, 32), 45_000, 72)
    fast = oneshot.plan_rung(args, _probes({(64, 1): 1e6, (64, 2): 2e6, (32, 1): 3e6, (32, 2): 5e6}), True, 400.0)
    assert (fast["width"], fast["mode"], fast["fits"], fast["dropped"]) == (64, "stacked", True, [])
    assert fast["runs"] == 20 and fast["groups"] == 10
    # width 64 is too slow: 32 fits
    narrower = oneshot.plan_rung(args, _probes({(64, 2): 2e4, (32, 1): 1e6, (32, 2): 5e5}), True, 400.0)
    assert (narrower["width"], narrower["mode"], narrower["fits"]) == (32, "sequential", True)
    assert narrower["dropped"][0].startswith("width 64: needs ~") and len(narrower["dropped"]) == 1
    # parity failed: no stacked plan
    assert oneshot.plan_rung(args, _probes({(64, 2): 1e6, (64, 1): 1e5}), False, 1e6)["mode"] == "sequential"
    # nothing fits: the narrowest width, the seeds kept at five, SGD's runs first and Adam's expected not to fit
    slow = oneshot.plan_rung(args, _probes({(64, 2): 2e4, (32, 2): 9e4}), True, 400.0)
    assert (slow["width"], slow["fits"], slow["runs"]) == (32, False, 20)
    assert slow["dropped"][-1].startswith("expected not to fit: adam lr 0.008 seeds 0-4 (10 runs")
    assert all(line in slow["lines"] for line in (f"dropped: {d}" for d in slow["dropped"]))
    assert "72 epochs" in slow["lines"][0] and "seeds [0, 1, 2, 3, 4]" in slow["lines"][0]


def test_when_every_probe_overruns_the_conservative_plan_still_trains_the_rung(oneshot, tmp_path, monkeypatch, capsys):
    """Every probe "takes" 1000 s of the injected clock (over its limit); parity still holds. The conservative plan
    is printed, and the rung (five seeds) trains group by group until the budget's timer interrupts the third."""
    clock = FakeClock()
    real_sweep = oneshot.scratch_sweep

    def slow_sweep(spec, scratch, stacked):
        clock.now += 1000.0
        return real_sweep(spec, scratch, stacked)

    calls = []

    def interrupted(jobs):
        calls.append(jobs)
        if len(calls) == 3:
            raise DeadlineExceeded("sgd x2: 0 s ran out")
        return train_group(jobs)

    monkeypatch.setattr(oneshot, "scratch_sweep", slow_sweep)
    argv = ["--dry-run", "--results-dir", str(tmp_path), "--budget-min", "600", "--mode", "stacked"]
    assert oneshot.main(argv, clock=clock, train=interrupted) == 3
    m = manifest(tmp_path)
    assert all(p["note"].startswith("abandoned (probe width") and "ran past its" in p["note"] for p in m["throughput"])
    assert all(math.isnan(p["images_per_s"]) for p in m["throughput"]) and m["parity"]["ok"]
    plan = m["plan"]
    assert plan["conservative"] and plan["fits"] is None and plan["width"] == 4 and plan["mode"] == "stacked"
    assert plan["dropped"] == ["width 8: no throughput figure"]
    assert m["sweep"]["plan"]["epochs"] == 2 and len(m["sweep"]["runs"]) == 20
    assert sorted({r["seed"] for r in m["sweep"]["runs"]}) == [0, 1, 2, 3, 4]
    status = [r["status"] for r in m["sweep"]["runs"]]
    assert status[:4] == ["finished"] * 4 and status[4].startswith("interrupted")
    assert all(s.startswith("skipped: interrupted") for s in status[6:])
    assert load_run(calls[0][0].path) is not None and len(run_files(tmp_path)) == 4
    printed = capsys.readouterr().out
    assert printed.strip() == (tmp_path / "gpu" / "summary.txt").read_text().strip()
    assert "no throughput figure to plan with (every probe failed or overran): the conservative plan" in printed
    assert "continue with: benchmarks/gpu_oneshot.sh --width 4" in printed and "status: partial" in printed


def test_a_run_that_would_overflow_the_budget_stops_cleanly(oneshot, tmp_path):
    clock = FakeClock()

    def slow(jobs):  # a group of step 4 "takes" 200 s of a 120 s budget
        errors = train_group(jobs)
        clock.now += 200.0
        return errors

    argv = ["--dry-run", "--results-dir", str(tmp_path), "--budget-min", "2", "--width", "4", "--mode", "stacked"]
    assert oneshot.main([*argv, "--throughput-seconds", "0.3"], clock=clock, train=slow) == 3
    m = manifest(tmp_path)
    assert m["status"] == "partial"
    status = [r["status"] for r in m["sweep"]["runs"]]
    assert status[:2] == ["finished", "finished"] and all(s.startswith("skipped: budget") for s in status[2:])
    assert [p.name.endswith(".stacked2.nc") for p in run_files(tmp_path)] == [True, True]
    assert not (tmp_path / "gpu" / "11_scale_ladder.nc").exists()  # no condition has all its runs
    assert "status: partial" in (tmp_path / "gpu" / "summary.txt").read_text()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-p", "sigma_ws", "[0.5]"], "at least two"),
        (["-p", "sigma_ws", "0.5"], "at least two"),
        (["-p", "sigmas", "[0.5, 1]"], "unknown parameter 'sigmas'"),
        (["-p", "rungs", "[[8, 200, 2]]"], "unknown parameter 'rungs'"),
        (["-p", "lever_lr", "0.1"], "unknown parameter 'lever_lr'"),
        (["-p", "seeds", "[0, 1, 2]"], "at least 5 distinct seeds"),
        (["-p", "lrs", "[-1, 0.005]"], "lr"),
        (["--budget-min", "0"], "must be > 0"),
        (["--width", "-8"], "must be > 0"),
        (["--safety", "2"], "--safety"),
        (["-p", "seeds", "[-1, 1, 2, 3, 4]"], "seed"),
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


def test_the_rung_is_the_ladders_design_on_the_papers_split(oneshot):
    args = oneshot.parse_args(["--allow-cpu", "--device", "cpu"])
    spec = oneshot.rung_spec(args, 64)
    base = spec["base"]
    fixed = ("model", "logit_scale", "batch_size", "warmup_epochs", "eval_every", "bf16")
    assert {k: base[k] for k in fixed} == {k: LADDER[k] for k in fixed} and base["schedule"] == "constant"
    assert (base["val_size"], base["test_size"], base["train_eval_size"], base["data"]) == (5000, None, 5000, None)
    assert base["epochs"] == 72 and base["device"] == "cpu" and base["num_threads"] is None
    assert spec["grid"] == {"width": [64], "train_size": [45_000], "sigma_w": [0.1, 2.5], "seed": [0, 1, 2, 3, 4]}
    assert spec["zip"]["optimizer"] == ["sgd", "adam"] and spec["zip"]["lr"] == LADDER["lrs"]  # no lever on this rung
    args = oneshot.parse_args(["--dry-run", "-p", "lrs", "[0.1, 0.001]"])
    assert oneshot.rung_spec(args, 4)["zip"]["lr"] == [0.1, 0.001]
    assert presets.notebook_parameters("cpu", "11_scale_ladder") == LADDER  # the preset is unchanged


def test_a_dry_run_never_writes_where_the_gpu_rungs_results_are_committed(oneshot, tmp_path, monkeypatch):
    """Without --results-dir a dry run writes into a new temporary folder, not ``results/`` (whose ``gpu/`` the book
    reads as the GPU rung); the real rung's default is ``results``, and an explicit folder is kept."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temporary"))
    (tmp_path / "temporary").mkdir()
    dry = oneshot.parse_args(["--dry-run"]).results_dir
    assert dry.resolve() != Path("results").resolve() and dry.is_dir() and not any(dry.iterdir())
    assert dry != oneshot.parse_args(["--dry-run"]).results_dir  # a new one each time
    assert oneshot.parse_args(["--allow-cpu", "--device", "cpu"]).results_dir == Path("results")
    assert oneshot.parse_args(["--dry-run", "--results-dir", str(tmp_path)]).results_dir == tmp_path


def test_the_wrapper_is_valid_bash():
    subprocess.run(["bash", "-n", str(REPO / "benchmarks" / "gpu_oneshot.sh")], check=True)

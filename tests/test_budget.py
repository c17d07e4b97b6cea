"""initmem.sweeps.budget: a sweep planned to a wall-time budget and stopped cleanly at its deadline.

The clock is injected (it moves only when a test says so), and the trainer is the package's own
(:func:`initmem.sweeps.budget.train_group`) on tiny synthetic runs, wrapped where a test needs a group to "take" time.
"""

from __future__ import annotations

import time

import pytest

from initmem.run.config import ConfigError
from initmem.sweeps.budget import (
    Deadline,
    DeadlineExceeded,
    plan_epochs,
    run_groups,
    timed_sweep,
    train_group,
    with_epochs,
)
from initmem.sweeps.spec import SweepSpec
from initmem.sweeps.store import load_run


class FakeClock:
    """A clock (seconds) that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


#: Two optimizers (rows) x two sigma_w, tiny synthetic runs (about a second each on a CPU).
BASE = {"model": "resnet9", "width": 4, "data": "synthetic", "image_size": 16, "batch_size": 50, "device": "cpu"}
SIZES = {"train_size": 50, "val_size": 10, "test_size": 10, "train_eval_size": 10}
SPEC = {
    "base": {**BASE, **SIZES, "epochs": 20, "warmup_epochs": 1.0, "num_threads": 1, "progress": False},
    "grid": {"sigma_w": [0.5, 2.0], "seed": [0]},
    "zip": {"optimizer": ["sgd", "muon"], "lr": [0.05, 0.02]},
}
#: The cost model of these tests: 10 s per run and epoch.
PER_RUN_EPOCH_S = 10.0


def seconds(group):
    return PER_RUN_EPOCH_S * len(group) * group[0].epochs


def test_plan_epochs_is_the_most_that_fits():
    assert plan_epochs(lambda e: 10.0 * e, 95.0, 200) == 9
    assert plan_epochs(lambda e: 10.0 * e, 90.0, 200) == 9  # exactly the budget fits
    assert plan_epochs(lambda e: 10.0 * e, 5000.0, 200) == 200
    assert plan_epochs(lambda e: 10.0 * e, 5.0, 200) == 1  # nothing fits: the minimum
    assert plan_epochs(lambda e: 10.0 * e, 5.0, 200, min_epochs=3) == 3
    with pytest.raises(ConfigError, match="min_epochs"):
        plan_epochs(lambda e: e, 5.0, 2, min_epochs=3)


def test_the_deadline_reads_its_clock():
    clock = FakeClock()
    deadline = Deadline(60.0, clock)
    assert not deadline.hard and deadline.remaining() == 60.0
    clock.now += 45.0
    assert deadline.elapsed() == 45.0 and deadline.remaining() == 15.0
    with deadline.guard(what="test"):  # no timer with a fake clock: the block runs
        pass
    clock.now += 20.0
    with pytest.raises(DeadlineExceeded, match="test: no time left"):
        with deadline.guard(what="test"):
            pass


def test_the_real_timer_interrupts():
    deadline = Deadline(60.0)
    assert deadline.hard
    start = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="ran out"):
        with deadline.guard(0.05, what="test"):
            time.sleep(5)
    assert time.monotonic() - start < 2
    with pytest.raises(DeadlineExceeded):
        with Deadline(0.0).guard():
            pass


def test_groups_follow_the_zip_rows_and_stack_what_can_be_stacked():
    spec = SweepSpec.from_dict(SPEC)
    stacked = run_groups(spec, stacked=True)
    # sgd's two sigma_w as one stack, then muon one run at a time (its update is per matrix)
    assert [(g[0].optimizer, len(g)) for g in stacked] == [("sgd", 2), ("muon", 1), ("muon", 1)]
    assert [len(g) for g in run_groups(spec, stacked=False)] == [1, 1, 1, 1]
    assert with_epochs(spec, 3).base["epochs"] == 3 and with_epochs(spec, 3).base["warmup_epochs"] == 1.0
    long_warmup = SweepSpec.from_dict({**SPEC, "base": {**SPEC["base"], "warmup_epochs": 5.0}})
    assert with_epochs(long_warmup, 2).base["warmup_epochs"] == 2.0  # capped at the run's length
    swept = {**SPEC, "grid": {**SPEC["grid"], "epochs": [1, 2]}}
    with pytest.raises(ConfigError, match="epochs is swept"):
        with_epochs(SweepSpec.from_dict(swept), 3)


def test_a_plan_fits_its_budget_and_the_sweep_completes(tmp_path):
    clock = FakeClock()
    deadline = Deadline(100.0, clock)
    calls = []
    # 4 runs x 10 s an epoch: 2 epochs (80 s) fit 100 s, 3 (120 s) would not
    result = timed_sweep(SPEC, tmp_path, deadline, seconds, stacked=True, safety=1.0, on_group=calls.append)
    assert result.plan["epochs"] == 2 and result.plan["estimated_s"] == 80.0 <= result.plan["available_s"] == 100.0
    assert result.plan["fits"] and result.status == "complete" and len(calls) == 3 + 1  # each group, then the end
    assert [r.status for r in result.runs] == ["finished"] * 4
    assert [r.path.name.endswith(".stacked2.nc") for r in result.runs] == [True, True, False, False]
    for record in result.runs:
        ds = load_run(record.path, expected_hash=record.hash)
        assert ds is not None and int(ds["epoch"].max()) == 2
    combined = result.combined()
    assert list(combined["optimizer"].values) == ["sgd", "muon"] and combined.sizes["sigma_w"] == 2
    record = result.as_dict()
    assert record["status"] == "complete" and record["runs"][0]["optimizer"] == "sgd"

    again = timed_sweep(SPEC, tmp_path, Deadline(100.0, clock), seconds, stacked=True, safety=1.0)
    assert [r.status for r in again.runs] == ["cached"] * 4  # a rerun reads the finished runs back


def test_a_group_that_would_overrun_the_deadline_is_not_started(tmp_path):
    clock = FakeClock()
    deadline = Deadline(100.0, clock)

    def slow(jobs):  # each group takes twice its estimate
        errors = train_group(jobs)
        clock.now += 2 * PER_RUN_EPOCH_S * len(jobs) * jobs[0].config.epochs
        return errors

    result = timed_sweep(SPEC, tmp_path, deadline, seconds, stacked=True, safety=1.0, train=slow)
    assert result.plan["epochs"] == 2 and result.status == "partial"
    status = [(r.coords["optimizer"], r.status) for r in result.runs]
    assert status[:2] == [("sgd", "finished")] * 2  # 80 s: 20 s left, and muon's first run needs 20 s x 2 = 40 s
    assert all(s.startswith("skipped: budget: the group needs ~40 s, 20 s left") for _, s in status[2:])
    assert deadline.remaining() >= 0  # the deadline was honoured
    assert sorted(p.name.split(".", 1)[1] for p in tmp_path.glob("*.nc")) == ["stacked2.nc", "stacked2.nc"]
    assert list(result.combined()["optimizer"].values) == ["sgd"]  # the complete rows only
    assert result.complete_spec().zip == {"optimizer": ["sgd"], "lr": [0.05]}


def test_an_interrupted_group_keeps_what_finished_before_it(tmp_path):
    calls = []

    def interrupted(jobs):
        calls.append(len(jobs))
        if len(calls) == 2:  # muon's first run: the deadline's timer fires inside it
            raise DeadlineExceeded("muon x1: 0 s ran out")
        return train_group(jobs)

    result = timed_sweep(SPEC, tmp_path, Deadline(1000.0, FakeClock()), seconds, stacked=True, train=interrupted)
    status = [r.status for r in result.runs]
    assert status[:2] == ["finished"] * 2 and status[2] == "interrupted: muon x1: 0 s ran out"
    assert status[3] == "skipped: interrupted: muon x1: 0 s ran out" and calls == [2, 1]
    assert result.status == "partial" and load_run(result.runs[0].path) is not None


def test_a_failed_run_is_recorded_and_the_sweep_goes_on(tmp_path):
    def failing(jobs):
        return (
            {job.key: "RuntimeError: boom" for job in jobs} if jobs[0].config.optimizer == "sgd" else train_group(jobs)
        )

    result = timed_sweep(SPEC, tmp_path, Deadline(1000.0, FakeClock()), seconds, stacked=True, train=failing)
    assert [r.status for r in result.runs] == ["failed: RuntimeError: boom"] * 2 + ["finished"] * 2
    assert result.status == "partial" and result.complete_spec().zip["optimizer"] == ["muon"]


def test_bad_arguments_are_refused_before_anything_trains(tmp_path):
    with pytest.raises(ConfigError, match="safety"):
        timed_sweep(SPEC, tmp_path, Deadline(10.0, FakeClock()), seconds, stacked=True, safety=1.5)
    assert not list(tmp_path.glob("*.nc"))

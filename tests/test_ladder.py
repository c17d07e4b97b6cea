"""The scale ladder (initmem.study.verdicts.ladder, chapter 11): spreads, carrying predictors and shifts by hand on a synthetic
ladder, the trend and its coverage, the parameters' checks, the declared design and the committed runs' declaration."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy import stats as scipy_stats

from git_repo import full_history, git  # tests/ is on sys.path under pytest
from initmem.study.design.registry import experiment_spec
from initmem.study.experiments import e11_scale_ladder
from initmem.study.statistics.calibration import critical
from initmem.study.verdicts import ladder, ledger, machine_control, preregistration
from initmem.sweeps.spec import SweepSpec
from repo_scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "results" / "cpu" / "11_scale_ladder" / "design.json"
SEED_NOISE = np.array([1.0, -0.5, -0.5])  # added to each seed's accuracy at sigma_w 0.1: sd 0.866, mean 0
RUNGS = [(8, 5000, 40), (16, 5000, 40), (8, 20000, 60)]
LRS = {"sgd": 0.02, "adam": 0.008, "larger lr": 0.1}


def _ladder(spreads: dict[tuple[str, int, int, int], float]) -> xr.Dataset:
    """A combined ladder sweep: for each (condition, width, train_size, epochs) of ``spreads``, test accuracy 40 % at
    sigma_w 2.5 and 40 + spread + :data:`SEED_NOISE` at 0.1 for seeds 0-2, on both predictors, every run at 100 %
    train accuracy; every other point NaN."""
    coords = {
        "width": [8, 16],
        "train_size": [5000, 20000],
        "epochs": [40, 60],
        "sigma_w": [0.1, 2.5],
        "seed": [0, 1, 2],
        "lr": list(LRS.values()),
    }
    shape = tuple(len(v) for v in coords.values())
    acc = np.full(shape, np.nan)
    for (condition, w, n, e), spread in spreads.items():
        at = (coords["width"].index(w), coords["train_size"].index(n), coords["epochs"].index(e))
        k = coords["lr"].index(LRS[condition])
        acc[(*at, 0, slice(None), k)] = 40.0 + spread + SEED_NOISE
        acc[(*at, 1, slice(None), k)] = 40.0
    dims = tuple(coords)
    held = np.isfinite(acc)
    ds = xr.Dataset(
        {
            "selected_test_acc": (dims, acc),
            "final_test_acc": (dims, acc.copy()),
            "selected_train_acc": (dims, np.where(held, 100.0, np.nan)),
            "final_train_acc": (dims, np.where(held, 100.0, np.nan)),
            "wall_time_s": (dims, np.where(held, 90.0, np.nan)),
            "cpu_time_s": (dims, np.where(held, 60.0, np.nan)),
        },
        coords=coords,
    )
    return ds.assign_coords(optimizer=("lr", ["sgd", "adam", "sgd"]))


def _at(ds: xr.Dataset, condition: str, rung: tuple[int, int, int], **more) -> dict:
    w, n, e = rung
    return {"width": w, "train_size": n, "epochs": e, "lr": LRS[condition], **more}


def _calibrated(mean: float, sd: float, kind: str, n: int = 3) -> tuple[float, float]:
    c = critical(kind, 2, n)
    se = sd / math.sqrt(n)
    return mean - c.low * se, mean + c.high * se


def test_conditions_are_read_from_the_lr_dimension_and_rungs_ordered_cheapest_first():
    ds = _ladder({("sgd", 8, 20000, 60): 20.0, ("sgd", 16, 5000, 40): 20.0, ("sgd", 8, 5000, 40): 20.0})
    assert ladder.condition_lrs(ds) == LRS
    assert ladder.ladder_rungs(ds, 0.02) == RUNGS  # 8^2*5000*40 < 16^2*5000*40 < 8^2*20000*60
    assert ladder.ladder_rungs(ds, 0.008) == []


def test_each_rung_gets_its_calibrated_spread_and_a_paired_shift_read_against_the_paper():
    ds = _ladder(
        {
            ("sgd", 8, 5000, 40): 20.0,
            ("sgd", 16, 5000, 40): 26.0,
            ("sgd", 8, 20000, 60): 12.0,
            ("adam", 8, 5000, 40): 9.0,
            ("adam", 16, 5000, 40): 9.0,
            ("larger lr", 8, 5000, 40): 3.0,
        }
    )
    ds["final_test_acc"].loc[_at(ds, "adam", RUNGS[1], sigma_w=0.1)] = [41.0, 42.0, 43.0]  # final spreads 1, 2, 3
    climbed = ladder.rungs(ds)
    assert [(r.condition, r.width, r.train_size) for r in climbed] == [
        ("sgd", 8, 5000),
        ("sgd", 16, 5000),
        ("sgd", 8, 20000),
        ("adam", 8, 5000),
        ("adam", 16, 5000),
        ("larger lr", 8, 5000),
    ]
    first, wide, more_data = climbed[:3]
    sd = float(np.std(SEED_NOISE, ddof=1))
    assert first.predictor == "selected" and first.premise == ""
    assert (first.spread.estimate, first.spread.low, first.spread.high) == pytest.approx(
        (20.0, *_calibrated(20.0, sd, "spread"))
    )
    assert first.moves == "" and not first.shift.has_bounds  # the reference
    # every seed moves by exactly +6 (the seed noise is the same on every rung): a zero-width shift towards 26.5
    assert (wide.shift.estimate, wide.shift.low, wide.shift.high) == pytest.approx((6.0, 6.0, 6.0))
    assert wide.moves == ladder.TOWARDS and wide.size == ladder.INSIDE and wide.shift_predictor == "selected"
    assert more_data.shift.estimate == pytest.approx(-8.0) and more_data.moves == ladder.AWAY
    assert more_data.size == ladder.OUTSIDE  # 12 [~10, ~16] lies wholly below C1's band
    adam_first, adam_wide = climbed[3:5]
    assert adam_wide.spreads["selected"].estimate == pytest.approx(9.0)
    assert adam_wide.spreads["final"].estimate == pytest.approx(2.0)
    assert adam_wide.predictor == "selected"  # every run interpolates on both: the selected predictor carries
    assert first.runs == 6 and first.core_seconds == pytest.approx(360.0)  # CPU time, not wall time
    assert first.final_train_min == 100.0 and first.selected_train_mean == 100.0
    lever = climbed[5]
    assert lever.condition == "larger lr" and lever.size == ladder.ACROSS  # 3 [~1.5, ~7.2] crosses +5


def test_a_rung_whose_selected_checkpoints_do_not_interpolate_is_read_on_the_final_predictor_and_so_is_its_shift():
    ds = _ladder({("sgd", 8, 5000, 40): 20.0, ("sgd", 16, 5000, 40): 20.0})
    ds["selected_train_acc"].loc[_at(ds, "sgd", RUNGS[1])] = 90.0
    ds["final_test_acc"].loc[_at(ds, "sgd", RUNGS[1], sigma_w=0.1)] += 3.0  # the final predictor: spread 23
    first, wide = ladder.rungs(ds)
    assert first.predictor == "selected" and wide.predictor == "final"
    assert "does not meet the premise; the final one carries" in wide.why
    assert wide.spread.estimate == pytest.approx(23.0) and wide.spreads["selected"].estimate == pytest.approx(20.0)
    assert wide.shift_predictor == "final" and wide.shift.estimate == pytest.approx(3.0)


def test_a_rung_whose_final_predictors_do_not_interpolate_either_has_its_premise_not_met():
    ds = _ladder({("sgd", 8, 5000, 40): 20.0, ("sgd", 16, 5000, 40): 20.0})
    ds["selected_train_acc"].loc[_at(ds, "sgd", RUNGS[1])] = 90.0
    ds["final_train_acc"].loc[_at(ds, "sgd", RUNGS[1], sigma_w=2.5, seed=1)] = 98.0
    wide = ladder.rungs(ds)[1]
    assert wide.size == ladder.PREMISE_NOT_MET and "SGD in 1 of 6 runs (lowest 98.0 %)" in wide.premise
    assert wide.final_train_min == 98.0


@pytest.mark.parametrize("failing", [1, 0])  # the premise fails on the compared rung, or on the reference
def test_under_the_amendment_a_shift_on_a_rung_whose_premise_fails_reads_premise_not_met(failing):
    ds = _ladder({**{("sgd", *r): 20.0 for r in RUNGS[:2]}, ("adam", *RUNGS[0]): 9.0, ("adam", *RUNGS[1]): 2.0})
    ds["selected_train_acc"].loc[_at(ds, "adam", RUNGS[failing])] = 90.0
    ds["final_train_acc"].loc[_at(ds, "adam", RUNGS[failing], sigma_w=2.5, seed=0)] = 97.0
    as_declared = [r for r in ladder.rungs(ds) if r.condition == "adam"][1]
    amended = [r for r in ladder.rungs(ds, shift_premise=True) if r.condition == "adam"][1]
    assert as_declared.moves == ladder.TOWARDS  # 9 -> 2 pp, towards Adam's 0
    assert amended.moves == ladder.PREMISE_NOT_MET and amended.shift == as_declared.shift  # the interval still shown
    assert (amended.size == ladder.PREMISE_NOT_MET) == (failing == 1)  # the band reads the rung's own premise
    sgd = [r for r in ladder.rungs(ds, shift_premise=True) if r.condition == "sgd"][1]
    assert sgd.moves == ladder.UNTOLD  # SGD's premise holds on both rungs: its reading is the declared rule's


def test_a_contrast_condition_needs_sgd_to_interpolate_too():
    ds = _ladder({("sgd", 8, 5000, 40): 20.0, ("adam", 8, 5000, 40): 2.0})
    ds["selected_train_acc"].loc[_at(ds, "sgd", RUNGS[0])] = 95.0
    adam = [r for r in ladder.rungs(ds) if r.condition == "adam"][0]
    assert adam.predictor == "final"  # Adam's own checkpoints interpolate; SGD's selected ones do not


def test_a_shift_whose_interval_straddles_zero_is_untold():
    ds = _ladder({("sgd", 8, 5000, 40): 20.0, ("sgd", 16, 5000, 40): 20.0})
    ds["selected_test_acc"].loc[_at(ds, "sgd", RUNGS[1], sigma_w=0.1)] = [62.0, 58.0, 61.0]
    up = ladder.rungs(ds)[1]
    assert up.shift.low < 0 < up.shift.high and up.moves == ladder.UNTOLD


def test_the_targets_are_the_ledgers_numbers_and_bands():
    assert ladder.target("sgd") == (ledger.claim_record("C1")["values"][""], ledger.band("C1"))
    assert ladder.target("adam") == (0.0, (-5.0, 5.0))
    assert ladder.target("larger lr") == (0.0, ledger.band("C4", "larger lr"))


def test_the_trend_recovers_a_straight_line_and_its_t_interval_by_hand():
    """Two widths x three seeds, spreads 20 + (0, +-1) and 24 + (0, +-1): slope 4 pp per doubling, read at width 64
    (two more doublings past 16): 32 pp, with the t-interval of a simple regression on 4 residual degrees of
    freedom."""
    x = np.array([[3.0, 12.0]] * 3 + [[4.0, 12.0]] * 3)
    y = np.array([19.0, 20.0, 21.0, 23.0, 24.0, 25.0])
    estimate, low, high, df, varying, slopes, sd = ladder.fit_trend(x, y, np.array([6.0, 12.0]))
    assert estimate == pytest.approx(32.0) and (df, varying) == (4, (0,))
    assert slopes == pytest.approx([4.0]) and sd == pytest.approx(1.0)
    # se of the fit at x0 = 6: s * sqrt(1/6 + (6 - 3.5)^2 / sum((x - 3.5)^2)) = sqrt(1/6 + 6.25 / 1.5)
    half = scipy_stats.t.ppf(0.975, 4) * math.sqrt(1 / 6 + 6.25 / 1.5)
    assert (low, high) == pytest.approx((32.0 - half, 32.0 + half))


def test_a_ladder_of_one_rung_or_with_no_residual_freedom_has_no_trend():
    assert ladder.fit_trend(np.array([[3.0, 12.0]] * 3), np.array([1.0, 2.0, 3.0]), np.array([6.0, 12.0])) is None
    assert ladder.fit_trend(np.array([[3.0, 12.0], [4.0, 12.0]]), np.array([1.0, 2.0]), np.array([6.0, 12.0])) is None


def test_the_trend_of_a_synthetic_ladder_is_read_at_width_64_on_its_own_training_set():
    ds = _ladder({("sgd", 8, 5000, 40): 20.0, ("sgd", 16, 5000, 40): 24.0})
    t = ladder.trend(ds, ladder.rungs(ds), "sgd")
    assert t.at == (64, 5000) and not t.reaches_paper_scale and t.terms == ("log2 width",)
    assert t.interval.estimate == pytest.approx(32.0) and t.predictor == "selected" and t.rungs == 2


def test_a_condition_the_ladder_does_not_hold_has_no_trend():
    ds = _ladder({("sgd", 8, 5000, 40): 20.0, ("sgd", 16, 5000, 40): 24.0}).isel(lr=[0, 1])  # no larger lr
    climbed = ladder.rungs(ds)
    assert ladder.trend(ds, climbed, "larger lr") is None and ladder.trend(ds, climbed, "adam") is None
    assert list(ladder.prediction_column(ds).index) == ["C1"]


def test_the_trend_interval_covers_95_percent_of_straight_trends_and_less_of_bent_ones():
    x = np.array([[3.0, 12.3]] * 8 + [[4.0, 12.3]] * 8 + [[3.0, 14.3]] * 8)
    at = np.array([6.0, np.log2(45_000)])
    straight = ladder.trend_coverage(x, 2.0, at, reps=4000)
    assert 0.935 <= straight <= 0.965  # Gaussian noise and a straight truth: the t-interval is exact
    assert ladder.trend_coverage(x, 2.0, at, bend=5.0, reps=2000) < straight - 0.1


def test_the_prediction_interval_of_a_new_mean_adds_its_variance_by_hand():
    """The line of the hand-computed test above, read at width 64 for the mean of 3 new spreads: the line's variance
    plus s^2 / 3."""
    x = np.array([[3.0, 12.0]] * 3 + [[4.0, 12.0]] * 3)
    y = np.array([19.0, 20.0, 21.0, 23.0, 24.0, 25.0])
    estimate, low, high, *_ = ladder.fit_trend(x, y, np.array([6.0, 12.0]), new_points=3)
    half = scipy_stats.t.ppf(0.975, 4) * math.sqrt(1 / 6 + 6.25 / 1.5 + 1 / 3)
    assert estimate == pytest.approx(32.0) and (low, high) == pytest.approx((32.0 - half, 32.0 + half))


#: Four rungs (log2 width, log2 images) as the declared ladder's first four: widths 8, 16, 32 on 5,000 images and
#: width 8 on 20,000.
FOUR_RUNGS = [(3.0, math.log2(5000)), (4.0, math.log2(5000)), (3.0, math.log2(20000)), (5.0, math.log2(5000))]


def _rung_points(truth, noise: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.repeat(np.array(FOUR_RUNGS), noise.shape[1], axis=0)
    return x, np.array([truth(w, n) for w, n in x]) + noise.ravel()


def test_leaving_a_rung_out_predicts_it_only_where_the_others_vary_the_factors_it_differs_in():
    """Of the four rungs, the one on 20,000 images cannot be predicted from three that all have 5,000; each other
    rung can, and on an exact line with seed noise its mean lies inside its interval."""
    noise = np.tile([1.0, -0.5, -0.5], (4, 1))
    x, y = _rung_points(lambda w, n: 20.0 + 3.0 * w - 2.0 * n, noise)
    held = ladder.held_out_fits(x, y)
    assert [(h.width, h.train_size) for h in held] == [(8, 5000), (16, 5000), (8, 20000), (32, 5000)]
    assert [h.predicted is None for h in held] == [False, False, True, False]
    for h in held:
        if h.predicted is not None:
            assert h.predicted.estimate == pytest.approx(h.measured) and h.inside
    assert (
        ladder.held_out_text(held)
        == "3 of the 3 rungs the others can predict lie inside their 95 % prediction interval"
    )


def test_a_rung_off_the_line_is_named_outside_its_prediction_interval():
    noise = np.tile([1.0, -0.5, -0.5], (4, 1))
    x, y = _rung_points(lambda w, n: 20.0 + 3.0 * w + (15.0 if w == 5.0 else 0.0), noise)
    held = ladder.held_out_fits(x, y)
    assert held[3].inside is False and held[3].measured == pytest.approx(20.0 + 15.0 + 15.0)
    assert "width 32, 5,000 images" in ladder.held_out_text(held).split("(outside: ")[1]  # (its pull moves the others)


def test_the_held_out_intervals_cover_about_95_percent_of_rungs_on_a_straight_truth():
    """Seeds drawn around a straight truth, sd 2 pp, 8 seeds a rung: each predicted rung's mean falls inside its
    prediction interval about 95 % of the time (exact for Gaussian noise)."""
    rng = np.random.default_rng(0)
    inside = []
    for _ in range(1500):
        x, y = _rung_points(lambda w, n: 20.0 + 3.0 * w - 2.0 * n, rng.normal(0.0, 2.0, (4, 8)))
        inside += [h.inside for h in ladder.held_out_fits(x, y) if h.predicted is not None]
    assert 0.94 <= np.mean(inside) <= 0.96


def test_a_ladder_of_two_rungs_predicts_neither_from_the_other():
    ds = _ladder({("sgd", 8, 5000, 40): 20.0, ("sgd", 16, 5000, 40): 24.0})
    held = ladder.leave_one_rung_out(ds, ladder.rungs(ds), "sgd")
    assert [h.predicted for h in held] == [None, None] and [h.measured for h in held] == pytest.approx([20.0, 24.0])
    assert ladder.held_out_text(held).startswith("none of its 2 rungs can be predicted")
    assert ladder.leave_one_rung_out(ds.isel(lr=[0, 1]), ladder.rungs(ds.isel(lr=[0, 1])), "larger lr") == []


@pytest.mark.parametrize(
    "value",
    [[], [[8, 5000]], [[8, 0, 40]], [[8, 5000.0, 40]], [[8, 5000, 40], [8, 5000, 60]], "8x5000", [[True, 5000, 40]]],
)
def test_rungs_must_be_triples_of_positive_integers_without_a_repeated_rung(value):
    with pytest.raises(ValueError, match=r"^rungs: must be a non-empty list of \[width, train_size, epochs\] triples"):
        e11_scale_ladder.rungs_of(value)


@pytest.mark.parametrize("value", [[[16, 5000]], [[8, 20000]], "all", [[8, 5000, 40]]])
def test_lever_rungs_must_be_rungs_and_hold_the_first(value):
    with pytest.raises(ValueError, match=r"^lever_rungs: must be a list of \[width, train_size\] pairs of rungs"):
        e11_scale_ladder.lever_rungs_of(value, [(8, 5000, 40), (16, 5000, 40)])


def test_the_declared_design_trains_each_rung_with_its_epochs_and_the_lever_on_the_lever_rungs_only():
    p = e11_scale_ladder.EXPERIMENT.presets["cpu"] | {
        "rungs": [list(r) for r in e11_scale_ladder.DESIGN_RUNGS],
        "lever_rungs": [list(r) for r in e11_scale_ladder.LEVER_RUNGS],
    }
    configs = [c for _, c in SweepSpec.from_dict(experiment_spec("11_scale_ladder", p)).configs()]
    by_rung = {}
    for c in configs:
        by_rung.setdefault((c.width, c.train_size, c.epochs), []).append(c)
    assert list(by_rung) == list(e11_scale_ladder.DESIGN_RUNGS)
    for (w, n, _), runs in by_rung.items():
        lever = (w, n) in {(8, 5000), (16, 5000)}
        assert len(runs) == (3 if lever else 2) * 2 * 8
        assert {(c.optimizer, c.lr) for c in runs} == {("sgd", 0.02), ("adam", 0.008)} | (
            {("sgd", 0.1)} if lever else set()
        )
    assert not any(c.bf16 for c in configs) and {c.batch_size for c in configs} == {64}


def test_the_design_record_matches_the_preset_it_declares():
    design = preregistration.read_design(DESIGN)
    assert [(r["width"], r["train_size"], r["epochs"]) for r in design["rungs"]] == list(e11_scale_ladder.DESIGN_RUNGS)
    p = e11_scale_ladder.EXPERIMENT.presets["cpu"]
    assert design["seeds"] == p["seeds"] and design["sigma_ws"] == p["sigma_ws"]
    assert [(c["optimizer"], c["lr"]) for c in design["conditions"]] == [("sgd", 0.02), ("adam", 0.008), ("sgd", 0.1)]
    held = [tuple(r[:3]) for r in p["rungs"]]
    assert held == list(e11_scale_ladder.DESIGN_RUNGS[: len(held)])  # the trained rungs are the design's first
    assert [(r["width"], r["train_size"]) for r in design["rungs"] if r["lever"]] == list(e11_scale_ladder.LEVER_RUNGS)
    assert [tuple(r) for r in p["lever_rungs"]] == [r[:2] for r in held if r[:2] in e11_scale_ladder.LEVER_RUNGS]


def test_shift_power_by_simulation_agrees_with_its_extremes():
    sure = preregistration.shift_power(0.01, 8)
    assert sure.p_narrow == 1.0 and sure.power == 1.0 and sure.critical == critical("contrast", 2, 8).high
    hopeless = preregistration.shift_power(20.0, 5)
    assert hopeless.p_narrow < 0.01 and hopeless.power < 0.2
    c4 = math.sqrt(2 / 4) * math.gamma(5 / 2) / math.gamma(4 / 2)  # E[s] / sd at 5 seeds: 0.940
    assert hopeless.expected_half_width == pytest.approx(
        critical("contrast", 2, 5).high * c4 * 20.0 * math.sqrt(2) / math.sqrt(5), rel=0.02
    )


def test_a_design_is_declared_by_the_oldest_commit_holding_its_present_content(tmp_path):
    git(tmp_path, "init", "-q")
    design = tmp_path / "design.json"
    design.write_text('{"seeds": [0, 1]}\n')
    git(tmp_path, "add", "design.json")
    git(tmp_path, "commit", "-q", "-m", "declare")
    first = git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "other").write_text("x")
    git(tmp_path, "add", "other")
    git(tmp_path, "commit", "-q", "-m", "unrelated")
    declaration = preregistration.declared(design)
    assert declaration is not None and declaration.commit == first
    assert preregistration.undeclared_runs(["2000-01-01T00:00:00+00:00"], declaration) == 1
    assert preregistration.undeclared_runs(["2999-01-01T00:00:00+00:00"], declaration) == 0
    design.write_text('{"seeds": [0, 1, 2]}\n')  # edited after the declaration: not declared as it is now
    assert preregistration.declared(design) is None
    assert preregistration.undeclared_runs(["2999-01-01T00:00:00+00:00"], None) == 1


def _committed_run_times() -> list[str]:
    """The ``created`` time of every committed ladder run (ISO 8601)."""
    created = []
    for path in sorted((DESIGN.parent / "runs").glob("*.nc")):
        with xr.open_dataset(path, engine="h5netcdf") as run:
            created.append(run.attrs["created"])
    return created


def test_an_amendment_is_its_own_record_declared_by_its_own_commit(tmp_path):
    git(tmp_path, "init", "-q")
    design = tmp_path / "design.json"
    design.write_text('{"shift_rule": "declared"}\n')
    git(tmp_path, "add", "design.json")
    git(tmp_path, "commit", "-q", "-m", "declare", date="2026-12-01T00:00:00+00:00")
    assert preregistration.amendments(design) == []
    path = preregistration.write_amendment(design, "gate", {"amends": "shift_rule", "rule": "gated", "why": "because"})
    (uncommitted,) = preregistration.amendments(design)
    assert (uncommitted.name, uncommitted.record["rule"], uncommitted.declaration) == ("gate", "gated", None)
    git(tmp_path, "add", str(path))
    git(tmp_path, "commit", "-q", "-m", "amend", date="2026-12-03T00:00:00+00:00")
    (amendment,) = preregistration.amendments(design)
    assert amendment.declaration.commit == git(tmp_path, "rev-parse", "HEAD")
    assert preregistration.declared(design).commit != amendment.declaration.commit  # the design keeps its own
    runs = ["2026-12-02T00:00:00+00:00", "2026-12-04T00:00:00+00:00"]
    assert preregistration.undeclared_runs(runs, preregistration.declared(design)) == 0
    assert preregistration.undeclared_runs(runs, amendment.declaration) == 1


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        (ladder.SHIFT_PREMISE, ladder.SHIFT_PREMISE_RULE),
        (machine_control.MACHINE_CONTROL, machine_control.MACHINE_CONTROL_RULE),
    ],
)
def test_each_committed_amendment_is_the_rule_the_ladder_applies(name, rule):
    (amendment,) = [a for a in preregistration.amendments(DESIGN) if a.name == name]
    assert amendment.record == rule, (
        f"the amendment {name} changed since it was declared: write it again (preregistration.write_amendment) "
        "and commit it; the page then flags the runs older than it"
    )


@pytest.mark.skipif(not full_history(), reason="no full git history here (a shallow clone or no git)")
def test_every_ladder_run_older_than_an_amendment_is_flagged_on_the_committed_page():
    import nbformat

    page = nbformat.read(ROOT / "book" / "generated" / "11_scale_ladder.ipynb", as_version=4)
    shown = json.dumps([cell.get("outputs", []) for cell in page.cells], ensure_ascii=False)
    created = _committed_run_times()
    for amendment in preregistration.amendments(DESIGN):
        assert amendment.declaration is not None, f"{amendment.name}: not committed as it is"
        older = preregistration.undeclared_runs(created, amendment.declaration)
        flag = f"amended ({amendment.name}, in full under 'How each rung is read') at commit"
        assert f"{flag} {amendment.declaration.commit[:7]}" in shown, amendment.name
        assert f"{older} runs are older than the amendment" in shown, amendment.name


@pytest.mark.skipif(not full_history(), reason="no full git history here (a shallow clone or no git)")
def test_no_committed_ladder_run_is_older_than_the_declaration_of_the_rule_that_judges_it():
    declaration = preregistration.declared(DESIGN)
    assert declaration is not None, "the design record is not committed as it is"
    created = _committed_run_times()
    assert created and preregistration.undeclared_runs(created, declaration) == 0


def test_the_gpu_rung_is_read_as_the_ladder_reads_a_rung_and_becomes_the_ledgers_column(tmp_path):
    """A GPU rung (width 16, 20,000 images, 60 epochs) committed as results/gpu/11_scale_ladder.nc: the ledger's
    column gives each condition's spread on its carrying predictor with the calibrated interval, as chapter 11 does,
    and the rung's scale names its hardware; no rung, no column."""
    from initmem.study.verdicts import gpu_results
    from initmem.sweeps.store import write_run

    assert gpu_results.load_rung(tmp_path) is None
    ds = _ladder({("sgd", 16, 20000, 60): 26.5, ("adam", 16, 20000, 60): 1.0})
    ds.attrs["hardware"] = "NVIDIA H200"
    (tmp_path / "gpu").mkdir()
    write_run(ds, tmp_path / "gpu" / f"{gpu_results.EXPERIMENT}.nc")
    rung = gpu_results.load_rung(tmp_path)
    column = gpu_results.ledger_column(ladder.rungs(rung))
    sgd = next(r for r in ladder.rungs(ds) if r.condition == "sgd").spread
    assert set(column.index) == {"C1", "C2 Adam"}
    assert column["C1"] == f"26.5 pp [{sgd.low:.1f}, {sgd.high:.1f}] on the selected predictor, {ladder.INSIDE}"
    adam = next(r for r in ladder.rungs(ds) if r.condition == "adam")
    assert column["C2 Adam"] == (
        f"1.0 pp [{adam.spread.low:.1f}, {adam.spread.high:.1f}] on the selected predictor, {adam.size}".replace(
            "-", "−"
        )
    )
    assert gpu_results.rung_declaration(tmp_path, rung).text() == (
        "its declaration is not committed in this checkout's history; no runs"
    )  # no design record here, and this combined file names no run files
    assert (
        gpu_results.rung_scale(rung, ladder.rungs(rung)) == "width 16, 20,000 images, 60 epochs, 3 seeds, NVIDIA H200"
    )


def test_the_gpu_rungs_design_is_declared_as_the_one_shot_would_train_it():
    """results/gpu/11_scale_ladder/design.json, committed before the rung's first run, holds what
    ``benchmarks/gpu_oneshot.py`` trains: its conditions, sigma_w, seeds, training images and epochs."""
    oneshot = load_script("benchmarks/gpu_oneshot.py")
    args = oneshot.parse_args(["--declare", "--results-dir", str(ROOT / "results")])
    committed = preregistration.read_design(ROOT / "results" / oneshot.DESIGN)
    now = oneshot.design_record(args)
    keys = ("conditions", "sigma_ws", "seeds", "train_size", "epochs", "widths", "fixed", "predictor", "size_rule")
    assert {k: committed[k] for k in keys} == {k: now[k] for k in keys}
    assert all(0 <= p <= 1 for by in committed["power_in_band"].values() for p in by.values())


def test_the_ladders_specs_checkpoint_every_run_without_changing_a_hash(tmp_path):
    """scripts/ladder_specs.py, with its default and with --checkpoint-every 0, on the committed design: one spec a
    rung, the first rung and rung k in spec k, seeds first; the default's every run checkpoints every 2 epochs, and
    both give the same run hashes (checkpoints are an execution setting), which the committed runs of each trained
    rung carry."""
    module = load_script("scripts/ladder_specs.py", "ladder_specs_script")
    module.main(tmp_path / "every2", DESIGN)
    module.main(tmp_path / "none", DESIGN, checkpoint_every=0)
    design = preregistration.read_design(DESIGN)
    committed = {path.stem for path in (DESIGN.parent / "runs").glob("*.nc")}
    for k, rung in enumerate(design["rungs"], start=1):
        every2, none = (json.loads((tmp_path / d / f"rung{k}.json").read_text())["spec"] for d in ("every2", "none"))
        assert next(iter(every2["grid"])) == "seed"
        configs = [c for _, c in SweepSpec.from_dict(every2).configs()]
        assert {c.checkpoint_every for c in configs} == {2}
        assert {c.checkpoint_every for _, c in SweepSpec.from_dict(none).configs()} == {0}
        hashes = [c.hash() for c in configs]
        assert hashes == [c.hash() for _, c in SweepSpec.from_dict(none).configs()]
        assert {(c.width, c.train_size, c.epochs) for c in configs} == {
            tuple(design["rungs"][0][f] for f in ("width", "train_size", "epochs")),
            tuple(rung[f] for f in ("width", "train_size", "epochs")),
        }
        if k <= e11_scale_ladder.TRAINED_RUNGS:
            assert set(hashes) <= committed, f"rung {k}"


@pytest.mark.skipif(not full_history(), reason="needs the checkout's full git history (a shallow clone has none)")
def test_the_control_spec_trains_the_declared_runs_of_the_first_rung_with_their_committed_hashes(tmp_path):
    """scripts/ladder_specs.py --control: seed 0's low-lr SGD and Adam at both sigma_w of the first rung (4 runs),
    the hashes of the first rung's committed runs (so that a control's copy is compared with the same run)."""
    module = load_script("scripts/ladder_specs.py", "ladder_specs_script")
    spec = json.loads(module.control(tmp_path, DESIGN).read_text())["spec"]
    configs = [c for _, c in SweepSpec.from_dict(spec).configs()]
    assert sorted((c.optimizer, c.lr, c.sigma_w, c.seed) for c in configs) == [
        ("adam", 0.008, 0.1, 0),
        ("adam", 0.008, 2.5, 0),
        ("sgd", 0.02, 0.1, 0),
        ("sgd", 0.02, 2.5, 0),
    ]
    assert {(c.width, c.train_size, c.epochs, c.checkpoint_every) for c in configs} == {(8, 5000, 40, 2)}
    committed = {path.stem for path in (DESIGN.parent / "runs").glob("*.nc")}
    assert {c.hash() for c in configs} <= committed


def test_the_control_spec_refuses_a_control_not_committed_before_its_runs(tmp_path):
    module = load_script("scripts/ladder_specs.py", "ladder_specs_script")
    design = tmp_path / "design.json"  # a copy outside any git history: its amendment is not declared
    design.write_text(DESIGN.read_text())
    preregistration.write_amendment(design, machine_control.MACHINE_CONTROL, machine_control.MACHINE_CONTROL_RULE)
    with pytest.raises(ValueError, match="--control: the amendment machine_control must be committed"):
        module.control(tmp_path / "specs", design)
    assert not (tmp_path / "specs").exists()

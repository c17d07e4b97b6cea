"""Invariants of the claims' judges, on designs drawn by hypothesis (tests/strategies.py) and judged through
:func:`initmem.study.verdicts.claims.reproduction_table`, as tests/test_claims.py judges its fixed examples:

1. no row is "reproduced in size" without a finite size interval inside the claim's band (and no judge fails on a
   design with diverged, missing or tied runs);
2. a diverged run counts as its seed missing: the row's effect, interval and null test are those of the design
   without that seed, and the null's floor (the smallest p it can give) never falls when a seed drops out. "Dropping a
   diverged run never makes p smaller" is *not* a property of a permutation p: a seed that goes against the effect
   raises p, and dropping it lowers p (the counterexample below);
3. swapping a contrast's two conditions mirrors its effect and interval;
4. a constant added to every (test) accuracy changes no verdict, interval or p.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from initmem.study.statistics import nulls
from initmem.study.statistics.calibration import CrossFitted
from initmem.study.verdicts import claims
from initmem.study.verdicts.rules import IN_SIZE, PREMISE_NOT_MET, VERDICTS
from strategies import GRID, TEST_ACCURACIES, designs, diverge, on_grid  # tests/ is on sys.path under pytest

ALL_CLAIMS = ["C1", "C2", "C3", "C4", "C5", "C6", "C7", "B1"]
NUMBERS = ["effect", "effect_low", "effect_high", "size", "size_low", "size_high", "p_value", "seeds"]


def few(n: int):
    return settings(
        max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
    )


@pytest.fixture(autouse=True, scope="module")
def quick_nulls():
    """The smaller permutation nulls of tests/test_claims.py (module-wide: hypothesis reruns a test in one call)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nulls, "N_RESAMPLES", 1_000)
        mp.setattr(nulls, "MAX_EXACT", 2_000)
        mp.setattr(nulls, "MAX_EXACT_SWAPS", 1_024)
        yield


def judged(design, ds: xr.Dataset | None = None):
    table = claims.reproduction_table(design.results(ds), [design.claim])
    assert_well_judged(table)
    return table


def assert_well_judged(table) -> None:
    """Invariant 1, on every table these tests judge: a verdict is one of the six; "in size" only with a finite size
    interval inside a finite band; and the rule never failed on the design (diverged, missing or tied runs)."""
    for key, row in table.iterrows():
        assert row["verdict"] in VERDICTS, key
        assert "lacks what the rule needs" not in row["reason"], (key, row["reason"])
        if row["verdict"] == IN_SIZE:
            low, high = row["size_low"], row["size_high"]
            assert math.isfinite(row["band_low"]) and math.isfinite(row["band_high"]), key
            assert math.isfinite(low) and math.isfinite(high), (key, low, high)
            assert row["band_low"] <= low <= high <= row["band_high"], (key, low, high, row["band_low"])


# --- 1. "in size" only with a finite interval inside the band -------------------------------------------------
@pytest.mark.parametrize("claim", ALL_CLAIMS)
@few(6)
@given(data=st.data())
def test_in_size_needs_a_finite_interval_inside_the_band(claim, data):
    design = data.draw(designs(claim))
    judged(design)


# --- 2. a diverged run is its seed missing ---------------------------------------------------------------------
def _all_interpolate(ds: xr.Dataset) -> None:
    """Every run's premise-carrying train accuracy at 100 % (the claims' premises then hold with or without a seed)."""
    if "model" in ds.dims:
        ds["final_train_acc"].loc[{"model": "resnet9"}] = 100.0
        return
    for var in ("selected_train_acc", "final_train_acc"):
        ds[var] = ds[var].where(ds[var].isnull(), 100.0)


@pytest.mark.parametrize("claim", ["C1", "C2", "C4", "C6"])
@few(4)
@given(data=st.data())
def test_a_diverged_run_leaves_each_row_as_if_its_seed_were_missing(claim, data):
    """A run of a condition every row reads (SGD; C4's low-lr cell without L2; either model of C6) diverges: each
    row's null test and its number of seeds equal those of the design without that seed. So does the effect with
    its interval, and the verdict where nothing else enters it, of a row whose per-seed values are that condition's
    alone (C1's spread) or plain per-seed differences (C6, C7); a contrast of cross-fitted spreads still ranks the
    other condition's sigma_w on all of its own runs, seed included, which are sound. C7 is left out: its slopes
    read a diverged run's last finite kernel norm (initmem.study.statistics.analysis.last_finite), so the seed stays in."""
    design = data.draw(designs(claim, damage=False))
    _all_interpolate(design.ds)
    ds = design.ds
    seed = data.draw(st.sampled_from(list(ds["seed"].values)))
    sigmas = list(ds["sigma_w"].values)
    sigma = data.draw(st.sampled_from([sigmas[0], sigmas[-1]] if claim == "C6" else sigmas))  # C6 reads the ends
    shared = design.shared or data.draw(st.sampled_from(list(design.pair)))
    diverged = ds.copy(deep=True)
    diverge(diverged, {**shared, "sigma_w": sigma, "seed": seed}, data.draw(st.sampled_from([2, 6])))
    got_rows = claims.claim_rows(design.results(diverged), [claim])
    want_rows = claims.claim_rows(design.results(ds.drop_sel(seed=seed)), [claim])
    assert [row.key for row in got_rows] == [row.key for row in want_rows]
    for got, want in zip(got_rows, want_rows):
        assert got.effect.n == want.effect.n, got.key
        assert (got.null.observed, got.null.p_value) == pytest.approx(
            (want.null.observed, want.null.p_value), nan_ok=True
        ), got.key
        if isinstance(got.method, CrossFitted) and got.method.kind == "contrast":
            continue
        assert (got.effect.estimate, got.effect.low, got.effect.high) == pytest.approx(
            (want.effect.estimate, want.effect.low, want.effect.high), nan_ok=True
        ), got.key
        if got.size_values is None:  # the size is the effect: nothing else enters the verdict
            assert got.verdict.verdict == want.verdict.verdict, (got.key, got.verdict.reason, want.verdict.reason)


def test_dropping_a_seed_can_lower_a_permutation_p():
    """Why invariant 2 is not "p never falls": 2 sigma_w x 4 seeds, three seeds remembering +10 pp and one -10 pp. The
    raw spread is 5 pp, which 10 of the 16 sign patterns reach (p = 0.625); without the contrary seed it is 10 pp,
    reached by 2 of 8 (p = 0.25). A diverged run in that seed drops it, and p falls; what cannot fall is the floor."""
    acc = np.array([[70.0, 70.0, 70.0, 50.0], [60.0, 60.0, 60.0, 60.0]])
    before = nulls.spread_null(acc)
    acc[1, 3] = np.nan  # the contrary seed's run diverged
    after = nulls.spread_null(acc)
    assert (before.p_value, after.p_value) == (pytest.approx(0.625), pytest.approx(0.25))
    assert nulls.spread_null_floor(2, 3) >= nulls.spread_null_floor(2, 4)


@few(30)
@given(
    k=st.integers(2, 3),
    n=st.integers(2, 5),
    values=st.lists(st.integers(0, 8), min_size=15, max_size=15),
    other=st.lists(st.integers(0, 8), min_size=15, max_size=15),
    drop=st.integers(0, 4),
)
def test_a_seed_that_drops_out_never_lowers_the_nulls_floor(k, n, values, other, drop):
    """On the nulls themselves (ties included: values on a coarse grid): p never lies below the smallest p the
    design can give (:func:`~initmem.study.statistics.nulls.spread_null_floor`, :func:`~initmem.study.statistics.nulls.contrast_null_floor`
    of its complete seeds), and a seed made NaN (a diverged run) only raises that floor."""
    a = np.array(values[: k * n], float).reshape(k, n) * 5.0
    b = np.array(other[: k * n], float).reshape(k, n) * 5.0
    dropped = a.copy()
    dropped[0, drop % n] = np.nan
    for seeds, x in ((n, a), (n - 1, dropped)):
        spread, contrast = nulls.spread_null(x), nulls.contrast_null(x, b)
        if spread.has_null:
            assert spread.p_value >= nulls.spread_null_floor(k, seeds) - 1e-12
        if contrast.has_null:
            assert contrast.p_value >= nulls.contrast_null_floor(k * seeds) - 1e-12
    assert nulls.spread_null_floor(k, n - 1) >= nulls.spread_null_floor(k, n)
    assert nulls.contrast_null_floor(k * (n - 1)) >= nulls.contrast_null_floor(k * n)


# --- 3. swapping a contrast's conditions mirrors it -----------------------------------------------------------
def swapped(ds: xr.Dataset, a: dict, b: dict) -> xr.Dataset:
    """``ds`` with the runs of conditions ``a`` and ``b`` exchanged (every variable of theirs)."""
    out = ds.copy(deep=True)
    for var in ds.data_vars:
        if set(a) <= set(ds[var].dims):
            out[var].loc[a] = ds[var].loc[b].values
            out[var].loc[b] = ds[var].loc[a].values
    return out


@pytest.mark.parametrize("claim", ["C2", "C4", "C5", "C6", "C7"])
@few(4)
@given(data=st.data())
def test_swapping_a_contrasts_conditions_mirrors_its_effect_and_interval(claim, data):
    design = data.draw(designs(claim))
    key = design.contrast_row
    before = judged(design).loc[key]
    after = judged(design, swapped(design.ds, *design.pair)).loc[key]
    if claim == "C5":  # the same pair of batch sizes must be judged (a missing run can disqualify one)
        assume("b=256 minus b=16" in before["ours"] and "b=256 minus b=16" in after["ours"])
    mirrored = (-after["effect"], -after["effect_high"], -after["effect_low"], after["seeds"])
    assert mirrored == pytest.approx(
        (before["effect"], before["effect_low"], before["effect_high"], before["seeds"]), nan_ok=True, abs=1e-9
    ), key


# --- 4. a constant on every accuracy changes nothing ----------------------------------------------------------
def shifted(design, c: float) -> xr.Dataset:
    """Every test and validation accuracy + ``c`` pp (C6: its train accuracies, what it reads; C7, which reads kernel
    norms: every norm times e^(c/10), the same constant on the log scale its slopes are fitted on)."""
    ds = design.ds.copy(deep=True)
    if design.claim == "C6":
        ds["final_train_acc"] = ds["final_train_acc"] + c
    elif design.claim == "C7":
        ds["weight_norm"] = ds["weight_norm"] * math.exp(c / 10)
    else:
        for var in TEST_ACCURACIES:
            ds[var] = ds[var] + c
    return ds


@pytest.mark.parametrize("claim", ALL_CLAIMS)
@few(4)
@given(data=st.data(), c=st.integers(-40, 40).filter(bool).map(lambda i: i * GRID))
def test_a_constant_on_every_accuracy_changes_no_verdict_and_no_interval(claim, data, c):
    if claim == "B1":
        c = float(on_grid(c))  # fake_phase's accuracies are off the grid: an integer shift is exact enough
    design = data.draw(designs(claim))
    before, after = judged(design), judged(design, shifted(design, c))
    assert list(before.index) == list(after.index)
    for key in before.index:
        for column in NUMBERS:
            assert after.loc[key, column] == pytest.approx(before.loc[key, column], nan_ok=True, abs=1e-9), (
                key,
                column,
            )
        if claim == "C6" and PREMISE_NOT_MET in (before.loc[key, "verdict"], after.loc[key, "verdict"]):
            continue  # C6's premise is a level (ResNet-9 at 99.5 %), which a constant moves
        assert after.loc[key, "verdict"] == before.loc[key, "verdict"], (key, before.loc[key, "reason"])


# --- regressions the properties found ---------------------------------------------------------------------------
def test_a_diverged_resnet9_run_is_left_out_of_c6s_premise():
    """A diverged ResNet-9 run (NaN train accuracy) made C6's premise fail, with the reason "ResNet-9 does not
    interpolate at every sigma_w (lowest 100.0 %)", while the note said the run was left out; its seed drops out now,
    as in every other claim's premise."""
    from sweep_fakes import fake_sweep

    ds = fake_sweep({"sigma_w": [0.25, 2.5], "seed": [0, 1, 2, 3]}, {"model": ["resnet9", "resnet56"]})
    ds["final_train_acc"][:] = 100.0
    ds["final_train_acc"].loc[{"model": "resnet56", "sigma_w": 2.5}] = [60.0, 70.0, 65.0, 62.0]
    diverge(ds, {"model": "resnet9", "sigma_w": 2.5, "seed": 1})
    row = claims.reproduction_table({"05_depth": ds}, ["C6"]).loc["C6"]
    assert row["verdict"] != PREMISE_NOT_MET and row["seeds"] == 3, row["reason"]


def test_a_missing_run_leaves_c7_judged():
    """A run missing from 01 (NaN kernel norms, e.g. a cell never trained) made C7's null fail on arrays of two
    shapes ("lacks what the rule needs (ValueError: operands could not be broadcast ...)"); its seed drops out of the
    null now."""
    from strategies import miss
    from sweep_fakes import ledger_results

    results = ledger_results(seeds=(0, 1, 2, 3))
    miss(results["01_optimizers"], {"optimizer": "sgd", "sigma_w": 1.0, "seed": 2})
    row = claims.claim_rows(results, ["C7"])[0]
    assert "lacks what the rule needs" not in row.verdict.reason and row.null.has_null, row.verdict.reason
    assert row.null.permutations == 2 ** (3 * 3)  # 3 sigma_w x the 3 complete seeds, every swap (exact)


def test_make_test_draws_a_fixed_set_of_examples():
    """`make test` (what CI runs) loads the "ci" profile: examples derived from each test, no example database, so
    its verdict repeats on every machine; `make test-fast` keeps drawing new ones."""
    from pathlib import Path

    profile = settings.get_profile("ci")
    assert profile.derandomize and profile.database is None
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    assert "--hypothesis-profile=ci" in makefile.split("\ntest:")[1].split("\n\n")[0]
    assert "--hypothesis-profile" not in makefile.split("\ntest-fast:")[1].split("\n\n")[0]

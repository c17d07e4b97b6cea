"""The simulated error rates of the ledger's rules (initmem.study.verdicts.error_rates): the coverage it measures is right
where the answer is known, the rates come out in their shape, and the verdicts are the rules' own."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import xarray as xr
from scipy import stats

from initmem.study.statistics import nulls
from initmem.study.statistics.calibration import CrossFitted
from initmem.study.statistics.stats import cross_fitted_spreads
from initmem.study.verdicts import error_rates, rules
from initmem.study.verdicts.error_rates import DESIGNS, RATES, interval_coverage, mc_error, rates_table, simulate

C1, C2, C5 = DESIGNS[0], DESIGNS[1], DESIGNS[3]


def test_without_memory_the_calibrated_interval_covers_95_percent_where_students_covered_far_less():
    reps = 1000
    acc = np.random.default_rng(2).normal(60.0, 2.5, size=(reps, 2, 10))  # C4's design, no memory
    spreads = cross_fitted_spreads(xr.DataArray(acc, dims=("rep", "sigma_w", "seed"))).values
    assert abs(spreads.mean()) < 3 * spreads.std() / math.sqrt(spreads.size)
    assert abs(interval_coverage(spreads, 0.0, CrossFitted(2)) - 0.95) < 3 * mc_error(0.95, reps)
    students = np.mean([abs(row.mean()) <= stats.t.ppf(0.975, 9) * row.std(ddof=1) / math.sqrt(10) for row in spreads])
    assert students < 0.95 - 3 * mc_error(0.95, reps)  # what the plain t-interval did


def test_a_reduced_simulation_through_the_rules_meets_the_targets_within_monte_carlo_error():
    """C2 Adam's design at the measured noise (sd 2.5 pp): its size on the band's edge earns "in size" at most 2.5 %
    of the time, the direction holds with no effect at most 5 %, and both intervals cover 95 % without memory."""
    reps = 300
    rates = simulate(C2, 2.5, reps, np.random.default_rng(6), draws=100)
    assert rates["false_in_size_at_edge"] <= 0.025 + 3 * mc_error(0.025, reps)
    assert rates["false_positive_no_effect"] <= 0.05 + 3 * mc_error(0.05, reps)
    for name in ("coverage_spread", "coverage_contrast"):
        assert abs(rates[name] - 0.95) < 3 * mc_error(0.95, reps)


def test_the_rates_have_their_shape_and_are_nan_only_where_a_design_has_no_such_case():
    ds = error_rates.error_rates([C1, C5], noise_sds=(2.5,), reps=8, seed=3, draws=50)
    assert set(ds.data_vars) == set(RATES)
    assert dict(ds.sizes) == {"design": 2, "noise_sd": 1}
    assert ds.attrs["reps"] == 8 and ds.attrs["draws"] == 50
    c1, c5 = (ds.sel(design=d.label, noise_sd=2.5) for d in (C1, C5))
    assert math.isnan(float(c1["coverage_contrast"])) and math.isnan(float(c5["false_in_size_at_edge"]))
    finite = [float(v) for name in RATES for v in ds[name].values.ravel() if np.isfinite(v)]
    assert len(finite) == 2 * len(RATES) - 2 and all(0.0 <= v <= 1.0 for v in finite)
    table = rates_table(ds)
    assert len([line for line in table.splitlines() if line.startswith("| C")]) == 2 and "n/a" in table


def test_a_seeded_simulation_repeats_and_leaves_the_ledgers_draws_alone():
    kept = nulls.N_RESAMPLES
    first, second = (simulate(C2, 2.5, 10, np.random.default_rng(4), draws=50) for _ in range(2))
    assert first == pytest.approx(second, nan_ok=True)
    assert nulls.N_RESAMPLES == kept


def test_the_verdicts_are_the_rules_own(monkeypatch):
    rng = np.random.default_rng(5)
    honest = simulate(C2, 1.0, 20, rng, draws=50)
    assert honest["false_positive_no_effect"] < 0.5 and honest["power_at_paper"] > 0.5
    monkeypatch.setattr(rules, "judge", lambda *args, **kwargs: rules.Verdict(rules.IN_SIZE, "always"))
    rigged = simulate(C2, 1.0, 20, np.random.default_rng(5), draws=50)
    assert rigged["false_in_size_at_edge"] == rigged["false_positive_no_effect"] == rigged["power_at_paper"] == 1.0
    assert rigged["coverage_spread"] == honest["coverage_spread"]  # coverage does not ask the rules


def test_the_script_writes_a_checksummed_file_with_its_provenance(tmp_path):
    """scripts/error_rates.py, at 2 replicates and 20 draws, writes through the results writer: the file reads back
    with its checksum, and records its commit, time and script beside the simulation's own settings."""
    from initmem.sweeps.store import read_checked
    from repo_scripts import load_script

    module = load_script("scripts/error_rates.py", "error_rates_script")
    module.main(["--reps", "2", "--draws", "20", "--seed", "3", "--out", str(tmp_path / "rates.nc")])
    ds = read_checked(tmp_path / "rates.nc", require_checksum=True)
    assert {k: int(ds.attrs[k]) for k in ("reps", "draws", "seed")} == {"reps": 2, "draws": 20, "seed": 3}
    assert ds.attrs["script"] == "scripts/error_rates.py" and ds.attrs["created"].endswith("+00:00")
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", ds.attrs["commit"])  # -dirty in a checkout with local changes
    assert set(RATES) <= set(ds.data_vars)

"""The calibrated intervals of cross-fitted spreads (initmem.study.statistics.calibration): the critical values are the
simulation's, the committed table is read as data and matches its script's function, and the interval is built from
the values by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from initmem.study.statistics import calibration
from initmem.study.statistics.calibration import (
    LABEL,
    TABLE_PATH,
    Critical,
    CrossFitted,
    critical,
    read_table,
    simulate_critical,
)


def test_the_committed_table_is_json_with_its_provenance_and_covers_the_records_designs():
    text = TABLE_PATH.read_text(encoding="utf-8")
    table = json.loads(text)  # plain data: nothing is executed to read it
    assert read_table() == table
    provenance = table["provenance"]
    assert len(provenance["commit"]) >= 7 and provenance["reps"] >= 10_000 and provenance["seed"] == calibration.SEED
    for kind in calibration.KINDS:
        assert {"4x5", "2x10", "2x3", "2x2"} <= set(table[kind])  # the record's designs, and a seed lost
        for design in ("4x5", "2x10", "2x3"):
            entry = table[kind][design]
            assert 0 < entry["low"] <= 20 and 0 < entry["high"] <= 20


def test_a_designs_critical_values_are_the_tables_and_the_table_repeats_its_simulation():
    table = read_table()
    assert critical("spread", 4, 5) == Critical(table["spread"]["4x5"]["low"], table["spread"]["4x5"]["high"])
    # the table's function at fewer replicates lands near the committed value (the quantiles' Monte-Carlo error)
    again = simulate_critical("contrast", 2, 3, 20_000)
    assert again.low == again.high == pytest.approx(table["contrast"]["2x3"]["low"], rel=0.08)
    spread = simulate_critical("spread", 4, 5, 20_000)  # four sigma_w: a linear profile of the ratio's spread
    assert (spread.low, spread.high) == pytest.approx(
        (table["spread"]["4x5"]["low"], table["spread"]["4x5"]["high"]), rel=0.08
    )


def test_the_interval_is_the_mean_plus_and_minus_the_critical_values_times_the_standard_error():
    values = np.array([3.0, 5.0, 4.0, 8.0, 10.0, np.nan])  # a diverged seed drops out: 5 seeds
    c = critical("spread", 4, 5)
    se = float(np.std(values[:5], ddof=1)) / math.sqrt(5)
    interval = CrossFitted(4).interval(values)
    assert interval.estimate == pytest.approx(6.0)
    assert interval.low == pytest.approx(6.0 - c.low * se) and interval.high == pytest.approx(6.0 + c.high * se)
    assert interval.n == 5 and interval.method == LABEL and LABEL in interval.format()
    contrast = CrossFitted(4, "contrast").interval(values[:5])
    assert contrast.high - 6.0 == pytest.approx(6.0 - contrast.low)  # symmetric
    assert not CrossFitted(4).interval([2.0]).has_bounds and CrossFitted(4).interval([2.0]).estimate == 2.0


def test_the_spread_interval_is_wider_above_and_wider_than_students():
    from scipy import stats

    for n_sigma, n_seeds in ((4, 5), (2, 10), (2, 3)):
        c = critical("spread", n_sigma, n_seeds)
        assert c.high > c.low and c.high > stats.t.ppf(0.975, n_seeds - 1)


def test_a_design_outside_the_table_is_simulated_on_the_fly_and_said(caplog, monkeypatch):
    monkeypatch.setattr(calibration, "ON_THE_FLY_REPS", 2_000)
    critical.cache_clear()
    try:
        with caplog.at_level("WARNING", logger="initmem.study.statistics.calibration"):
            value = critical("spread", 5, 7)
        assert value == simulate_critical("spread", 5, 7, 2_000)
        assert "5 x 7" in caplog.text and "not in critical_values.json" in caplog.text
    finally:
        critical.cache_clear()


def test_bad_designs_say_what_is_allowed():
    with pytest.raises(ValueError, match="kind: 'slope'; allowed: spread, contrast"):
        simulate_critical("slope", 4, 5, 1000)
    with pytest.raises(ValueError, match="at least 2 sigma_w values and 2 seeds"):
        simulate_critical("spread", 1, 5, 1000)


def _script():
    from repo_scripts import load_script

    return load_script("scripts/critical_values.py", "critical_values_script")


def test_the_script_writes_the_simulations_values_with_their_provenance(tmp_path):
    out = tmp_path / "table.json"
    _script().main(["--reps", "1000", "--sigmas", "2", "--seeds", "2", "3", "--out", str(out)])
    table = read_table(out)
    assert table["provenance"]["reps"] == 1000 and table["provenance"]["seed"] == calibration.SEED
    assert set(table["spread"]) == set(table["contrast"]) == {"2x2", "2x3"}
    c = simulate_critical("spread", 2, 3, 1000)
    assert table["spread"]["2x3"] == {"low": round(c.low, 4), "high": round(c.high, 4)}


def test_the_script_refuses_a_bad_design_in_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        _script().main(["--sigmas", "1"])
    assert stop.value.code == 2 and "--sigmas and --seeds >= 2" in capsys.readouterr().err

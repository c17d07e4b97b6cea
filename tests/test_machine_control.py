"""The scale ladder's machine control: which CPU trained which runs, in words, and a control copy's change from the run
it copies, per run and on its seed's cross-fitted spread, checked by hand on a synthetic ladder."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from initmem.study.verdicts import machine_control as mc
from initmem.sweeps.store import write_run

LRS = {"sgd": 0.02, "adam": 0.008}
FIRST, WIDE = (8, 5000, 40), (32, 5000, 40)
INTEL, AMD = "Intel(R) Xeon(R) Processor", "AMD EPYC"
NAMES = {FIRST: "width 8 on 5,000 images", WIDE: "width 32 on 5,000 images"}


def _ladder() -> xr.Dataset:
    """Two rungs (widths 8 and 32), SGD and Adam, sigma_w 0.1 and 2.5, seeds 0 to 3: test accuracy 60 + seed at
    sigma_w 0.1 and 40 at 2.5 on both predictors; every run's hash names its place (``"w8-sgd-0.1-s0"``)."""
    coords = {
        "width": [8, 32],
        "train_size": [5000],
        "epochs": [40],
        "sigma_w": [0.1, 2.5],
        "seed": [0, 1, 2, 3],
        "lr": list(LRS.values()),
    }
    acc = np.empty(tuple(len(v) for v in coords.values()))
    acc[:, :, :, 0] = (60.0 + np.arange(4))[:, None]
    acc[:, :, :, 1] = 40.0
    names = {lr: name for name, lr in LRS.items()}
    hashes = np.empty(acc.shape, dtype=object)
    for index in np.ndindex(acc.shape):
        w, _, _, s, seed, lr = (coords[d][i] for d, i in zip(coords, index))
        hashes[index] = f"w{w}-{names[lr]}-{s:g}-s{seed}"
    dims = tuple(coords)
    ds = xr.Dataset(
        {"selected_test_acc": (dims, acc), "final_test_acc": (dims, acc.copy()), "run_hash": (dims, hashes)},
        coords=coords,
    )
    return ds.assign_coords(optimizer=("lr", ["sgd", "adam"]))


def _cpus(ds: xr.Dataset, amd: set[str]) -> dict[str, str]:
    return {h: AMD if h in amd else INTEL for h in ds["run_hash"].values.ravel()}


def _copy(cpu: str, selected: float, final: float) -> xr.Dataset:
    return xr.Dataset({"selected_test_acc": ((), selected), "final_test_acc": ((), final)}, attrs={"cpu_model": cpu})


def test_a_cpu_model_gets_a_folder_name_of_lower_case_words_joined_by_dashes():
    assert mc.cpu_folder(INTEL) == "intel-r-xeon-r-processor"
    assert mc.cpu_folder(AMD) == "amd-epyc"


def test_every_run_is_placed_by_its_hash_with_its_rung_condition_sigma_and_seed():
    ds = _ladder()
    placed = mc.placed_runs(ds, _cpus(ds, {"w32-adam-2.5-s3"}))
    assert len(placed) == 2 * 2 * 2 * 4
    (amd,) = [r for r in placed if r.cpu_model == AMD]
    assert amd == mc.PlacedRun("w32-adam-2.5-s3", WIDE, "adam", 2.5, 3, AMD)
    assert mc.placed_runs(ds, {}) == []  # a run whose file was not found is not placed


def test_which_cpu_trained_which_runs_is_said_by_rung_then_seeds_in_order_whole_or_at_one_sigma_w():
    ds = _ladder()
    amd = {f"w32-{c}-{s:g}-s{seed}" for c in LRS for s in (0.1, 2.5) for seed in (2, 3)} | {
        f"w32-{c}-2.5-s1" for c in LRS
    }
    where = mc.where_trained(mc.placed_runs(ds, _cpus(ds, amd)), NAMES)
    assert list(where) == [INTEL, AMD]  # the CPU with more runs first
    assert (
        where[INTEL] == "every run of width 8 on 5,000 images; seed 0 and seed 1 at σ_w 0.1 of width 32 on 5,000 images"
    )
    assert where[AMD] == "seed 1 at σ_w 2.5 and seeds 2 and 3 of width 32 on 5,000 images"
    one = mc.where_trained(mc.placed_runs(ds, _cpus(ds, set())), NAMES)
    assert one == {INTEL: "every run of width 8 on 5,000 images and width 32 on 5,000 images"}


@pytest.mark.parametrize(
    ("values", "said"),
    [([0, 1, 2, 4], "0 to 2 and 4"), ([5], "5"), ([7, 6], "6 and 7"), ([0, 1, 4, 5, 6], "0, 1 and 4 to 6")],
)
def test_seed_ranges_are_written_as_ranges(values, said):
    assert mc._ranges(values) == said


def test_a_copys_change_is_its_accuracy_minus_the_runs_and_its_seeds_spread_moves_by_the_difference():
    """Seed 0's SGD copies gain 2 pp at sigma_w 0.1 (1 on the final predictor) and lose 1 at 2.5: the runs move by
    +2 / -1, the seed's cross-fitted spread (best sigma_w 0.1 by the other seeds) by +3 (+2 final). Adam's one copy
    moves its run but gives no spread (its other sigma_w was not copied); a copy of no run of the ladder is left
    out."""
    ds = _ladder()
    copies = [
        ("w8-sgd-0.1-s0", _copy(AMD, 62.0, 61.0)),
        ("w8-sgd-2.5-s0", _copy(AMD, 39.0, 39.0)),
        ("w8-adam-0.1-s0", _copy(AMD, 59.5, 60.0)),
        ("not-a-ladder-run", _copy(AMD, 10.0, 10.0)),
    ]
    (effect,) = mc.machine_effects(ds, copies, mc.placed_runs(ds, _cpus(ds, set())))
    assert effect.cpu_model == AMD and effect.reference == (INTEL,)
    changes = {(r.condition, r.sigma_w): r.changes for r in effect.runs}
    assert changes == {
        ("adam", 0.1): {"selected": -0.5, "final": 0.0},
        ("sgd", 0.1): {"selected": 2.0, "final": 1.0},
        ("sgd", 2.5): {"selected": -1.0, "final": -1.0},
    }
    assert effect.spread_changes == pytest.approx({("sgd", 0, "selected"): 3.0, ("sgd", 0, "final"): 2.0})


def test_the_page_says_one_cpu_or_which_runs_each_trained_and_whether_the_control_is_due():
    ds = _ladder()
    placed = mc.placed_runs(ds, _cpus(ds, {"w32-sgd-2.5-s3", "w32-adam-2.5-s3"}))
    where = mc.where_trained(placed, NAMES)
    alone = mc.effect_text([], mc.where_trained(mc.placed_runs(ds, _cpus(ds, set())), NAMES), [INTEL])
    assert alone == f"Every run was trained on one CPU model ({INTEL}): no machine effect enters the shifts."
    due = mc.effect_text([], where, [INTEL])
    assert "The runs come from 2 CPU models" in due and f"is not yet trained on {AMD}" in due
    copies = [("w8-sgd-0.1-s0", _copy(AMD, 62.0, 61.0)), ("w8-sgd-2.5-s0", _copy(AMD, 39.0, 39.0))]
    said = mc.effect_text(mc.machine_effects(ds, copies, placed), where, [INTEL])
    assert "not yet trained" not in said
    assert "SGD at σ_w 0.1 +2.0 / +1.0, SGD at σ_w 2.5 -1.0 / -1.0 pp (selected / final predictor)" in said
    assert "the spread by SGD's (seed 0) +3.0 / +2.0 pp" in said
    trained_ahead = mc.effect_text(
        mc.machine_effects(ds, copies, mc.placed_runs(ds, _cpus(ds, set()))),
        mc.where_trained(mc.placed_runs(ds, _cpus(ds, set())), NAMES),
        [INTEL],
    )  # a control trained before any ladder run of its CPU is printed all the same
    assert trained_ahead.startswith(alone) and f"Re-trained on {AMD}, the machine control's 2 runs" in trained_ahead


def test_control_copies_are_read_from_their_cpu_folders_with_their_checksums(tmp_path):
    folder = tmp_path / "controls" / mc.cpu_folder(AMD)
    folder.mkdir(parents=True)
    write_run(_copy(AMD, 62.0, 61.0), folder / "w8-sgd-0.1-s0.nc")
    ((run_hash, copy),) = mc.read_copies(tmp_path / "controls")
    assert run_hash == "w8-sgd-0.1-s0" and float(copy["final_test_acc"]) == 61.0
    assert mc.read_copies(tmp_path / "absent") == []
    xr.Dataset({"final_test_acc": ((), 1.0)}).to_netcdf(folder / "unchecked.nc", engine="h5netcdf")
    with pytest.raises(Exception, match="checksum"):
        mc.read_copies(tmp_path / "controls")

"""The book renders a notebook at the ``cpu`` preset only when building it reads results and never trains."""

from __future__ import annotations

import json

import pytest
import xarray as xr

from initmem.book.runner import DEFAULT_RESULTS_DIR, discover_notebooks
from initmem.run.config import EXECUTION_FIELDS, RunConfig
from initmem.study.costs import costs, results
from initmem.study.design import layout, presets, registry

#: Experiments whose complete results a reader notebook needs (07 and 99 tolerate missing experiments).
REQUIRES = {"06_norms": ("01_optimizers",)}
RENDERED_ELSEWHERE = [n for n in discover_notebooks() if presets.book_preset(n) != presets.BOOK_PRESET]


def test_book_presets_are_known_notebooks_and_presets():
    notebooks = set(discover_notebooks())
    for name, preset in presets.BOOK_PRESET_BY_NOTEBOOK.items():
        assert name in notebooks, f"BOOK_PRESET_BY_NOTEBOOK names {name!r}, which is not a notebook"
        assert preset in layout.PRESETS and preset != presets.BOOK_PRESET, (name, preset)
    assert presets.book_preset("T1_scale_invariance") == presets.BOOK_PRESET


@pytest.mark.parametrize("name", RENDERED_ELSEWHERE)
def test_every_run_is_committed(name):
    preset = presets.book_preset(name)
    needed = [name] if name in registry.EXPERIMENTS else []
    for experiment in (*needed, *REQUIRES.get(name, ())):
        runs_dir, combined = results.results_paths(DEFAULT_RESULTS_DIR, preset, experiment)
        assert combined.is_file(), f"{name} is rendered at {preset} but {combined} is missing"
        with xr.open_dataset(combined, engine="h5netcdf") as ds:
            hashes = {str(h) for h in ds["run_hash"].values.ravel()}
        expected = costs.estimate_cost(preset, experiment)["runs"]
        assert len(hashes) == expected, f"{combined} holds {len(hashes)} runs; the {preset} sweep has {expected}"
        missing = sorted(h for h in hashes if not (runs_dir / f"{h}.nc").is_file())
        assert not missing, f"run files of {experiment} at {preset} are not committed: {missing}"


@pytest.mark.slow
def test_committed_runs_keep_their_hashes():
    """A run file is found by the hash of its config: a new RunConfig field must not change old hashes."""
    files = sorted(DEFAULT_RESULTS_DIR.glob("*/*/runs/*.nc"))
    if not files:
        pytest.skip("no committed run files")
    for path in files:
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            recorded = json.loads(ds.attrs["config"])
        # execution fields are not hashed, and older runs recorded some of them as null
        config = RunConfig.from_dict({k: v for k, v in recorded.items() if k not in EXECUTION_FIELDS})
        assert config.hash() == path.stem, f"{path} was cached as {path.stem}; its config now hashes differently"


@pytest.mark.slow
@pytest.mark.parametrize("preset", layout.PRESETS)
def test_every_experiments_runs_come_from_one_clean_commit(preset):
    """Training is chaotic: the committed runs of one experiment are all produced by one commit with a clean tree
    (different experiments may come from different commits; a run shared by two experiments is a copy of one file).
    The cost replays (:data:`initmem.study.costs.cost_fit.FIT_SWEEPS`) are timings, not results: the cost model reads each
    run's own CPU time and machine, so they may come from several commits (each clean)."""
    from initmem.study.costs.cost_fit import FIT_SWEEPS

    folders = sorted(p for p in DEFAULT_RESULTS_DIR.glob(f"{preset}/*/runs") if any(p.glob("*.nc")))
    if not folders:
        pytest.skip(f"no committed {preset} runs")
    for folder in folders:
        commits = set()
        for path in sorted(folder.glob("*.nc")):
            with xr.open_dataset(path, engine="h5netcdf") as ds:
                commits.add(str(ds.attrs["git_commit"]))
        experiment = folder.parent.name
        assert not any(c.endswith("-dirty") for c in commits), (experiment, commits)
        assert len(commits) == 1 or experiment in FIT_SWEEPS, (experiment, commits)

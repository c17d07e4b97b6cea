"""Train one sweep spec written by scripts/preset_specs.py into RESULTS_DIR/PRESET/<experiment>/runs/.

Usage (with the frozen commit's package first on PYTHONPATH): python sweep_job.py SPEC.json RESULTS_DIR PRESET

Before training, a run that another experiment of the preset already holds (the same file name, i.e. the same
config hash) and that the same commit trained is copied into this experiment's cache, so that it is trained once
(the phase diagram 10 holds 03's cells, for example); the sweep then verifies its checksum like any cached run.
Uses only ``initmem.sweeps.driver.sweep``, ``SweepSpec`` and ``git_commit``, which every commit of the package has (in
the layered package's modules or in the flat ones before it); failures are printed,
not raised, so that the next spec still runs.
"""

import json
import logging
import shutil
import sys
from pathlib import Path

import xarray as xr

try:  # the layered package (base, run, sweeps, ...)
    from initmem.sweeps.driver import sweep
    from initmem.sweeps.spec import SweepSpec
except ImportError:  # a frozen commit from before the layers (534d4b2, for one): flat modules
    from initmem.sweeps import SweepSpec, sweep
try:  # where git_commit has lived: base.paths, run.records, the flat records
    from initmem.base.paths import git_commit
except ImportError:
    try:
        from initmem.run.records import git_commit
    except ImportError:
        from initmem.records import git_commit


def reuse_sibling_runs(spec: dict, cache: Path, preset_dir: Path, commit: str) -> int:
    """Copy into ``cache`` the runs of ``spec`` that another experiment under ``preset_dir`` holds from ``commit``;
    returns how many were copied."""
    copied = 0
    cache.mkdir(parents=True, exist_ok=True)
    for _, config in SweepSpec.from_dict(spec).configs():
        name = f"{config.hash()}.nc"
        if (cache / name).exists():
            continue
        for candidate in sorted(preset_dir.glob(f"*/runs/{name}")):
            with xr.open_dataset(candidate, engine="h5netcdf") as ds:
                same_commit = ds.attrs.get("git_commit") == commit
            if same_commit and candidate.parent != cache:
                shutil.copy2(candidate, cache / name)
                copied += 1
                break
    return copied


if __name__ == "__main__":  # the processes executor spawns workers that re-import this file
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    spec_file, results_dir, preset = sys.argv[1:4]
    job = json.load(open(spec_file))
    cache = Path(results_dir) / preset / job["name"] / "runs"
    try:
        reused = reuse_sibling_runs(job["spec"], cache, Path(results_dir) / preset, git_commit())
        if reused:
            print("reused", reused, "runs of other experiments from the same commit", flush=True)
        ds = sweep(job["spec"], cache, executor="processes", workers=2, progress=False)
        print("done", job["name"], ds.attrs["n_runs"], "runs,", ds.attrs["n_cached"], "cached", flush=True)
    except Exception as exc:  # noqa: BLE001 - reported; the next spec runs
        print("FAILED", job["name"], type(exc).__name__, exc, flush=True)

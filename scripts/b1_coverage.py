"""B1's interval coverage and power by simulation (initmem.study.verdicts.boundary_coverage), in worlds shaped like the
committed phase diagram: results/<preset>/b1_coverage.nc, read by chapter 10 and the ledger's page.

Usage: python scripts/b1_coverage.py [PRESET] [--reps N] [--seeds 10,20]

Run it again when the committed runs of chapter 10 change; it writes the file through the results writer
(initmem.sweeps.store.write_run: atomic, with a checksum) with its provenance (commit, date).
"""

from __future__ import annotations

import argparse
import datetime as _dt
from pathlib import Path

import xarray as xr

from initmem.base.paths import git_commit
from initmem.study.verdicts import boundary_coverage
from initmem.sweeps.store import write_run

ROOT = Path(__file__).resolve().parents[1]
#: The true boundaries simulated: the band's lower edge, T5's prediction and the record's first reading.
X0S = (-0.78, -0.3, 0.0)


def main(preset: str, reps: int, seeds: list[int]) -> None:
    folder = ROOT / "results" / preset
    world = boundary_coverage.world_of(xr.load_dataset(folder / "10_phase_diagram.nc", engine="h5netcdf"))
    ds = boundary_coverage.simulate(world, X0S, reps)
    power = boundary_coverage.power_by_seeds(world, sorted({world.seeds, *seeds}), reps)
    ds = ds.assign(power=power)
    ds.attrs.update(
        preset=preset,
        commit=git_commit(),
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        script="scripts/b1_coverage.py",
        record=f"results/{preset}/10_phase_diagram.nc",
    )
    out = folder / "b1_coverage.nc"
    write_run(ds, out)
    print(ds[["coverage", "in_size", "median_width"]].to_dataframe().round(3))
    print(power.to_series().round(3))
    print(f"wrote {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("preset", nargs="?", default="cpu")
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seeds", type=lambda s: [int(v) for v in s.split(",")], default=[10, 20])
    args = parser.parse_args()
    main(args.preset, args.reps, args.seeds)

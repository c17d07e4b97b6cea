"""The power of each sized ledger row at its own noise, and the seeds that would reach 80 %:
results/<preset>/row_power.nc (initmem.study.verdicts.row_power), read by the ledger's page.

Usage: python scripts/row_power.py [PRESET] [--reps N] [--seeds 10,20]

Run it again when the committed runs of 01 or 03 change; it writes the file with its provenance (commit, date).
"""

from __future__ import annotations

import argparse
import datetime as _dt
from pathlib import Path

import xarray as xr

from initmem.base.paths import git_commit
from initmem.study.verdicts import claims, row_power

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ("01_optimizers", "02_long_training", "03_lr_and_l2", "04_batch_size", "05_depth", "10_phase_diagram")


def main(preset: str, reps: int, seeds: list[int]) -> None:
    folder = ROOT / "results" / preset
    results = {
        name: xr.load_dataset(folder / f"{name}.nc", engine="h5netcdf")
        for name in EXPERIMENTS
        if (folder / f"{name}.nc").is_file()
    }
    table = claims.reproduction_table(results)
    rows = row_power.row_designs(results, table["predictor"].to_dict())
    ds = row_power.power_table(rows, seeds, reps)
    ds.attrs.update(
        preset=preset,
        commit=git_commit(),
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        script="scripts/row_power.py",
    )
    out = folder / "row_power.nc"
    ds.to_netcdf(out, engine="h5netcdf")
    for row, cols in row_power.power_columns(ds).items():
        print(f"{row}: {cols['power']}; seeds for 80 %: {cols['seeds for 80 %']}")
    print(f"wrote {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("preset", nargs="?", default="cpu")
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--seeds", type=lambda s: [int(v) for v in s.split(",")], default=[10, 20])
    args = parser.parse_args()
    main(args.preset, args.reps, args.seeds)

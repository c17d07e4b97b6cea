"""The power of each ledger row at its own noise, and the seeds that would reach 80 %:
results/<preset>/row_power.nc (initmem.study.verdicts.row_power), read by the ledger's page.

Usage: python scripts/row_power.py [PRESET] [--reps N] [--seeds 10,20]

Run it again when the committed runs of an experiment the ledger judges change; it writes the file through the
results writer (initmem.sweeps.store.write_run: atomic, with a checksum) with its provenance (commit, date).
"""

from __future__ import annotations

import argparse
import datetime as _dt
from pathlib import Path

from initmem.base.paths import git_commit
from initmem.study.costs.results import load_results
from initmem.study.design import presets
from initmem.study.verdicts import claims, row_power
from initmem.sweeps.store import write_run

ROOT = Path(__file__).resolve().parents[1]


def main(preset: str, reps: int, seeds: list[int]) -> None:
    folder = ROOT / "results" / preset
    results = load_results(ROOT / "results", preset, presets.NOTEBOOK_READS["99_reproduction"])  # the ledger's page's
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
    write_run(ds, out)
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

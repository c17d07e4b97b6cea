"""Measure how often the ledger's rules err, by simulation on the record's designs (:mod:`initmem.study.verdicts.error_rates`).

Usage: python scripts/error_rates.py [--reps 2000] [--seed 0] [--draws 1000] [--out results/cpu/error_rates.nc]

Writes a small netCDF (rates per design x noise sd, shares in [0, 1]) through the results writer
(:func:`initmem.sweeps.store.write_run`: atomic, with a checksum) with its provenance in the attributes (commit, UTC
time created, the script, replicates, permutation draws, seed) and prints the table the ledger page shows
(:func:`initmem.study.verdicts.error_rates.rates_table`).
"""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

from initmem.base.paths import git_commit
from initmem.study.verdicts.error_rates import error_rates, rates_table
from initmem.sweeps.store import write_run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=2000, help="simulated replicates per design and noise sd")
    parser.add_argument("--seed", type=int, default=0, help="seed of the simulation")
    parser.add_argument("--draws", type=int, default=1000, help="random permutations per null (the ledger: 10,000)")
    parser.add_argument("--out", type=Path, default=Path("results/cpu/error_rates.nc"), help="netCDF to write")
    args = parser.parse_args(argv)
    ds = error_rates(reps=args.reps, seed=args.seed, draws=args.draws)
    ds.attrs.update(
        commit=git_commit(),
        created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        script="scripts/error_rates.py",
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_run(ds, args.out)
    print(rates_table(ds))


if __name__ == "__main__":
    main()

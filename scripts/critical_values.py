"""Write the critical values of the calibrated cross-fitted intervals (:mod:`initmem.study.statistics.calibration`).

Usage: python scripts/critical_values.py [--reps 50000] [--sigmas 2 3 4] [--seeds 2 ... 10] [--out PATH]

Simulates every design ``n_sigma x n_seeds`` of the grid for both kinds (a spread, a contrast) and writes JSON with
its provenance (commit, UTC date, replicates, seed, ratios, level) to ``src/initmem/study/statistics/critical_values.json``,
the table the ledger reads. Run it from a clean committed tree so that the commit recorded made the numbers.
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

from initmem.base.paths import git_commit
from initmem.study.statistics.calibration import KINDS, RATIOS, SEED, TABLE_PATH, simulate_critical
from initmem.study.statistics.stats import LEVEL


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=50_000, help="simulated replicates per design and ratio")
    parser.add_argument("--sigmas", type=int, nargs="+", default=[2, 3, 4], help="sigma_w counts")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(2, 11)), help="seed counts")
    parser.add_argument("--out", type=Path, default=TABLE_PATH, help="JSON to write")
    args = parser.parse_args(argv)
    if args.reps < 1000 or min(args.sigmas) < 2 or min(args.seeds) < 2:
        parser.error("--reps must be >= 1000, --sigmas and --seeds >= 2")
    table: dict = {
        "provenance": {
            "commit": git_commit(),
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "reps": args.reps,
            "seed": SEED,
            "ratios": list(RATIOS),
            "level": LEVEL,
            "script": "scripts/critical_values.py",
        }
    }
    for kind in KINDS:
        table[kind] = {}
        for n_sigma in args.sigmas:
            for n_seeds in args.seeds:
                c = simulate_critical(kind, n_sigma, n_seeds, args.reps)
                table[kind][f"{n_sigma}x{n_seeds}"] = {"low": round(c.low, 4), "high": round(c.high, 4)}
                print(f"{kind} {n_sigma} x {n_seeds}: low {c.low:.3f}, high {c.high:.3f}", flush=True)
    args.out.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

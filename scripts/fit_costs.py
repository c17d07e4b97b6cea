"""Fit the CPU cost model to the CPU time the committed runs recorded and write it into the package.

    python scripts/fit_costs.py [--results-dir results] [--preset cpu]

Reads every run file of ``<results-dir>/<preset>/*/runs/`` (:func:`initmem.study.costs.cost_fit.run_table`), fits the
model :mod:`initmem.study.costs.cost_fit` describes to the runs that record their CPU time and writes it, with its
calibration over them, the load the wall-timed runs ran under and their provenance, to
``src/initmem/study/costs/cost_model.json`` (:data:`initmem.study.costs.costs.COST_MODEL_FILE`), which :mod:`initmem.study.costs.costs`
reads. Exits 2 when no run records its CPU time or the runs do not separate the model's terms. Re-run it when runs are added (``tests/test_costs.py`` says when the file is stale).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from initmem.study.costs import cost_fit, costs

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results-dir", default=str(ROOT / "results"))
    parser.add_argument("--preset", default="cpu")
    args = parser.parse_args()
    runs = cost_fit.run_table(args.results_dir, args.preset)
    if runs.empty:
        parser.exit(2, f"--results-dir: no run files under {args.results_dir}/{args.preset}/*/runs/\n")
    try:
        model = cost_fit.fit(cost_fit.fitted_runs(runs))
    except ValueError as exc:
        parser.exit(2, f"--results-dir: {exc}\n")
    model["provenance"] |= {"script": "scripts/fit_costs.py", "preset": args.preset}
    out = ROOT / "src" / "initmem" / "study" / "costs" / costs.COST_MODEL_FILE
    out.write_text(json.dumps(model, indent=1, sort_keys=True) + "\n")
    c = model["calibration"]
    print(
        f"{out.relative_to(ROOT)}: {c['runs']} runs; recorded / estimated median {c['median']:.2f}, "
        f"{c['within_1_5x']:.0%} within 1.5x, p10-p90 {c['p10']:.2f}-{c['p90']:.2f}"
    )
    if model["load"]:
        load = model["load"]
        print(
            f"{load['runs']} wall-timed runs: wall / estimated CPU seconds median {load['median']:.2f}, "
            f"p10-p90 {load['p10']:.2f}-{load['p90']:.2f} (the load they ran under)"
        )


if __name__ == "__main__":
    main()

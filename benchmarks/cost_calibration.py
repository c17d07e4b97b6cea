"""How well the fitted cost model (:mod:`initmem.study.costs.cost_fit`) predicts the committed runs' CPU time, and how much
longer the record's wall-timed runs took.

    python benchmarks/cost_calibration.py [--results-dir results] [--preset cpu]

Prints, over the distinct runs of ``<results-dir>/<preset>/*/runs/``, recorded / estimated seconds (median, share
within 1.5x, p10-p90, range, sum over sum):

* for the runs that record their CPU time: the committed model (in sample); each cost configuration left out of the
  fit in turn, its runs estimated as the package would estimate a configuration it never saw (a network, width,
  optimizer or precision only it had falls back as :mod:`initmem.study.costs.costs` says: the nearest recorded level or
  width, the reference optimizer or precision); and per sweep;
* for the runs that record wall time only (before CPU time was recorded): their wall time over the estimated CPU
  time, i.e. the load they ran under, overall and per sweep, and the ceiling no model of their wall times can pass
  (each run against the median of its own configuration's runs).

Then the fitted terms.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from initmem.study.costs import cost_fit, costs

#: What a run's cost depends on, as :func:`initmem.study.costs.cost_fit.run_table`'s columns (``flops`` stands for the
#: epochs and split sizes).
CONFIGURATION = ["cell", "width", "batch_size", "optimizer", "precision", "flops"]


def line(label: str, c: dict[str, float]) -> str:
    """One row of calibration figures (:func:`initmem.study.costs.cost_fit.calibration`)."""
    return (
        f"{label:<40} {c['runs']:>4} {c['median']:>6.2f} {c['within_1_5x']:>7.0%} {c['p10']:>5.2f}-{c['p90']:<5.2f}"
        f" {c['min']:>5.2f}-{c['max']:<5.2f} {c['total']:>6.2f}"
    )


def leave_one_configuration_out(timed: pd.DataFrame) -> tuple[dict[str, float], list[tuple]]:
    """Calibration of each cost configuration's CPU-timed runs under a model fitted without them (module
    docstring), and the configurations without which the others do not separate the model's terms (not counted:
    ResNet-9 at 16 px and width 8, say, without which width 4's term and that cell's level trade off)."""
    recorded, estimated, inseparable = [], [], []
    for key, part in timed.groupby(CONFIGURATION):
        try:
            model = cost_fit.fit(timed.drop(part.index))
        except ValueError:
            inseparable.append(key)
            continue
        estimated.append(
            [
                costs.model_seconds(
                    model,
                    r.flops,
                    costs.nearest_level(model["levels"], r.model, r.width, r.image_size),
                    r.width,
                    r.batch_size,
                    r.optimizer,
                    r.precision,
                )
                for r in part.itertuples(index=False)
            ]
        )
        recorded.append(part["seconds"].to_numpy())
    seconds, guess = np.concatenate(recorded), np.concatenate(estimated)
    return cost_fit.ratio_figures(seconds / guess, seconds.sum() / guess.sum()), inseparable


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results-dir", default="results")
    parser.add_argument("--preset", default="cpu")
    args = parser.parse_args()
    runs = cost_fit.fitted_runs(cost_fit.run_table(args.results_dir, args.preset))
    timed, wall = runs[runs["timer"] == "cpu"], runs[runs["timer"] == "wall"]
    if timed.empty:
        parser.exit(2, f"--results-dir: no run under {args.results_dir}/{args.preset}/*/runs/ records its CPU time\n")
    model = costs.cost_model()
    print(f"{len(runs)} distinct runs of {args.preset} on: {'; '.join(sorted(runs['hardware'].unique()))}")
    header = f"{'runs':>4} {'median':>6} {'in 1.5x':>7} {'p10-p90':>11} {'range':>11} {'sum':>6}"
    print(f"{'CPU seconds / estimated':<40} {header}")
    print(line("committed model (in sample)", cost_fit.calibration(model, timed)))
    left_out, inseparable = leave_one_configuration_out(timed)
    print(line("each configuration left out of the fit", left_out))
    for key in inseparable:
        print(f"  not left out (the others do not separate the terms without it): {key}")
    for sweep, part in timed.groupby("sweep"):
        print(line(f"  {sweep}", cost_fit.calibration(model, part)))
    if not wall.empty:
        print(f"{'wall seconds / estimated CPU seconds':<40} {header}")
        print(line("wall-timed runs: the load they ran under", cost_fit.calibration(model, wall)))
        for sweep, part in wall.groupby("sweep"):
            print(line(f"  {sweep}", cost_fit.calibration(model, part)))
        own = wall["seconds"] / wall.groupby(CONFIGURATION)["seconds"].transform("median")
        print(line("ceiling: own configuration's median", cost_fit.ratio_figures(own.to_numpy(), 1.0)))
    print(
        "effective GFLOP/s per core at width 8 (fitted): "
        + ", ".join(f"{c} {v:.1f}" for c, v in model["effective_gflops"].items())
    )
    terms = {
        "width": ", ".join(f"{w} x{np.exp(v):.2f}" for w, v in model["width"].items()),
        "optimizer": ", ".join(f"{o} x{np.exp(v):.2f}" for o, v in model["optimizer"].items()),
        "precision": ", ".join(f"{p} x{np.exp(v):.2f}" for p, v in model["precision"].items()),
    }
    print(f"seconds per FLOP: {'; '.join(f'{k} {v}' for k, v in terms.items())}")
    print(
        f"batch: x{np.exp(model['batch_slope']):.2f} time per image per doubling; overhead {model['overhead_s']} s a run"
    )


if __name__ == "__main__":
    main()

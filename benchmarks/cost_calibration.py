"""How well the fitted cost model (:mod:`initmem.study.cost_fit`) predicts the committed runs' wall times.

    python benchmarks/cost_calibration.py [--results-dir results] [--preset cpu]

Prints, over the distinct runs of ``<results-dir>/<preset>/*/runs/``, recorded / estimated seconds (median, share
within 1.5x, p10-p90, range, sum over sum) for the committed model; the same for a refit that leaves each sweep out in
turn (its runs estimated by a model fitted to the others: how a new sweep fares); the median per sweep; and the
ceiling no model of the configuration can pass, each run against the median of the runs of its own configuration
(the spread the machine's load alone makes). Then the fitted effective GFLOP/s per network and image size.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from initmem.study import cost_fit, costs


def line(label: str, c: dict[str, float]) -> str:
    """One row of calibration figures (:func:`initmem.study.cost_fit.calibration`)."""
    return (
        f"{label:<36} {c['runs']:>4} {c['median']:>6.2f} {c['within_1_5x']:>7.0%} {c['p10']:>5.2f}-{c['p90']:<5.2f}"
        f" {c['min']:>5.2f}-{c['max']:<5.2f} {c['total']:>6.2f}"
    )


def leave_one_sweep_out(runs: pd.DataFrame) -> dict[str, float]:
    """Calibration of each sweep's runs under a model fitted without them (a cell only that sweep holds keeps the
    full fit's level, as :mod:`initmem.study.costs` would take the nearest recorded one)."""
    full = cost_fit.fit(runs)
    recorded, estimated = [], []
    for sweep in sorted(runs["sweep"].unique()):
        model = cost_fit.fit(runs[runs["sweep"] != sweep])
        model["levels"] = {**full["levels"], **model["levels"]}
        part = runs[runs["sweep"] == sweep]
        rate = [
            costs.log_seconds_per_flop(model, model["levels"][r.cell], r.batch_size, r.optimizer, r.precision)
            for r in part.itertuples(index=False)
        ]
        recorded.append(part["seconds"].to_numpy())
        estimated.append(part["flops"].to_numpy() * np.exp(rate))
    seconds, guess = np.concatenate(recorded), np.concatenate(estimated)
    return _figures(seconds / guess, seconds.sum() / guess.sum())


def _figures(ratio: np.ndarray, total: float) -> dict[str, float]:
    """:func:`initmem.study.cost_fit.calibration`'s figures of the ratios ``ratio`` (``total``: sum over sum)."""
    return {
        "runs": len(ratio),
        "median": float(np.median(ratio)),
        "within_1_5x": float(np.mean((ratio <= 1.5) & (ratio >= 1 / 1.5))),
        "p10": float(np.quantile(ratio, 0.1)),
        "p90": float(np.quantile(ratio, 0.9)),
        "min": float(ratio.min()),
        "max": float(ratio.max()),
        "total": float(total),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results-dir", default="results")
    parser.add_argument("--preset", default="cpu")
    args = parser.parse_args()
    runs = cost_fit.run_table(args.results_dir, args.preset)
    if runs.empty:
        parser.exit(2, f"--results-dir: no run files under {args.results_dir}/{args.preset}/*/runs/\n")
    model = costs.cost_model()
    print(f"{len(runs)} distinct runs of {args.preset} on: {'; '.join(sorted(runs['hardware'].unique()))}")
    print(
        f"{'recorded / estimated':<36} {'runs':>4} {'median':>6} {'in 1.5x':>7} {'p10-p90':>11} {'range':>11} {'sum':>6}"
    )
    print(line("committed model (in sample)", cost_fit.calibration(model, runs)))
    print(line("each sweep left out of the fit", leave_one_sweep_out(runs)))
    key = ["cell", "width", "batch_size", "optimizer", "epochs_key"]
    keyed = runs.assign(epochs_key=runs["flops"])
    per_config = keyed["seconds"] / keyed.groupby(key)["seconds"].transform("median")
    print(line("ceiling: own configuration's median", _figures(per_config.to_numpy(), 1.0)))
    for sweep, part in runs.groupby("sweep"):
        print(line(f"  {sweep}", cost_fit.calibration(model, part)))
    print(
        "effective GFLOP/s per core (fitted): "
        + ", ".join(f"{c} {v:.1f}" for c, v in model["effective_gflops"].items())
    )
    terms = ", ".join(f"{o} x{np.exp(v):.2f}" for o, v in model["optimizer"].items())
    print(f"batch: x{2 ** model['batch_slope']:.2f} time per image per doubling; optimizers (within a sweep): {terms}")


if __name__ == "__main__":
    main()

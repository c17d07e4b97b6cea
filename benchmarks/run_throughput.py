"""Effective single-thread training throughput of finished runs, read from their result files.

For every cached run under ``results/<preset>/*/runs/`` it counts the images trained and evaluated
(:func:`initmem.study.presets.run_images`, the count the cost estimate uses), converts the evaluated ones into
training-image equivalents (evaluation is forward-only, :data:`initmem.study.presets.EVAL_SPEEDUP` times cheaper per
image) and divides by the run's wall time. The medians per (model, width, image size, batch size) are what
:data:`initmem.study.presets.CPU_THROUGHPUT` (x :data:`initmem.study.presets.BATCH_FACTOR`) should hold for this machine.

    python benchmarks/run_throughput.py --preset cpu
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import xarray as xr

from initmem.study import costs
from initmem.sweeps.store import read_checked


def effective_rate(ds: xr.Dataset) -> tuple[tuple[str, int, int, int], float]:
    """((model, width, image_size, batch_size), training-image equivalents per second) of one run."""
    c = json.loads(ds.attrs["config"])
    b = c["batch_size"]
    eval_size = c["train_eval_size"] + c["val_size"] + c["test_size"]
    trained, evaluated = costs.run_images(
        c["epochs"], c["train_size"], b, ds.sizes["epoch"], eval_size, c["train_eval_size"]
    )
    work = trained + evaluated / costs.EVAL_SPEEDUP
    return (c["model"], c["width"], c["image_size"], b), work / float(ds["wall_time_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="cpu")
    parser.add_argument("--results-dir", default="results")
    args = parser.parse_args()
    rates: dict[tuple, list[float]] = defaultdict(list)
    hardware = set()
    for path in sorted(Path(args.results_dir, args.preset).glob("*/runs/*.nc")):
        ds = read_checked(path)
        if int(ds.attrs.get("channels_last", 0)) != 1 or ds.attrs.get("device") != "cpu":
            continue  # the table is for the current (channels-last) CPU loop
        key, rate = effective_rate(ds)
        rates[key].append(rate)
        hardware.add(ds.attrs.get("hardware", "?"))
    print(f"preset {args.preset}, channels-last CPU runs on: {'; '.join(sorted(hardware)) or 'none'}")
    print(f"{'model':>10} {'width':>5} {'px':>3} {'batch':>5} {'runs':>4} {'img/s (median)':>15} {'table x batch':>14}")
    for (model, width, size, b), values in sorted(rates.items()):
        table = costs.CPU_THROUGHPUT.get((model, width, size), float("nan")) * costs.BATCH_FACTOR.get(b, 1.0)
        print(f"{model:>10} {width:>5} {size:>3} {b:>5} {len(values):>4} {np.median(values):>15.0f} {table:>14.0f}")


if __name__ == "__main__":
    main()

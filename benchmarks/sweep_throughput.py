"""Sweep throughput: stacked vs sequential sigma_w runs, and serial vs processes, side by side.

The fixed sweep: ``--sigmas`` values of sigma_w (log-spaced from 0.25 to 2.5) of ResNet-9 at ``--width``,
``--epochs`` epoch(s) over ``--train-size`` images (batch ``--batch-size``), each split evaluated on
``--eval-size`` images at every epoch. Each executor runs the same sweep with :func:`initmem.sweep` into
a fresh temporary cache, so the wall time is what a user waits for: training, evaluation, writing the
run files and combining them, plus (for ``processes``) starting the workers and loading the data in
each. The parent's data is prepared once beforehand, and ``serial``/``stacked`` get a tiny warm-up sweep,
so neither pays one-off start-up costs.

    python benchmarks/sweep_throughput.py                       # CPU, synthetic data (about a minute on 2 cores)
    python benchmarks/sweep_throughput.py --data ../shared/data/cifar10-jpeg.tar.gz
    # one H200: stacking is meant for GPUs; use a paper-sized model and enough images to fill it
    python benchmarks/sweep_throughput.py --device cuda --width 64 --sigmas 8 --train-size 10000 \\
        --eval-size 2000 --batch-size 128 --workers 4

Prints runs/hour of every executor and its ratio to ``serial``, and checks that stacked and serial runs agree
(largest relative difference of the per-epoch losses).
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time

import numpy as np
import torch

from initmem.run.loop import resolve_device
from initmem.sweeps.driver import sweep
from initmem.sweeps.executors import prepared_data
from initmem.sweeps.spec import SweepSpec

EXECUTORS = ("serial", "stacked", "processes")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--data", default="synthetic", help="'synthetic' or a CIFAR-10 path")
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--sigmas", type=int, default=4, help="number of sigma_w values (the stack size K)")
    parser.add_argument("--train-size", type=int, default=1000)
    parser.add_argument("--eval-size", type=int, default=500, help="images per evaluated split (train/val/test)")
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--optimizer", default="sgd")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument(
        "--workers", type=int, default=None, help="processes executor: workers (default: cores, at most --sigmas)"
    )
    parser.add_argument("--threads-per-worker", type=int, default=None)
    parser.add_argument(
        "--executors", default=",".join(EXECUTORS), help=f"comma-separated subset of {', '.join(EXECUTORS)}"
    )
    return parser.parse_args()


def build_spec(args: argparse.Namespace) -> SweepSpec:
    base = dict(
        data=args.data,
        model="resnet9",
        width=args.width,
        train_size=args.train_size,
        val_size=args.eval_size,
        test_size=args.eval_size,
        train_eval_size=args.eval_size,
        batch_size=args.batch_size,
        epochs=args.epochs,
        optimizer=args.optimizer,
        lr=args.lr,
        device=args.device,
        progress=False,
    )
    sigmas = [float(f"{s:.4g}") for s in np.geomspace(0.25, 2.5, args.sigmas)]
    return SweepSpec.from_dict({"base": base, "grid": {"sigma_w": sigmas}})


def warm_up(spec: SweepSpec) -> None:
    """Run a tiny plain and stacked sweep (one-off costs: imports, kernel selection) into a throwaway cache, then
    load the sweep's data into this process, so that neither is timed."""
    sizes = {"epochs": 1, "eval_every": 1, "val_size": 10, "test_size": 10, "train_eval_size": 10}
    base = {**spec.base, **sizes, "train_size": spec.base["batch_size"]}
    tiny = SweepSpec.from_dict({"base": base, "grid": {"sigma_w": spec.grid["sigma_w"][:2]}})
    with tempfile.TemporaryDirectory(prefix="sweep-warm-up-") as cache:
        for executor in ("serial", "stacked"):
            sweep(tiny, os.path.join(cache, executor), executor=executor, progress=False)
    prepared_data(spec.configs()[0][1])


def time_executor(spec: SweepSpec, executor: str, args: argparse.Namespace):
    """(seconds, Dataset) of one sweep into a fresh cache."""
    with tempfile.TemporaryDirectory(prefix=f"sweep-{executor}-") as cache:
        start = time.perf_counter()
        if resolve_device(args.device).type == "cuda":
            torch.cuda.synchronize()
        ds = sweep(
            spec,
            cache,
            executor=executor,
            workers=args.workers,
            progress=False,
            threads_per_worker=args.threads_per_worker,
        )
        return time.perf_counter() - start, ds


def main() -> None:
    args = parse_args()
    executors = [e.strip() for e in args.executors.split(",") if e.strip()]
    spec = build_spec(args)
    device = resolve_device(args.device)
    if device.type == "cuda":
        hardware = torch.cuda.get_device_name(device)
    else:
        hardware = f"{platform.machine()}, {os.cpu_count()} cores"
    print(
        f"sweep: {spec.n_runs} runs (sigma_w {spec.grid['sigma_w']}), ResNet-9 width {args.width}, "
        f"{args.epochs} epoch(s) of {args.train_size} images, batch {args.batch_size}, "
        f"eval {args.eval_size} images/split, data {args.data}"
    )
    print(f"device {device} ({hardware}), torch {torch.__version__}, {torch.get_num_threads()} threads in this process")
    warm_up(spec)

    results = {}
    for executor in executors:
        seconds, ds = time_executor(spec, executor, args)
        results[executor] = (seconds, ds)
        print(f"  {executor:<10} {seconds:7.1f} s")

    reference = results.get("serial", (None, None))[1]
    print(f"\n{'executor':<10} {'runs':>5} {'wall s':>8} {'runs/hour':>10} {'vs serial':>10}")
    for executor, (seconds, _) in results.items():
        rate = spec.n_runs / seconds * 3600
        ratio = f"{results['serial'][0] / seconds:9.2f}x" if "serial" in results else "-"
        print(f"{executor:<10} {spec.n_runs:>5} {seconds:8.1f} {rate:10.0f} {ratio:>10}")
    if reference is not None and "stacked" in results:
        stacked = results["stacked"][1]
        worst = max(
            float(np.nanmax(np.abs(stacked[v] - reference[v]) / np.abs(reference[v])))
            for v in ("train_loss", "val_loss", "test_loss")
        )
        print(
            f"\nstacked vs serial: largest relative difference of the per-epoch losses {worst:.1e} "
            "(1e-7 is rounding; ~1e-3 means a max-pool near-tie flipped, see initmem.run.stacked)"
        )


if __name__ == "__main__":
    main()

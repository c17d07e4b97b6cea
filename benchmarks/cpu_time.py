"""A run's recorded wall time and CPU time, alone on a core and sharing it with a busy process, side by side.

Each round trains the same run twice with ``initmem train`` (ResNet-9 at width 8 on synthetic 32-px images, one
thread, pinned to one core): once alone, once with a process spinning on that same core. The run files record
``wall_time_s`` and ``cpu_time_s`` (:mod:`initmem.run.elapsed`). Prints, per round and as medians, the loaded /
alone ratio of each: the wall time counts the core's other work, CPU time should not. This is why the cost model
(:mod:`initmem.study.costs.cost_fit`) is to be fitted to CPU time once the record holds it.

    python benchmarks/cpu_time.py --rounds 3 --epochs 6

On the AMD EPYC (AVX-512) of session 17, otherwise idle: wall time 2.02x loaded / alone, CPU time 1.01x (runs of
5.5-5.7 s alone).

Linux only (it pins processes with ``os.sched_setaffinity``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import xarray as xr

SPIN = "while True: pass"


def timed_run(out: Path, core: int, epochs: int, loaded: bool) -> tuple[float, float]:
    """``(wall_time_s, cpu_time_s)`` recorded by one ``initmem train`` run on ``core`` (with a spinning process on
    the same core when ``loaded``)."""
    pin = lambda: os.sched_setaffinity(0, {core})  # noqa: E731 - a preexec_fn
    spinner = subprocess.Popen([sys.executable, "-c", SPIN], preexec_fn=pin) if loaded else None
    try:
        subprocess.run(
            [sys.executable, "-m", "initmem", "train", "--out", str(out), "--data", "synthetic", "--model", "resnet9"]
            + ["--width", "8", "--train-size", "2000", "--val-size", "500", "--test-size", "500"]
            + ["--train-eval-size", "500", "--batch-size", "64", "--epochs", str(epochs), "--num-threads", "1"]
            + ["--no-progress", "--device", "cpu"],
            check=True,
            preexec_fn=pin,
            stdout=subprocess.DEVNULL,
        )
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    with xr.open_dataset(out, engine="h5netcdf") as ds:
        return float(ds["wall_time_s"]), float(ds["cpu_time_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--core", type=int, default=min(os.sched_getaffinity(0)))
    args = parser.parse_args()
    if args.rounds < 1 or args.epochs < 1:
        parser.exit(2, "--rounds, --epochs: must be positive integers\n")
    wall, cpu = [], []
    print(f"{'round':>5} {'wall alone':>10} {'loaded':>8} {'ratio':>6} {'cpu alone':>10} {'loaded':>8} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            alone = timed_run(Path(tmp) / f"alone{i}.nc", args.core, args.epochs, loaded=False)
            loaded = timed_run(Path(tmp) / f"loaded{i}.nc", args.core, args.epochs, loaded=True)
            wall.append(loaded[0] / alone[0])
            cpu.append(loaded[1] / alone[1])
            print(
                f"{i:>5} {alone[0]:>9.1f}s {loaded[0]:>7.1f}s {wall[-1]:>6.2f} "
                f"{alone[1]:>9.1f}s {loaded[1]:>7.1f}s {cpu[-1]:>6.2f}"
            )
    print(
        f"median loaded / alone: wall time {statistics.median(wall):.2f}, CPU time {statistics.median(cpu):.2f} "
        f"(core {args.core}, {args.rounds} rounds of {args.epochs} epochs)"
    )


if __name__ == "__main__":
    main()

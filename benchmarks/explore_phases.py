"""End-to-end time of the Done-means exploration in a scratch clone, with the time of each of its phases.

``initmem experiments --preset cpu --only 04 -p batch_sizes "[64, 256]"`` reuses the record's runs (it trains nothing):
its cost is planning (reading the notebook, checking its runs), executing the notebook, and rendering the
exploration's small site (:mod:`initmem.book.site`). This clones the committed HEAD of the repository it sits in into a
temporary folder (``git clone``: the committed record, nothing of the working tree), runs the command there ``--runs``
times with this interpreter and ``PYTHONPATH`` at the clone's ``src/`` (the first run executes the notebook in a clone
without an exploration, as on a fresh clone; later ones with ``--force``), and prints, per run, the wall time of the
whole command and the phases it printed, with the load average before and after.

    python benchmarks/explore_phases.py --runs 2
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMAND = ("experiments", "--preset", "cpu", "--only", "04", "-p", "batch_sizes", "[64, 256]")


def run_once(clone: Path, force: bool) -> tuple[float, str]:
    """Wall seconds of one run of :data:`COMMAND` in ``clone``, and the phases line it printed; exits on a failure."""
    env = {**os.environ, "PYTHONPATH": str(clone / "src")}
    env.pop("INITMEM_ROOT", None)
    command = [sys.executable, "-m", "initmem", *COMMAND, *(["--force"] if force else [])]
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit status {proc.returncode}):\n{proc.stdout[-2000:]}")
    phases = next((line for line in proc.stdout.splitlines() if line.startswith("phases: ")), "phases: (none printed)")
    return seconds, phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="runs of the command (default 2: fresh, then --force)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs: must be at least 1, got {args.runs}")
    with tempfile.TemporaryDirectory(prefix="initmem-explore-") as tmp:
        clone = Path(tmp) / "initmem"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True)
        print(f"initmem {shlex.join(COMMAND)}  (clone of {head.stdout.strip()}, {os.cpu_count()} CPUs)")
        for run in range(args.runs):
            before = os.getloadavg()[0]
            seconds, phases = run_once(clone, force=run > 0)
            print(f"run {run + 1}: {seconds:.1f} s end to end; {phases}; load {before:.2f} -> {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

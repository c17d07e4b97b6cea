"""Start-up cost of the ``initmem`` command against a bare interpreter, side by side.

``python -m initmem --version`` and ``python -m initmem COMMAND --help`` import neither torch, xarray nor pandas
(``tests/test_architecture.py`` checks their import lists); this measures what they cost. Each command runs in turn
with ``python -c pass`` (A B A B ...), so that each pair's ratio holds while the machine's speed drifts. The figure is
the child's CPU time (user + system, from :func:`os.wait4`) in ms; the medians and the median of the pair ratios are
printed, with the load average the runs were taken under.

    python benchmarks/cli_startup.py --runs 30
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

BASELINE = ("-c", "pass")
COMMANDS = (("--version",), ("train", "--help"), ("sweep", "--help"), ("experiments", "--help"))


def cpu_ms(args: tuple[str, ...]) -> float:
    """CPU milliseconds (user + system) of one ``python *args``, its output discarded; exits on a failed command."""
    quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_WRONLY, 0) for fd in (1, 2)]
    pid = os.posix_spawn(sys.executable, [sys.executable, *args], os.environ, file_actions=quiet)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"python {' '.join(args)} failed (exit status {os.waitstatus_to_exitcode(status)})")
    return 1e3 * (usage.ru_utime + usage.ru_stime)


def paired(command: tuple[str, ...], runs: int, warmup: int) -> tuple[float, float, float]:
    """Median CPU ms of ``command``, of the baseline, and median of their pair ratios over ``runs`` pairs."""
    for _ in range(warmup):
        cpu_ms(command), cpu_ms(BASELINE)
    pairs = [(cpu_ms(command), cpu_ms(BASELINE)) for _ in range(runs)]
    a, b = zip(*pairs)
    return statistics.median(a), statistics.median(b), statistics.median(x / y for x, y in pairs if y > 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="pairs per command (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="uncounted pairs first (default 2)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs: must be at least 1, got {args.runs}")
    if args.warmup < 0:
        parser.error(f"--warmup: must be at least 0, got {args.warmup}")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {args.runs} pairs each, CPU ms (median)")
    print(f"{'command':<40} {'command':>8} {'python -c pass':>15} {'ratio':>6}")
    for command in COMMANDS:
        a, b, ratio = paired(("-m", "initmem", *command), args.runs, args.warmup)
        print(f"{'python -m initmem ' + ' '.join(command):<40} {a:8.1f} {b:15.1f} {ratio:6.2f}")


if __name__ == "__main__":
    main()

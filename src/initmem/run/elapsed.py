"""What a run costs the machine: the seconds it spends training and evaluating, on the wall clock and in CPU time.

The wall clock counts whatever else the machine was doing (other runs, a test suite, page execution: the record's
runs of one configuration differ by several times in wall time); CPU time counts what this process computed, in
core-seconds, and waiting for a core does not count (``benchmarks/cpu_time.py`` measures both under load). Both are
recorded by every run (``wall_time_s``, ``cpu_time_s``) and neither enters a run's hash.

    start = now()
    ...  # a part of the run
    spent += now() - start

The clocks are module attributes (:data:`wall_clock`, :data:`cpu_clock`, :data:`load_clock`) so that a test can inject
its own. CPU time still moves with the load (shared caches and memory bandwidth: about 12 % between loads 11 and 30),
so every run also records the machine's 1-minute load average at its start and its end (:func:`load_average`).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Elapsed", "now", "wall_clock", "cpu_clock", "load_clock", "load_average"]

#: Seconds on a monotonic wall clock.
wall_clock = time.perf_counter
#: CPU seconds of this process, every thread of it (core-seconds). On a GPU it counts the host's share only; in a
#: process that trains several runs at once (a dask worker with several threads) it counts them all.
cpu_clock = time.process_time
#: The machine's load averages over 1, 5 and 15 minutes (runnable processes; the number of cores is "fully loaded").
load_clock = os.getloadavg


@dataclass(frozen=True)
class Elapsed:
    """Seconds spent: ``wall`` on the wall clock, ``cpu`` in this process's CPU time. NaN where a part was not
    measured (a run resumed from a checkpoint written before CPU time was recorded)."""

    wall: float = 0.0
    cpu: float = 0.0

    def __add__(self, other: Elapsed) -> Elapsed:
        return Elapsed(self.wall + other.wall, self.cpu + other.cpu)

    def __sub__(self, other: Elapsed) -> Elapsed:
        return Elapsed(self.wall - other.wall, self.cpu - other.cpu)

    def __truediv__(self, n: float) -> Elapsed:
        """An equal share of ``n`` (a stack's members share its time)."""
        return Elapsed(self.wall / n, self.cpu / n)

    def state(self) -> dict[str, float]:
        """As a run records it and a checkpoint keeps it: ``{"wall_time_s": ..., "cpu_time_s": ...}``."""
        return {"wall_time_s": self.wall, "cpu_time_s": self.cpu}

    @classmethod
    def of_state(cls, state: Mapping[str, float]) -> Elapsed:
        """Read back from :meth:`state` (a checkpoint without ``cpu_time_s``: its CPU time is NaN)."""
        return cls(float(state["wall_time_s"]), float(state.get("cpu_time_s", math.nan)))


def now() -> Elapsed:
    """Both clocks now, a point to measure from: ``now() - start`` is the time spent since ``start``."""
    return Elapsed(wall_clock(), cpu_clock())


def load_average() -> float:
    """The machine's 1-minute load average now (NaN where the platform has none, e.g. Windows)."""
    try:
        return float(load_clock()[0])
    except (OSError, AttributeError):
        return math.nan

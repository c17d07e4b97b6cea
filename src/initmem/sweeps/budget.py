"""A time-boxed sweep: the epochs planned to a wall-time budget, the runs trained group by group, a clean stop.

:func:`timed_sweep` is :func:`initmem.sweeps.driver.sweep` for a fixed wall time (one GPU for eight minutes): it plans
the largest epoch count whose estimated cost (the caller's ``group_seconds``, seconds per group from measured
throughput) fits ``safety`` times the time left on the :class:`Deadline` (:func:`plan_epochs`); groups the runs by
the spec's zip rows, stacked where :func:`initmem.run.stacked.stack_groups` allows (:func:`run_groups`), so a sweep
cut short holds whole rows; and trains group by group into the run store, stopping before a group that would not
fit (``skipped``) or interrupting one that overruns (``interrupted``). :meth:`TimedSweep.combined` is the combined
Dataset of the complete rows. Times are seconds; the clock is injectable (the tests drive a fake one).
"""

from __future__ import annotations

import contextlib
import logging
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import xarray as xr

from ..base.files import check_output_dir
from ..run.config import ConfigError, RunConfig
from .combine import combine_runs
from .executors import RunJob, run_stacked
from .spec import SweepSpec, as_spec
from .store import load_run, run_path

__all__ = [
    "DONE",
    "DeadlineExceeded",
    "Deadline",
    "plan_epochs",
    "with_epochs",
    "run_groups",
    "train_group",
    "RunRecord",
    "TimedSweep",
    "timed_sweep",
]

log = logging.getLogger(__name__)

#: Statuses of a run whose file is in the store.
DONE = ("finished", "cached")


class DeadlineExceeded(BaseException):
    """The deadline passed while something ran. A :class:`BaseException`, like :class:`KeyboardInterrupt`: it is an
    interruption, not a failure of the run, so the executors' ``except Exception`` lets it through (releasing their
    claims on the way out) and :func:`timed_sweep` records the group as interrupted."""


class Deadline:
    """A wall-time budget of ``seconds`` from construction, read from ``clock`` (seconds, monotonic).

    ``hard``: :meth:`guard` arms a real timer (SIGALRM) that interrupts the guarded code when the budget runs out;
    default: only with the real clock (a fake clock's seconds are not the timer's).
    """

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic, hard: bool | None = None) -> None:
        self.seconds, self.clock = float(seconds), clock
        self.hard = clock is time.monotonic if hard is None else hard
        self.start = clock()

    def elapsed(self) -> float:
        """Seconds since construction."""
        return self.clock() - self.start

    def remaining(self) -> float:
        """Seconds left (negative once the deadline has passed)."""
        return self.seconds - self.elapsed()

    @contextlib.contextmanager
    def guard(self, limit: float | None = None, what: str = "the budget") -> Iterator[None]:
        """Raise :class:`DeadlineExceeded` inside the block once ``limit`` seconds (default, and at most: the time
        left) have passed. Without a timer (``hard`` False, no SIGALRM, not the main thread) only a deadline that
        has already passed raises."""
        seconds = self.remaining() if limit is None else min(limit, self.remaining())
        if seconds <= 0:
            raise DeadlineExceeded(f"{what}: no time left")
        if (
            not self.hard
            or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()
        ):
            yield
            return

        def expire(signum: int, frame: Any) -> None:  # noqa: ARG001
            raise DeadlineExceeded(f"{what}: {seconds:.0f} s ran out")

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def plan_epochs(estimate: Callable[[int], float], available_s: float, max_epochs: int, min_epochs: int = 1) -> int:
    """The largest epoch count E in [``min_epochs``, ``max_epochs``] with ``estimate(E) <= available_s`` (seconds;
    ``estimate`` increasing in E), by bisection; ``min_epochs`` if none fits."""
    if not 1 <= min_epochs <= max_epochs:
        raise ConfigError(f"min_epochs: must be in [1, max_epochs = {max_epochs}], got {min_epochs}")
    lo, hi = min_epochs, max_epochs
    if estimate(lo) > available_s:
        return min_epochs
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate(mid) <= available_s:
            lo = mid
        else:
            hi = mid - 1
    return lo


def with_epochs(spec: SweepSpec, epochs: int) -> SweepSpec:
    """``spec`` with every run trained for ``epochs`` (the warm-up capped at the run's length)."""
    if "epochs" in spec.grid or "epochs" in spec.zip:
        raise ConfigError("spec: epochs is swept; a timed sweep plans one epoch count for every run (set it in base)")
    warmup = min(float(spec.base.get("warmup_epochs", 0.0)), float(epochs))
    return SweepSpec({**spec.base, "epochs": epochs, "warmup_epochs": warmup}, spec.grid, spec.zip, spec.also)


def run_groups(spec: SweepSpec, stacked: bool) -> list[list[RunConfig]]:
    """The groups that are trained together, in the order of the zip dimension's values (then of the spec).

    ``stacked``: the stacks of :func:`initmem.run.stacked.stack_groups` over the whole spec (as
    :func:`initmem.sweeps.driver.sweep` with the ``stacked`` executor forms them, so the file names agree);
    else one run per group.
    """
    from ..run.stacked import stack_groups

    points = spec.configs()
    dim = next(iter(spec.zip), None)
    row_values = list(dict.fromkeys(coords[dim] for coords, _ in points)) if dim else [None]
    row = {config.hash(): row_values.index(coords[dim]) if dim else 0 for coords, config in points}
    configs = [config for _, config in points]
    groups = stack_groups(configs) if stacked else [[c] for c in configs]
    return sorted(groups, key=lambda group: row[group[0].hash()])  # stable: the spec's order within a row


def train_group(jobs: list[RunJob]) -> dict[str, str]:
    """Train one group (a stack when it has several runs) with the package's executors, writing each run's file;
    returns ``{job.key: one-line error}`` of the runs that raised."""
    errors: dict[str, str] = {}

    def done(job: RunJob, error: BaseException | None) -> None:
        if error is not None:
            errors[job.key] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"

    run_stacked([jobs], False, done)
    return errors


@dataclass
class RunRecord:
    """One run of a timed sweep: its sweep ``coords``, ``hash``, file ``path``, ``stacked`` (K, 0 for a run trained
    alone), ``status`` (``pending``, ``finished``, ``cached``, ``skipped: ...``, ``interrupted: ...``,
    ``failed: ...``), ``seconds`` (its share of its group's wall time) and ``estimated_s`` (its share of the
    group's estimate, scaled by the overrun so far)."""

    coords: dict[str, Any]
    hash: str
    path: Path
    stacked: int
    status: str = "pending"
    seconds: float = math.nan
    estimated_s: float = math.nan

    @property
    def done(self) -> bool:
        return self.status in DONE

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.coords,
            "hash": self.hash,
            "file": self.path.name,
            "stacked": self.stacked,
            "status": self.status,
            "seconds": self.seconds,
            "estimated_s": self.estimated_s,
        }


@dataclass
class TimedSweep:
    """What :func:`timed_sweep` planned and did: the ``spec`` at the planned epochs, the run store ``cache_dir``, the
    ``plan`` (``epochs``, ``estimated_s``, ``available_s``, ``groups``, ``fits``), every run's :class:`RunRecord`
    in training order, and ``status``: ``running``, then ``complete`` (every run is in the store) or ``partial``."""

    spec: SweepSpec
    cache_dir: Path
    plan: dict[str, Any]
    runs: list[RunRecord] = field(default_factory=list)
    status: str = "running"

    def complete_spec(self) -> SweepSpec | None:
        """The spec restricted to the zip rows whose every run is in the store (the whole spec without a zip);
        None when there is none."""
        done = {r.hash for r in self.runs if r.done}
        points = self.spec.configs()
        if not self.spec.zip:
            return self.spec if all(c.hash() in done for _, c in points) else None
        dim = next(iter(self.spec.zip))
        keep = [
            i
            for i, value in enumerate(self.spec.zip[dim])
            if all(c.hash() in done for coords, c in points if coords[dim] == value)
        ]
        if not keep:
            return None
        zipped = {k: [v[i] for i in keep] for k, v in self.spec.zip.items()}
        return SweepSpec(self.spec.base, self.spec.grid, zipped, self.spec.also)

    def combined(self) -> xr.Dataset | None:
        """The combined Dataset (:func:`initmem.sweeps.combine.combine_runs`) of :meth:`complete_spec`, or None."""
        spec = self.complete_spec()
        if spec is None:
            return None
        paths = {r.hash: r.path for r in self.runs}
        runs = []
        for _, config in spec.configs():
            ds = load_run(paths[config.hash()], config)
            if ds is None:
                raise RuntimeError(f"run file {paths[config.hash()]} vanished or was refused after training")
            runs.append(ds)
        return combine_runs(spec, runs)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready record (the spec, the plan, the status and every run)."""
        return {
            "status": self.status,
            "plan": dict(self.plan),
            "spec": self.spec.to_dict(),
            "runs": [r.as_dict() for r in self.runs],
        }


def timed_sweep(
    spec: SweepSpec | Mapping[str, Any],
    cache_dir: str | Path,
    deadline: Deadline,
    group_seconds: Callable[[list[RunConfig]], float],
    *,
    stacked: bool,
    max_epochs: int | None = None,
    min_epochs: int = 1,
    safety: float = 0.85,
    train: Callable[[list[RunJob]], Mapping[str, str]] = train_group,
    on_group: Callable[[TimedSweep], None] | None = None,
) -> TimedSweep:
    """Plan ``spec``'s epochs to ``deadline``, then train it group by group into ``cache_dir`` until it is done or
    the next group would not fit (see the module docstring).

    Args:
        spec: the sweep; its base ``epochs`` is the most it may train (unless ``max_epochs``); epochs not swept.
        group_seconds: estimated seconds to train one group (a list of configs at the planned epochs).
        stacked: train the runs of a row as stacks (:func:`run_groups`); file names as the ``stacked`` executor's.
        min_epochs: the fewest epochs, even where the plan says fewer fit.
        safety: plan to fill this fraction of the time left, in (0, 1].
        train: trains one group and returns ``{key: error}`` of its failed runs (default :func:`train_group`).
        on_group: called after every group and at the end (to save what finished).

    Raises:
        ConfigError: an invalid spec, ``safety`` or epoch bounds (before anything trains).
        initmem.base.files.OutputError: ``cache_dir`` cannot be written.
    """
    spec = as_spec(spec)
    if not 0 < safety <= 1:
        raise ConfigError(f"safety: must be in (0, 1], got {safety}")
    cache = check_output_dir(cache_dir, "cache_dir")
    most = max_epochs or int(spec.base.get("epochs", RunConfig.epochs))

    def total(epochs: int) -> float:
        return sum(group_seconds(g) for g in run_groups(with_epochs(spec, epochs), stacked))

    available = safety * deadline.remaining()
    epochs = plan_epochs(total, available, most, min_epochs)
    planned = with_epochs(spec, epochs)
    groups = run_groups(planned, stacked)
    coords = {config.hash(): point for point, config in planned.configs()}
    plan = {
        "epochs": epochs,
        "estimated_s": total(epochs),
        "available_s": available,
        "groups": len(groups),
        "fits": total(epochs) <= available,
        "stacked": stacked,
    }
    log.info(
        "timed sweep: %d epochs, %d groups, estimated %.0f s of %.0f s available",
        epochs,
        len(groups),
        plan["estimated_s"],
        available,
    )
    result = TimedSweep(planned, cache, plan)
    records = []
    for group in groups:
        k = len(group) if len(group) > 1 else 0
        records.append([RunRecord(coords[c.hash()], c.hash(), run_path(cache, c, stacked=k), k) for c in group])
        result.runs.extend(records[-1])
    overrun = 1.0  # measured / estimated seconds of the groups so far (>= 1): scales the next estimates
    stop = ""
    for group, members in zip(groups, records):
        if all(load_run(r.path, expected_hash=r.hash) is not None for r in members):
            _mark(members, "cached")
            continue
        need = group_seconds(group) * overrun
        if not stop and need > deadline.remaining():
            stop = f"budget: the group needs ~{need:.0f} s, {max(0.0, deadline.remaining()):.0f} s left"
            log.warning("stopping before %s x%d: %s", group[0].optimizer, len(group), stop)
        if stop:
            _mark(members, f"skipped: {stop}")
            continue
        start = deadline.elapsed()
        try:
            with deadline.guard(what=f"{group[0].optimizer} x{len(group)}"):
                errors = train([RunJob(c, r.path) for c, r in zip(group, members)])
        except DeadlineExceeded as exc:
            stop = f"interrupted: {exc}"
            log.warning("%s", stop)
            _mark(members, stop)
        else:
            seconds = deadline.elapsed() - start
            overrun = max(overrun, seconds / max(group_seconds(group), 1e-9))
            for r in members:
                error = errors.get(r.hash)  # a job's key is its run's hash
                r.status = f"failed: {error}" if error else "finished"
                r.seconds, r.estimated_s = seconds / len(members), need / len(members)
            log.info("trained %s x%d in %.1f s (estimated %.1f s)", group[0].optimizer, len(group), seconds, need)
        if on_group is not None:
            on_group(result)
    result.status = "complete" if all(r.done for r in result.runs) else "partial"
    if on_group is not None:
        on_group(result)
    return result


def _mark(records: list[RunRecord], status: str) -> None:
    for record in records:
        record.status = status

"""Shared fixtures: tiny synthetic configurations and the location of the shared CIFAR-10 archive."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

#: Hypothesis draws new examples on every run by default, which is how its tests find new counterexamples (a tie
#: that flipped a verdict was found so); ``make test`` and CI load the "ci" profile (``--hypothesis-profile=ci``):
#: the examples are a fixed function of each test, so a pass or a failure there repeats on every machine.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)

if os.environ.get("PYTEST_XDIST_WORKER"):
    # make test runs two pytest-xdist workers on the two cores: one thread each, or torch's default (a thread per
    # core) puts four threads on two cores. Set before torch is imported; the notebooks and runs that the tests start
    # inherit it. Tests that compare numbers pin num_threads in their configs.
    os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED_ARCHIVE = REPO.parent / "shared" / "data" / "cifar10-jpeg.tar.gz"


#: What the tests may never write to in the checkout: a reader's results and explorations (every exploration a test
#: starts goes to a temporary folder).
USERS_FOLDERS = ("results", "_build/explore")


def _users_folders() -> set[tuple[str, int, int]] | None:
    """Each file of :data:`USERS_FOLDERS` that ``git status`` lists (changed, untracked or ignored), with its
    modification time and size; None outside a git checkout."""
    import subprocess

    command = ["git", "status", "--porcelain", "--ignored=traditional", "--untracked-files=all", "--", *USERS_FOLDERS]
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    state = set()
    for line in proc.stdout.splitlines():
        path = REPO / line[3:]
        stat = path.stat() if path.exists() else None
        state.add((line, stat.st_mtime_ns if stat else 0, stat.st_size if stat else -1))
    return state


@pytest.fixture(scope="session", autouse=True)
def the_suite_leaves_the_users_folders_alone():
    """The test session leaves ``results/`` and ``_build/explore/`` of the checkout as it found them: the same files
    listed by ``git status --ignored``, each with the same modification time and size (an error at the session's
    end names what changed)."""
    before = _users_folders()
    yield
    after = _users_folders()
    if before is not None and after is not None:
        changed = sorted({line for line, *_ in before ^ after})
        assert not changed, f"the tests wrote into the checkout's {' and '.join(USERS_FOLDERS)}: {changed[:20]}"


@pytest.fixture(scope="session")
def cifar_archive() -> Path:
    """The shared CIFAR-10 JPEG archive; skips the test where ../shared is absent."""
    if not SHARED_ARCHIVE.exists():
        pytest.skip(f"CIFAR-10 archive not found at {SHARED_ARCHIVE} (../shared is absent on this machine)")
    return SHARED_ARCHIVE


@pytest.fixture
def tiny_config():
    """A run that trains in about a second on synthetic data."""
    from initmem import RunConfig
    from tiny import TINY_RUN

    return RunConfig(**TINY_RUN, epochs=3, lr=0.05)


@pytest.fixture
def ticking_clocks(monkeypatch):
    """``ticking_clocks(wall, cpu)``: the run's clocks (:mod:`initmem.run.elapsed`) advance by ``wall`` and ``cpu``
    seconds at every reading, so that each timed part of a run counts exactly one step of each."""
    import itertools

    from initmem.run import elapsed

    def install(wall: float, cpu: float) -> None:
        for name, step in (("wall_clock", wall), ("cpu_clock", cpu)):
            ticks = itertools.count()
            monkeypatch.setattr(elapsed, name, lambda ticks=ticks, step=step: next(ticks) * step)

    return install


@pytest.fixture
def interrupted_at_epoch():
    """``with interrupted_at_epoch(n): train(...)``: the run is killed (KeyboardInterrupt) when it asks for the batches
    of its n-th epoch, as a session that dies mid-run; the block must raise it, and the real batches come back after."""
    import contextlib

    import initmem.run.loop as loop

    @contextlib.contextmanager
    def interrupt(n: int):
        real, calls = loop.train_batches, {"n": 0}

        def failing(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == n:
                raise KeyboardInterrupt
            return real(*args, **kwargs)

        loop.train_batches = failing
        try:
            with pytest.raises(KeyboardInterrupt):
                yield
        finally:
            loop.train_batches = real

    return interrupt


#: The test files that take longest, longest first: the book's build and browser visit and the notebooks' execution
#: (minutes each), then the files of half a minute or more (measured with --durations=0). pytest-xdist hands out whole
#: files (--dist loadfile, --no-loadscope-reorder) in collection order, so these go first and the short files fill
#: in around them; a long file handed out last would leave one worker alone at the end.
LONGEST_FILES = (
    "test_book.py",
    "test_notebooks_smoke.py",
    "test_dist.py",
    "test_faults.py",
    "test_cluster.py",
    "test_plots.py",
    "test_experiments.py",
    "test_measure.py",
    "test_explore.py",
    "test_stacked.py",
    "test_analysis.py",
)


def pytest_collection_modifyitems(config, items):
    """Collect :data:`LONGEST_FILES` first (their own order kept), then every other file in its usual order."""
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the order within a rank is kept


def pytest_terminal_summary(terminalreporter):
    """List the tests against real daemons (Dask, SLURM) and how each ended, so that a CI log shows that they ran
    (or why they were skipped: SLURM where it cannot be installed)."""
    lines = []
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            if "daemons" not in getattr(report, "keywords", {}) or (outcome == "passed" and report.when != "call"):
                continue
            reason = f" ({report.longrepr[2]})" if outcome == "skipped" and isinstance(report.longrepr, tuple) else ""
            lines.append(f"{outcome.upper()} {report.nodeid}{reason}")
    if lines:
        terminalreporter.write_sep("-", "tests against real daemons")
        for line in lines:
            terminalreporter.write_line(line)

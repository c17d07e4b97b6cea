"""The ``initmem experiments`` command: execute the notebooks at a preset, and render an exploration's pages.

``initmem experiments --preset cpu --only 04 -p batch_sizes "[64, 256]"`` executes chapter 04 with one parameter
changed: an *exploration* (:mod:`initmem.book.exploration`). Before anything runs it prints, per notebook, how many
runs are reused from the committed record, how many are in the exploration's own cache and how many will train, with
the estimated time (:mod:`initmem.study.costs.reuse`). After it ran it renders the exploration's pages as a small site of
their own that links back to the committed book (:mod:`initmem.book.site`, unless ``--no-render``), prints each
changed chapter's page as a ``file://`` URL and, last, the seconds each phase took (:func:`phase_line`). ``--fresh``
re-trains the chapters' runs from scratch, none read from the record, into their own folder
(``results/explore/<preset>-defaults-fresh/``), and prints per configuration how the fresh spread agrees with the
record's (:mod:`initmem.study.verdicts.replication`): a replication check. Errors (an unknown parameter, an invalid sweep, a
missing root, a cluster that cannot be reached) raise, and :func:`initmem.cli.main` prints them as one line with exit
status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

from ..base.paths import EXECUTOR_ENV, FRESH_ENV, SCHEDULER_ENV, find_repo_root
from ..study.design.layout import PRESETS, RECORD_OUT_DIR

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "GPU_PRESETS",
    "add_arguments",
    "add_root_argument",
    "check_preset",
    "parse_parameter_value",
    "run",
    "phase_line",
]

#: The presets sized for a GPU: refused on a machine without one unless ``--allow-cpu`` says so.
GPU_PRESETS = ("gpu", "paper")


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``initmem experiments`` options to ``parser``."""
    parser.add_argument(
        "--preset",
        default="smoke",
        choices=PRESETS,
        help="compute budget (default: smoke, a quick check whose numbers mean nothing; the book renders the "
        "experiment chapters at cpu, so another preset than a chapter's is an exploration)",
    )
    parser.add_argument(
        "--only", default=None, help="comma-separated notebook names or prefixes, e.g. 01,04 or T (default: all)"
    )
    parser.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="override a notebook parameter; VALUE is JSON or YAML, e.g. -p batch_sizes '[64, 256]'",
    )
    parser.add_argument("--force", action="store_true", help="execute even if nothing changed")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="re-train every run from scratch, none read from the committed record, into the exploration's own folder "
        "(results/explore/<preset>-...-fresh), and print how the fresh runs agree with the record: a replication check",
    )
    parser.add_argument(
        "--allow-cpu",
        action="store_true",
        help=f"run a GPU-sized preset ({', '.join(GPU_PRESETS)}) on a machine without a GPU (default: refused, "
        "since its runs would take days there)",
    )
    parser.add_argument(
        "--out-dir",
        default=None,
        help="where the executed notebooks go (default: book/generated at a notebook's book preset without -p; "
        "otherwise results/explore/<preset>-<digest>/notebooks)",
    )
    parser.add_argument(
        "--results-dir",
        default=None,
        help="results folder (default: results at the book preset without -p; otherwise "
        "results/explore/<preset>-<digest>)",
    )
    parser.add_argument(
        "--no-render",
        dest="render",
        action="store_false",
        help="do not render an exploration's pages (default: render them as a small site of their own that links "
        "back to the committed book, in _build/explore/<preset>-<digest>/, and print each changed chapter's page)",
    )
    _add_executor_arguments(parser)
    add_root_argument(parser)
    return parser


def _add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """``--executor`` and the cluster flags of :func:`initmem.sweeps.cluster_flags.add_cluster_arguments`."""
    from ..sweeps.cluster_flags import add_cluster_arguments

    parser.add_argument(
        "--executor",
        default=None,
        choices=("serial", "processes", "dask", "slurm"),
        help="how the notebooks' sweeps train (default: each preset's own); dask with --scheduler: a running cluster; "
        "slurm: workers started as SLURM jobs, for all the notebooks. An execution setting: the pages and "
        "their digests do not change with it",
    )
    add_cluster_arguments(parser)


def add_root_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--root DIR`` option (default: ``$INITMEM_ROOT``, else the initmem checkout containing the working dir)."""
    parser.add_argument(
        "--root",
        default=None,
        metavar="DIR",
        help="the repository (default: $INITMEM_ROOT, else the folder at or above the working directory whose "
        "pyproject.toml names initmem)",
    )


@contextlib.contextmanager
def _execution(args: argparse.Namespace) -> Iterator[None]:
    """The kernels' :data:`~initmem.base.paths.EXECUTOR_ENV` and :data:`~initmem.base.paths.SCHEDULER_ENV` for
    ``--executor`` (nothing without it). A ``--scheduler`` is reached once first (a one-line error if nothing answers);
    ``slurm`` starts the SLURM cluster here, for every notebook, and cancels its jobs afterwards."""
    from ..book.kernel import environment
    from ..sweeps.cluster import cluster_from_args, open_client

    executor = getattr(args, "executor", None)
    if executor is None:
        yield
        return
    scheduler, slurm = cluster_from_args(args, executor)
    with open_client(scheduler, slurm) as client:
        values = {
            EXECUTOR_ENV: "dask" if executor == "slurm" else executor,
            SCHEDULER_ENV: client.scheduler.address if client is not None else None,
        }
        with environment(values):
            yield


def parse_parameter_value(text: str) -> Any:
    """Turn the VALUE of ``-p NAME VALUE`` into a parameter value: JSON, else YAML, else the raw string.

    >>> parse_parameter_value("[32, 512]")
    [32, 512]
    >>> parse_parameter_value("1e-3")
    0.001
    >>> parse_parameter_value("sgd")
    'sgd'
    """
    import json

    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        import yaml

        from ..run.mapping_files import yaml_loader

        value = yaml.load(text, Loader=yaml_loader())  # noqa: S506 - a SafeLoader subclass, refusing aliases
        json.dumps(value, allow_nan=True)  # dates and other YAML-only types fall back to the string
        return value
    except Exception:  # not YAML, or a YAML alias: the string itself
        return text


def run(args: argparse.Namespace) -> int:
    """Run ``initmem experiments``; returns the exit status (1 if any notebook failed). Bad arguments raise (see the
    module docstring)."""
    from ..book.kernel import environment
    from ..book.runner import run_notebooks

    start = time.perf_counter()
    check_preset(args)
    root = find_repo_root(getattr(args, "root", None))
    params = {name: parse_parameter_value(value) for name, value in (args.parameter or [])}
    fresh = getattr(args, "fresh", False)
    with _execution(args), environment({FRESH_ENV: "1" if fresh else None}):
        results = run_notebooks(
            preset=args.preset,
            only=args.only,
            parameters=params,
            out_dir=args.out_dir,
            results_dir=args.results_dir,
            force=args.force,
            cwd=root,
            announce=print,
        )
    executing = sum(r.seconds for r in results)
    phases = {"plan": time.perf_counter() - start - executing, "notebook": executing}
    for r in results:
        print(r)
    if fresh:
        started = time.perf_counter()
        _replication_check(root, args.preset, [r for r in results if r.ok])
        phases["replication"] = time.perf_counter() - started
    record = (root / RECORD_OUT_DIR).resolve()
    explored: dict[Path, list[str]] = {}
    for r in results:
        if r.ok and r.output is not None and r.output.parent.resolve() != record:
            explored.setdefault(r.output.parent, []).append(r.name)
    started = time.perf_counter()
    rendered = all(
        [_show_exploration(root, folder, names, getattr(args, "render", True)) for folder, names in explored.items()]
    )
    phases["render"] = time.perf_counter() - started
    failed = [r for r in results if not r.ok]
    if failed:
        print(f"{len(failed)} of {len(results)} notebooks failed: {', '.join(r.name for r in failed)}")
    print(phase_line(phases))
    return 0 if rendered and not failed else 1


def phase_line(phases: dict[str, float]) -> str:
    """The command's last line: the seconds each phase took, e.g. ``phases: plan 2.1 s, notebook 9.8 s, render
    3.0 s (15.0 s in all)``. *plan*: reading and checking the notebooks, their parameters and their runs (what is
    reused, what trains); *notebook*: executing them (training included); *replication*: the ``--fresh`` comparison;
    *render*: the exploration's site."""
    shown = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in phases.items())
    return f"phases: {shown} ({sum(phases.values()):.1f} s in all)"


def _replication_check(root: Path, preset: str, results: list) -> None:
    """Print, for each fresh chapter that builds a sweep, how its runs agree with the committed record's at the same
    preset, ``results/<preset>/<name>.nc`` (:func:`initmem.study.verdicts.replication.replication_lines`), or why there is
    nothing to compare with."""
    from ..study.design.layout import RECORD_RESULTS_DIR, results_paths
    from ..study.design.registry import EXPERIMENT_SPECS
    from ..study.verdicts.replication import replication_lines
    from ..sweeps.store import read_checked

    for r in results:
        if r.name not in EXPERIMENT_SPECS:
            continue
        fresh = results_paths(root / r.parameters["results_dir"], preset, r.name)[1]
        record = results_paths(root / RECORD_RESULTS_DIR, preset, r.name)[1]
        if not record.is_file():
            shown = record.relative_to(root) if record.is_relative_to(root) else record
            print(f"{r.name}: no committed record at preset {preset} ({shown}) to compare the fresh runs with")
            continue
        print("\n".join(replication_lines(r.name, read_checked(fresh), read_checked(record))))


def check_preset(args: argparse.Namespace) -> None:
    """Raise a one-line :class:`~initmem.run.config.ConfigError` (exit status 2) for a ``--preset`` that is not one of
    :data:`~initmem.study.design.layout.PRESETS`, or for a preset of :data:`GPU_PRESETS` on a machine where CUDA is not
    available (with its price, :func:`_price`), unless ``--allow-cpu``; None (``initmem book``'s default) passes."""
    from ..run.config import ConfigError

    if args.preset is not None and args.preset not in PRESETS:
        raise ConfigError(f"--preset: allowed values are {', '.join(PRESETS)}; got {args.preset!r}")
    if args.preset not in GPU_PRESETS or getattr(args, "allow_cpu", False):
        return
    import torch

    if not torch.cuda.is_available():
        raise ConfigError(
            f"--preset {args.preset}: sized for a GPU (full-width networks on full CIFAR-10; {_price(args)}), and this "
            "machine has none; use --preset cpu (the reduced-scale record)"
            + (", or --allow-cpu to train it on the CPU anyway" if hasattr(args, "allow_cpu") else "")
        )


def _price(args: argparse.Namespace) -> str:
    """What the experiments ``--only`` picks cost at ``--preset`` (:func:`initmem.study.costs.costs.price`), with their
    names: ``"NN_name: about 10,893 core-h (p10-p90 6,418-24,318), about 7.3 A100-h"`` (``--only`` matching
    no experiment: the runner says so once the preset is allowed)."""
    from ..book.runner import select_notebooks
    from ..study.costs import costs
    from ..study.design import presets as _presets
    from ..study.design.registry import EXPERIMENT_SPECS

    try:
        picked = select_notebooks(getattr(args, "only", None), list(_presets.NOTEBOOK_PARAMETERS[args.preset]))
    except ValueError:
        picked = []
    names = [n for n in picked if n in EXPERIMENT_SPECS]
    if not names:
        return "no experiment selected"
    configs = [c for n in names for c in costs.preset_configs(args.preset, n)]
    label = names[0] if len(names) == 1 else f"{len(names)} experiments"
    return f"{label}: {costs.price(costs.estimate_runs(configs))}"


def _show_exploration(root: Path, folder: Path, names: list[str], render: bool) -> bool:
    """Render the exploration in ``folder`` as its site (:func:`initmem.book.build.render_exploration`) and
    print the page of each of ``names``; without ``render``, print how to render it. False if rendering failed (the
    executed notebooks stay where they are)."""
    from ..book.build import BookBuildError, render_exploration

    again = f"initmem book --from {folder}"
    if not render:
        print(f"exploration written to {folder}; render it with: {again}")
        return True
    try:
        pages = render_exploration(root, folder, names)
    except BookBuildError as exc:
        print(
            f"the exploration in {folder} was executed but not rendered: {str(exc).splitlines()[0]}; "
            f"render it again with: {again}"
        )
        return False
    for name, page in pages.items():
        print(f"{name}: {page.as_uri()}")
    return True

"""The ``initmem`` command (also ``python -m initmem``): ``train``, ``sweep``, ``experiments``, ``book`` and
``download-data``; ``initmem --help`` and each sub-command's ``--help`` list their options.

Every RunConfig field is a ``train`` flag (``--sigma-w 0.5``; ``--augment``/``--no-augment``; lists as JSON;
``none`` for optional fields); ``--config`` takes a JSON or YAML file of fields or a run's result file, whose config
it replays. Every error the tool recognises prints one line naming the cause and the option or field and exits with
status 2, before anything trains where it can be known then; SIGINT and SIGTERM stop the command and its workers with
one line (status 130 or 143), keeping what was finished. ``sweep`` and ``experiments`` print their plan and its cost
first. The book's Reproduce page describes the commands in use.

This module parses the command line and owns the one error path (:func:`error_line`); the ``train`` command's
RunConfig flags are in :mod:`initmem.cli.flags`, the ``experiments`` command in :mod:`initmem.cli.experiments`.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ..base.version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start (a tenth of a quick CLI call)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["main", "build_parser", "error_line", "spread_summary", "Interrupted"]

USAGE_ERROR = 2


def _write_result(ds: Any, out: Path, option: str) -> None:
    """Write a result atomically (:func:`initmem.sweeps.store.write_run`); an I/O failure is an OutputError."""
    from ..base.files import OutputError
    from ..sweeps.store import write_run

    try:
        write_run(ds, out)
    except OSError as exc:
        raise OutputError(f"{option}: cannot write to {out} ({exc.strerror or type(exc).__name__})") from None


def _cmd_train(args: argparse.Namespace) -> int:
    from ..base.files import check_output_file
    from ..run.loop import run_device
    from ..run.training import train
    from .flags import checkpoint_option, config_from_args

    config = config_from_args(args)
    out = check_output_file(args.out, "--out")
    checkpoint = checkpoint_option(args, config)
    run_device(config)  # a missing GPU, or a flag that cannot act on the device, is reported before any data is read
    ds = train(config, checkpoint_path=checkpoint, keep_checkpoint=True)
    _write_result(ds, out, "--out")
    if checkpoint is not None:  # only now that the result is safe
        checkpoint.unlink(missing_ok=True)
    best = ds["best_epoch"].item()
    print(
        f"{out}: selected test acc {ds['selected_test_acc'].item():.2f} % (best val epoch {best:g}), "
        f"final test acc {ds['final_test_acc'].item():.2f} %, final train acc {ds['final_train_acc'].item():.2f} %, "
        f"tau_interp {ds['tau_interp'].item():g}, diverged {int(ds['diverged'].item())}, "
        f"{ds['wall_time_s'].item():.0f} s ({ds['cpu_time_s'].item():.0f} CPU-s)"
    )
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    """Train a sweep spec into ``--cache`` and combine it into ``--out``, saying first what it will train
    (:meth:`initmem.study.costs.reuse.RunPlan.summary`: its runs, those cached, those to train and about how long)."""
    from ..base.files import check_output_dir, check_output_file
    from ..study.costs.reuse import plan_runs
    from ..study.statistics.calibration import committed_table
    from ..sweeps.cluster import check_shared_cache, cluster_from_args, open_client
    from ..sweeps.driver import sweep
    from ..sweeps.spec import SweepSpec

    spec = SweepSpec.from_file(args.spec)
    committed_table()  # what its summary reads: a damaged table stops the sweep before it trains, not after it wrote
    scheduler, slurm = cluster_from_args(args, args.executor)
    cache = check_output_dir(args.cache, "--cache")
    out = check_output_file(args.out, "--out")
    with open_client(scheduler, slurm) as client:
        if client is not None:
            check_shared_cache(client, cache.resolve(), "--cache")
        executor = "dask" if args.executor == "slurm" else args.executor
        print(
            plan_runs(Path(args.spec).name, spec, cache, executor, args.workers, scheduler=client).summary(), flush=True
        )
        ds = sweep(spec, cache_dir=cache, executor=executor, workers=args.workers, client=client)
    _write_result(ds, out, "--out")
    print(f"{out}: {spec.n_runs} runs, dims {dict(ds['selected_test_acc'].sizes)}")
    print(spread_summary(ds))
    return 0


#: The summary_table columns ``initmem sweep`` prints, and their short names.
_SUMMARY_COLUMNS = {
    "selected_raw_spread_pp": "raw spread (pp)",
    "selected_null_p": "noise p",
    "selected_spread_pp": "cross-fitted (pp)",
    "selected_ci95_low": "ci95 low",
    "selected_ci95_high": "ci95 high",
    "selected_n_seeds": "seeds",
    "final_raw_spread_pp": "final raw (pp)",
    "n_diverged": "diverged",
}


def spread_summary(ds: Any) -> str:
    """A few lines on what a sweep produced: the spread over sigma_w (:func:`initmem.study.statistics.summary.summary_table`) per
    combination of the other dims, or why there is none."""
    from ..study.statistics.summary import summary_table

    if "sigma_w" not in ds.dims or ds.sizes["sigma_w"] < 2:
        return "no spread: the sweep has no sigma_w dimension with two or more values"
    table = summary_table(ds, over="sigma_w")
    table = table[[c for c in _SUMMARY_COLUMNS if c in table.columns]].rename(columns=_SUMMARY_COLUMNS)
    text = table.to_string(formatters={"noise p": lambda v: f"{v:.3g}"}, float_format=lambda v: f"{v:.1f}")
    return (
        "spread over sigma_w of the validation-selected test accuracy: raw = max - min of the seed-mean curve, "
        "with its p against sigma_w permuted within seeds; cross-fitted = each seed measured at the others' best "
        "and worst sigma_w (needs 2 seeds), with its 95 % t-interval:\n" + text
    )


def _cmd_book(args: argparse.Namespace) -> int:
    from ..base.paths import find_repo_root
    from ..book.build import build_book
    from .experiments import check_preset

    check_preset(args)
    root = find_repo_root(args.root)
    if args.check:
        from ..book.check import check_book, report

        stale = check_book(root)
        print("\n".join(report(stale)))
        return 1 if stale else 0
    index = build_book(preset=args.preset, force=args.force, root=root, from_dir=args.from_dir)
    print(f"book built: {index}")
    return 0


def _cmd_download(args: argparse.Namespace) -> int:
    from ..run.data.sources import download_cifar10

    print(f"CIFAR-10 is in {download_cifar10(args.root)}")
    return 0


_DESCRIPTION = """initmem: the executable companion to "Do Deep Networks Forget Initialization?" (arXiv:2605.29152).
Train runs over the initialization scale sigma_w, sweep grids of them, re-execute the book's notebooks, build the book."""

_EPILOG = """examples:
  initmem train --optimizer sgd --lr 0.01 --sigma-w 0.5 --width 16 --epochs 30 --out run.nc
  initmem sweep spec.yaml --cache results/cache --executor processes --workers 2 --out sweep.nc
  initmem experiments --preset cpu --only 04 -p batch_sizes "[64, 256]"
  initmem book --from results/explore/cpu-defaults

Errors the tool recognises print one line and exit with status 2. Run "initmem COMMAND --help" for details."""

_EXAMPLES = {
    "train": "example:\n  initmem train --model resnet9 --width 16 --optimizer adam --lr 1e-3 --sigma-w 2.5 --epochs 30 "
    "--out run.nc\n  initmem train --config run.nc --out again.nc     # replay a recorded run",
    "sweep": "example spec.yaml:\n  base: {model: resnet9, width: 8, optimizer: sgd, lr: 0.02, epochs: 20}\n"
    "  grid: {sigma_w: [0.25, 1.0, 2.5], seed: [0, 1, 2]}\n"
    "examples:\n  initmem sweep spec.yaml --cache results/cache --executor processes --workers 2 --out sweep.nc\n"
    "  initmem sweep spec.yaml --cache /shared/cache --executor dask --scheduler tcp://head:8786 --out sweep.nc\n"
    "  initmem sweep spec.yaml --cache /shared/cache --executor slurm --jobs 8 --cores 1 --memory 16GB "
    "--gpus 1 --out sweep.nc",
    "experiments": "examples:\n"
    "  initmem experiments --preset cpu                  # every page of the record at its preset: "
    "book/generated\n"
    '  initmem experiments --preset cpu --only 04 -p batch_sizes "[64, 256]"\n'
    "      # an exploration: reuses the record's runs, trains only the missing ones, writes\n"
    "      # results/explore/cpu-<digest>/ and prints its page in _build/explore/cpu-<digest>/\n"
    "  initmem experiments --preset smoke                # a quick check of every notebook (numbers "
    "meaningless)",
    "book": "examples:\n  initmem book                                   # = make book: _build/html/index.html\n"
    "  initmem book --check                           # is every committed page current? (executes nothing)\n"
    "  initmem book --from results/explore/cpu-defaults  # an exploration, in _build/explore/cpu-defaults/",
    "download-data": "example:\n  initmem download-data ~/data   # then --data ~/data/cifar-10-batches-py",
}


def _train_arguments(p: argparse.ArgumentParser) -> None:
    from .flags import add_config_flags

    p.add_argument(
        "--config", help="JSON or YAML file of RunConfig fields, or a run's result .nc to replay (flags override it)"
    )
    p.add_argument("--out", required=True, help="output .nc file")
    p.add_argument("--checkpoint", help="resumable checkpoint file (with --checkpoint-every N)")
    add_config_flags(p)
    p.set_defaults(handler=_cmd_train)


def _sweep_arguments(p: argparse.ArgumentParser) -> None:
    from ..sweeps.cluster_flags import add_cluster_arguments

    p.add_argument("spec", help="sweep spec (YAML or JSON): base, grid, zip")
    p.add_argument("--cache", required=True, help="run cache directory (one .nc per run)")
    p.add_argument(
        "--executor",
        default="serial",
        choices=("serial", "processes", "dask", "stacked", "slurm"),
        help="how runs are executed (default: serial); dask: a LocalCluster, or the running scheduler of "
        "--scheduler; slurm: workers started as SLURM jobs (dask-jobqueue)",
    )
    p.add_argument("--workers", type=int, default=None, help="parallel workers (processes, or a dask LocalCluster)")
    p.add_argument("--out", required=True, help="output .nc file")
    add_cluster_arguments(p)
    p.set_defaults(handler=_cmd_sweep)


def _experiments_arguments(p: argparse.ArgumentParser) -> None:
    from . import experiments

    experiments.add_arguments(p)
    p.set_defaults(handler=experiments.run)


def _book_arguments(p: argparse.ArgumentParser) -> None:
    from .experiments import add_root_argument

    p.add_argument(
        "--preset",
        default=None,
        help="render every notebook at this preset; notebooks the book renders "
        "at another preset become an exploration (default: each notebook at its committed preset)",
    )
    p.add_argument("--force", action="store_true", help="re-execute every notebook")
    p.add_argument(
        "--check",
        action="store_true",
        help="execute and build nothing: exit 0 when every committed page is current, else 1, naming each stale "
        "page and what changed (a module, a result file, a parameter, its notebook)",
    )
    p.add_argument(
        "--from",
        dest="from_dir",
        default=None,
        metavar="DIR",
        help="render an exploration (results/explore/<preset>-<digest>, or a folder of executed notebooks) "
        "into _build/explore/<name>/ instead of the committed pages; executes nothing",
    )
    add_root_argument(p)
    p.set_defaults(handler=_cmd_book)


def _download_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("root", help="folder to download into")
    p.set_defaults(handler=_cmd_download)


#: Each sub-command: its one-line help and the function that adds its arguments and handler to its parser.
_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "train": ("train one run and write its metrics as netCDF", _train_arguments),
    "sweep": ("run a grid of runs (cached, resumable) into one Dataset", _sweep_arguments),
    "experiments": ("execute the notebooks with papermill at a preset", _experiments_arguments),
    "book": ("execute what changed and build the jupyter-book", _book_arguments),
    "download-data": ("download CIFAR-10 with torchvision (needs internet)", _download_arguments),
}


class _ParsersBuiltOnUse(dict):
    """The sub-commands' parsers (argparse's map of name to parser), each given its arguments when it is first looked
    up: by argparse once the command line names it, or by whoever reads ``choices[name]``.

    Adding a sub-command's arguments imports what they need (RunConfig's fields for ``train``, the cluster flags for
    ``sweep``, the presets for ``experiments``); built on use, ``initmem --version`` and ``initmem COMMAND --help``
    import only what that one command needs."""

    def __init__(self) -> None:
        super().__init__()
        self._built: set[str] = set()

    def __getitem__(self, name: str) -> argparse.ArgumentParser:
        parser = super().__getitem__(name)
        if name not in self._built:
            self._built.add(name)
            _COMMANDS[name][1](parser)
        return parser


def build_parser() -> argparse.ArgumentParser:
    """The ``initmem`` parser with its five sub-commands (see the module docstring); a sub-command's arguments are
    added when it is first used (:class:`_ParsersBuiltOnUse`)."""
    parser = argparse.ArgumentParser(
        prog="initmem", description=_DESCRIPTION, epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"initmem {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.choices = sub._name_parser_map = _ParsersBuiltOnUse()
    for name, (help, _) in _COMMANDS.items():
        sub.add_parser(
            name,
            help=help,
            description=help[0].upper() + help[1:] + ".",
            epilog=_EXAMPLES[name],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``initmem`` command on ``argv`` (default: ``sys.argv[1:]``); returns the exit status (0, 1 when a
    notebook or a rendering failed, 2 for an error the tool recognises, 128 + the signal when interrupted)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    import logging  # here: --version and --help have exited in parse_args, and need none

    level = logging.INFO if args.verbose else logging.WARNING
    if not logging.getLogger().handlers:
        logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
        logging.getLogger().handlers[0].setLevel(level)  # also for libraries that set their own levels (distributed)
    with _interruptible():
        try:
            return args.handler(args)
        except KeyboardInterrupt as exc:
            signum = getattr(exc, "signum", signal.SIGINT)
            print(
                f"initmem {args.command}: interrupted by {signal.Signals(signum).name}; {_kept(args)}", file=sys.stderr
            )
            return 128 + signum
        except Exception as exc:
            line = error_line(exc)
            if line is None:
                raise
            print(f"initmem {args.command}: error: {line}", file=sys.stderr)
            return USAGE_ERROR


#: Seconds after an ignored :class:`Interrupted` that its signal is delivered to the main thread again.
REDELIVERY_DELAY_S = 0.05


class Interrupted(KeyboardInterrupt):
    """SIGTERM (or SIGINT) arrived: the command stops, as on Ctrl-C; ``signum`` is the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """While the command runs, SIGINT and SIGTERM raise :class:`Interrupted` in the main thread (the workers are
    then stopped by the executors' cleanup); a second signal during that cleanup is ignored, so that it ends with one
    line rather than a traceback. The previous handlers are restored afterwards.

    A signal handler's exception is raised wherever the main thread happens to be, and where that is a finaliser (a
    ``__del__``, a weakref callback such as a ``WeakValueDictionary``'s, run by the garbage collector) Python prints
    "Exception ignored" and goes on. Such an :class:`Interrupted` reaches ``sys.unraisablehook``, which sends the
    signal to the main thread again (``signal.pthread_kill``, :data:`REDELIVERY_DELAY_S` later), so that the command
    still stops."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    previous_hook = sys.unraisablehook
    received: list[int] = []

    def interrupt(signum: int, frame: Any) -> None:
        if received:  # a second signal, during the cleanup of the first
            return
        received.append(signum)
        kernels = sys.modules.get("initmem.book.kernel")  # the notebooks' kernels, killed before papermill's cleanup
        if kernels is not None:  # could shut them down mid-cell (they would print a ZMQ traceback)
            kernels.kill_kernels()
        raise Interrupted(signum)

    main_thread = threading.main_thread().ident

    def deliver_again(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, Interrupted):
            # the signal itself, so that a main thread blocked in a wait wakes up; from another thread, a moment later:
            # delivered at once, the handler would run inside this hook, whose exceptions Python ignores too
            received.clear()
            signum = unraisable.exc_value.signum
            threading.Timer(REDELIVERY_DELAY_S, signal.pthread_kill, (main_thread, signum)).start()
        else:
            previous_hook(unraisable)

    for signum in previous:
        signal.signal(signum, interrupt)
    sys.unraisablehook = deliver_again
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _kept(args: argparse.Namespace) -> str:
    """What an interrupted command leaves for the next one, in words."""
    if args.command == "sweep":
        return f"the finished runs are kept in {args.cache}; a rerun trains only the others"
    if args.command == "train" and args.checkpoint:
        return f"the last checkpoint is kept in {args.checkpoint}; the same command resumes from it"
    if args.command == "experiments":
        return "the finished runs are kept in the results folder; a rerun trains only the others"
    return "nothing was written"


#: The errors the tool recognises, each printed as its message on one line: (module, class). Each is looked up only
#: where its module was imported (the command got that far), so that the command line imports none of them.
_RECOGNISED_ERRORS = (
    ("initmem.run.config", "ConfigError"),  # an invalid value
    ("initmem.base.files", "OutputError"),  # an output that cannot be written
    ("initmem.base.paths", "RootError"),
    ("initmem.base.package_data", "PackageFileError"),  # a data file of the package, truncated or tampered with
    ("initmem.book.parameters", "ParameterError"),  # an unknown parameter, notebook or preset
    ("initmem.book.runner", "RecordError"),  # the book refused to touch the committed record
    ("initmem.run.loop", "OutOfMemory"),
    ("initmem.sweeps.cluster", "ClusterLost"),  # the cluster went away mid-sweep
)


#: The top-level modules that come only with an optional dependency group of initmem (``pip install
#: 'initmem[book]'``), the packages the group names and what they bring with them; a command that needs one that is
#: missing says which group to install (:func:`error_line`). tests/test_cli.py checks it against pyproject.toml.
EXTRA_MODULES = {
    "book": (
        *("jupyter_book", "sphinx", "sphinxcontrib", "docutils", "myst_nb", "myst_parser", "build"),
        *("papermill", "jupytext", "ipykernel", "nbformat", "nbclient", "jupyter_client"),
    ),
    "dask": ("dask", "distributed", "dask_jobqueue"),
}


def _missing_extra(exc: BaseException) -> str | None:
    """The optional dependency group (:data:`EXTRA_MODULES`) whose module ``exc`` failed to import, if it is one."""
    if not isinstance(exc, ModuleNotFoundError):
        return None
    top = (exc.name or "").split(".")[0]
    return next((extra for extra, modules in EXTRA_MODULES.items() if top in modules), None)


def _raised(exc: BaseException, module: str, name: str) -> bool:
    """Whether ``exc`` is a ``module.name``, where that module has been imported."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(exc, getattr(loaded, name))


def error_line(exc: BaseException) -> str | None:
    """One line for an error the tool recognises (None for anything else: a bug, shown as a traceback)."""
    extra = _missing_extra(exc)
    if extra is not None:
        return (
            f"{exc.name} is not installed: this command needs initmem's optional dependencies [{extra}]; install "
            f"initmem[{extra}] (pip install 'initmem[{extra}]')"
        )
    if any(_raised(exc, module, name) for module, name in _RECOGNISED_ERRORS):
        return _one_line(str(exc))
    if _raised(exc, "initmem.run.data.sources", "DataError"):
        from dataclasses import fields

        from ..run.config import RunConfig

        message = _one_line(str(exc))
        return message if message.split(":", 1)[0] in {f.name for f in fields(RunConfig)} else f"data: {message}"
    if _raised(exc, "initmem.sweeps.driver", "SweepFailed"):
        digest, error = next(iter(exc.failures.items()))
        return (
            f"{len(exc.failures)} of {exc.n_runs} runs failed; finished runs are kept in the cache, a rerun "
            f"trains only the others (first failure: run {digest}: {_one_line(error)}; see the log above)"
        )
    return None


def _one_line(text: str) -> str:
    """``text`` with its lines joined by spaces."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())

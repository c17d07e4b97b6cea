"""The ``initmem`` command (also ``python -m initmem``).

Sub-commands::

    initmem train   [--config FILE] [--FIELD VALUE ...] --out run.nc
    initmem sweep   SPEC.yaml --cache DIR [--executor serial|processes|dask] [--workers N] --out sweep.nc
    initmem experiments [--preset smoke|cpu|paper] [--only 01,04] [-p NAME VALUE ...] [--force]
    initmem book    [--preset PRESET] [--force]
    initmem download-data DIR

Every RunConfig field is a ``train`` flag (``--sigma-w 0.5``; booleans as ``--augment``/``--no-augment``;
lists as JSON, e.g. ``--betas "[0.9, 0.99]"``; ``none`` for optional fields). ``--config`` takes a JSON or YAML
file of fields, or a run's result file (``run.nc``, or a cached ``<hash>.nc``): ``initmem train --config
run.nc --out again.nc`` replays the recorded config (bit for bit on the same machine).

Every error the tool recognises (an invalid value, data that cannot be read, a device that is missing, an output
that cannot be written, failed runs of a sweep) prints one line naming the cause and the option or field, and
exits with code 2. Output locations are checked before anything trains; a checkpoint is deleted only after the
result is written.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any, Sequence


from .config import ConfigError, RunConfig, read_mapping_file
from .fileio import OutputError, check_output_dir, check_output_file

__all__ = ["main", "load_config_file", "parse_field_value"]

USAGE_ERROR = 2
log = logging.getLogger("initmem.cli")

#: The first bytes of a netCDF-4 (HDF5) or classic netCDF file: a result file given to ``--config``.
_NETCDF_MAGIC = (b"\x89HDF\r\n\x1a\n", b"CDF\x01", b"CDF\x02")


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a JSON or YAML mapping of RunConfig fields, or the recorded config of a run's result file."""
    path = Path(path)
    if _is_netcdf(path):
        return recorded_config(path)
    return read_mapping_file(path, "--config")


def _is_netcdf(path: Path) -> bool:
    """Whether ``path`` is a regular file starting like a netCDF file (pipes are never peeked at)."""
    if not path.is_file():
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
    except OSError:
        return False
    return head.startswith(_NETCDF_MAGIC)


def recorded_config(path: str | Path) -> dict[str, Any]:
    """The RunConfig fields recorded in a run's result file (its ``config`` attribute, written by ``train``)."""
    import xarray as xr

    try:
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            attrs = dict(ds.attrs)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is one line
        raise ConfigError(f"--config: cannot read the result file {path} ({type(exc).__name__})") from None
    if "config" not in attrs:
        hint = "; it is a sweep result: give one of its runs (<cache>/<run_hash>.nc)" if "spec" in attrs else ""
        raise ConfigError(f"--config: {path} records no run config{hint}")
    try:
        values = json.loads(attrs["config"])
    except ValueError:
        raise ConfigError(f"--config: the config recorded in {path} is not valid JSON") from None
    if not isinstance(values, dict):
        raise ConfigError(f"--config: the config recorded in {path} is not a mapping")
    return values


def parse_field_value(name: str, text: str) -> Any:
    """Turn a command-line string into a value for RunConfig field ``name`` (validated later)."""
    annotation = str({f.name: f.type for f in fields(RunConfig)}[name])
    if text.lower() in ("none", "null") and "None" in annotation:
        return None
    base = annotation.replace(" | None", "")
    try:
        if base == "int":
            return int(text)
        if base == "float":
            return float(text)
        if base.startswith("tuple"):
            return [float(v) for v in json.loads(text if text.startswith("[") else f"[{text}]")]
    except (ValueError, TypeError, json.JSONDecodeError):
        kind = {"int": "an integer", "float": "a number"}.get(base, "a list of numbers")
        raise ConfigError(f"{name}: must be {kind}, got {text!r}") from None
    return text


def _add_config_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("run configuration (RunConfig fields)")
    for f in fields(RunConfig):
        flag = "--" + f.name.replace("_", "-")
        doc = f"default: {f.default!r}"
        if str(f.type) == "bool":
            group.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=doc)
        else:
            group.add_argument(flag, dest=f.name, metavar="VALUE", default=argparse.SUPPRESS, help=doc)


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """RunConfig from ``--config FILE`` (if any) overridden by individual flags."""
    values: dict[str, Any] = load_config_file(args.config) if args.config else {}
    names = {f.name for f in fields(RunConfig)}
    for name, value in vars(args).items():
        if name in names:
            values[name] = value if isinstance(value, bool) else parse_field_value(name, value)
    return RunConfig.from_dict(values)


def _checkpoint_option(args: argparse.Namespace, config: RunConfig) -> Path | None:
    """The checked ``--checkpoint`` file, or None; ``--checkpoint`` and ``--checkpoint-every`` go together."""
    every_flag = "checkpoint_every" in vars(args)  # given on the command line (not only in --config)
    if args.checkpoint is None:
        if every_flag and config.checkpoint_every:
            raise ConfigError("--checkpoint-every: needs --checkpoint FILE (where to keep the checkpoint)")
        if config.checkpoint_every:
            log.warning("checkpoint_every=%d (from --config) has no effect without --checkpoint FILE",
                        config.checkpoint_every)  # fmt: skip
        return None
    if not config.checkpoint_every:
        raise ConfigError("--checkpoint: needs --checkpoint-every N (epochs between checkpoints, N > 0)")
    return check_output_file(args.checkpoint, "--checkpoint")


def _write_result(ds: Any, out: Path, option: str) -> None:
    """Write a result atomically (:func:`initmem.sweeps.write_run`); an I/O failure is an OutputError."""
    from .sweeps import write_run

    try:
        write_run(ds, out)
    except OSError as exc:
        raise OutputError(f"{option}: cannot write to {out} ({exc.strerror or type(exc).__name__})") from None


def _cmd_train(args: argparse.Namespace) -> int:
    from .training import resolve_device, train

    config = config_from_args(args)
    out = check_output_file(args.out, "--out")
    checkpoint = _checkpoint_option(args, config)
    resolve_device(config.device)  # a missing GPU is reported before any data is read
    ds = train(config, checkpoint_path=checkpoint, keep_checkpoint=True)
    _write_result(ds, out, "--out")
    if checkpoint is not None:  # only now that the result is safe
        checkpoint.unlink(missing_ok=True)
    best = ds["best_epoch"].item()
    print(
        f"{out}: selected test acc {ds['selected_test_acc'].item():.2f} % (best val epoch {best:g}), "
        f"final test acc {ds['final_test_acc'].item():.2f} %, final train acc {ds['final_train_acc'].item():.2f} %, "
        f"tau_interp {ds['tau_interp'].item():g}, diverged {int(ds['diverged'].item())}, "
        f"{ds['wall_time_s'].item():.0f} s"
    )
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .sweeps import SweepSpec, sweep

    spec = SweepSpec.from_file(args.spec)
    check_output_dir(args.cache, "--cache")
    out = check_output_file(args.out, "--out")
    ds = sweep(spec, cache_dir=args.cache, executor=args.executor, workers=args.workers)
    _write_result(ds, out, "--out")
    print(f"{out}: {spec.n_runs} runs, dims {dict(ds['selected_test_acc'].sizes)}")
    return 0


def _cmd_experiments(args: argparse.Namespace) -> int:
    from .experiments import main as run_experiments

    return run_experiments(args)


def _cmd_book(args: argparse.Namespace) -> int:
    from .book import build_book

    index = build_book(preset=args.preset, force=args.force)
    print(f"book built: {index}")
    return 0


def _cmd_download(args: argparse.Namespace) -> int:
    from .data import download_cifar10

    print(f"CIFAR-10 is in {download_cifar10(args.root)}")
    return 0


def _add_experiment_flags(parser: argparse.ArgumentParser) -> None:
    from .experiments import add_arguments

    add_arguments(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="initmem", description=__doc__.split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train one run and write its metrics as netCDF")
    p.add_argument("--config", help="JSON or YAML file of RunConfig fields, or a run's result .nc to replay "
                   "(flags override it)")
    p.add_argument("--out", required=True, help="output .nc file")
    p.add_argument("--checkpoint", help="resumable checkpoint file (with --checkpoint-every N)")
    _add_config_flags(p)
    p.set_defaults(handler=_cmd_train)

    p = sub.add_parser("sweep", help="run a grid of runs (cached, resumable) into one Dataset")
    p.add_argument("spec", help="sweep spec (YAML or JSON): base, grid, zip")
    p.add_argument("--cache", required=True, help="run cache directory (one .nc per run)")
    p.add_argument("--executor", default="serial", choices=("serial", "processes", "dask", "stacked"))
    p.add_argument("--workers", type=int, default=None, help="parallel workers (processes/dask)")
    p.add_argument("--out", required=True, help="output .nc file")
    p.set_defaults(handler=_cmd_sweep)

    p = sub.add_parser("experiments", help="execute the notebooks with papermill at a preset")
    _add_experiment_flags(p)
    p.set_defaults(handler=_cmd_experiments)

    p = sub.add_parser("book", help="execute what changed and build the jupyter-book")
    p.add_argument("--preset", default=None, help="preset whose results the book renders (default: the committed one)")
    p.add_argument("--force", action="store_true", help="re-execute every notebook")
    p.set_defaults(handler=_cmd_book)

    p = sub.add_parser("download-data", help="download CIFAR-10 with torchvision (needs internet)")
    p.add_argument("root", help="folder to download into")
    p.set_defaults(handler=_cmd_download)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.handler(args)
    except Exception as exc:
        line = error_line(exc)
        if line is None:
            raise
        print(f"initmem {args.command}: error: {line}", file=sys.stderr)
        return USAGE_ERROR


def error_line(exc: BaseException) -> str | None:
    """One line for an error the tool recognises (None for anything else: a bug, shown as a traceback)."""
    if isinstance(exc, (ConfigError, OutputError)):
        return _one_line(str(exc))
    data = sys.modules.get("initmem.data")  # imported only if the command got that far
    if data is not None and isinstance(exc, data.DataError):
        message = _one_line(str(exc))
        return message if message.split(":", 1)[0] in _FIELD_NAMES else f"data: {message}"
    sweeps = sys.modules.get("initmem.sweeps")
    if sweeps is not None and isinstance(exc, sweeps.SweepFailed):
        digest, error = next(iter(exc.failures.items()))
        return (f"{len(exc.failures)} of {exc.n_runs} runs failed; finished runs are kept in the cache, a rerun "
                f"trains only the others (first failure: run {digest}: {_one_line(error)}; see the log above)")
    return None


_FIELD_NAMES = frozenset(f.name for f in fields(RunConfig))


def _one_line(text: str) -> str:
    """``text`` with its lines joined by spaces."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())

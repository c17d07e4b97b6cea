"""The ``initmem`` command (also ``python -m initmem``).

Sub-commands::

    initmem train   [--config FILE] [--FIELD VALUE ...] --out run.nc
    initmem sweep   SPEC.yaml --cache DIR [--executor serial|processes|dask] [--workers N] --out sweep.nc
    initmem experiments [--preset smoke|cpu|paper] [--only 01,04] [-p NAME VALUE ...] [--force]
    initmem book    [--preset PRESET] [--force]
    initmem download-data DIR

Every RunConfig field is a ``train`` flag (``--sigma-w 0.5``; booleans as ``--augment``/``--no-augment``;
lists as JSON, e.g. ``--betas "[0.9, 0.99]"``; ``none`` for optional fields). An invalid value prints one
line naming the field and what is allowed, and exits with code 2.
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

__all__ = ["main", "load_config_file", "parse_field_value"]

USAGE_ERROR = 2


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a JSON or YAML mapping of RunConfig fields."""
    return read_mapping_file(path, "--config")


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


def _cmd_train(args: argparse.Namespace) -> int:
    from .training import train

    config = config_from_args(args)
    out = Path(args.out)
    ds = train(config, checkpoint_path=args.checkpoint)
    out.parent.mkdir(parents=True, exist_ok=True)
    ds.to_netcdf(out, engine="h5netcdf")
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
    ds = sweep(spec, cache_dir=args.cache, executor=args.executor, workers=args.workers)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    ds.to_netcdf(out, engine="h5netcdf")
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
    p.add_argument("--config", help="JSON or YAML file of RunConfig fields (flags override it)")
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
    except ConfigError as exc:
        print(f"initmem {args.command}: error: {exc}", file=sys.stderr)
        return USAGE_ERROR

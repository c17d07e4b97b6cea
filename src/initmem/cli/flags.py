"""The ``train`` command's run configuration: one flag per RunConfig field, ``--config FILE``, ``--checkpoint``.

* :func:`add_config_flags` -- a flag per :class:`~initmem.run.config.RunConfig` field, its help from the field's
  docstring (:func:`field_docs`), its allowed values (:data:`FIELD_CHOICES`) and its default;
* :func:`config_from_args` -- the RunConfig of ``--config FILE`` (JSON, YAML, or a run's result file:
  :func:`load_config_file`, :func:`recorded_config`) overridden by the flags given (:func:`parse_field_value`);
* :func:`checkpoint_option` -- the checked ``--checkpoint`` file.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
from dataclasses import fields
from pathlib import Path

from ..base.messages import shown
from ..run import config as _config
from ..run import optimizers as _optimizers
from ..run.config import ConfigError, RunConfig
from ..run.mapping_files import read_mapping_file

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start (a tenth of a quick CLI call)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "FIELD_CHOICES",
    "load_config_file",
    "recorded_config",
    "parse_field_value",
    "field_docs",
    "add_config_flags",
    "config_from_args",
    "checkpoint_option",
]

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
    """The RunConfig fields recorded in a run's result file (its ``config`` attribute, written by ``train``), read
    with its checksum verified (:func:`initmem.sweeps.store.read_checked`)."""
    from ..sweeps.store import ChecksumError, read_checked

    try:
        attrs = dict(read_checked(path).attrs)
    except ChecksumError as exc:
        raise ConfigError(f"--config: {exc}") from None
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
        raise ConfigError(f"{name}: must be {kind}, got {shown(text)}") from None
    return text


#: The RunConfig fields that take one of a fixed set of values, and those values.
FIELD_CHOICES: dict[str, tuple[str, ...]] = {
    "model": _config.MODELS,
    "optimizer": _optimizers.names(),
    "schedule": _config.SCHEDULES,
    "decay_mode": _config.DECAY_MODES,
    "device": _config.DEVICES,
    "muon_lr_adjust": _config.MUON_LR_ADJUST,
}
_METAVARS = {"int": "N", "float": "X", "str": "TEXT"}


#: A field of RunConfig's body and the attribute docstring right after it (four-space indent, as written in
#: config.py): its name and the docstring's text.
_FIELD_DOC = re.compile(r'^    (\w+): [^\n]+\n    """(.*?)"""', re.MULTILINE | re.DOTALL)


@functools.lru_cache(maxsize=1)
def field_docs() -> dict[str, str]:
    """Each RunConfig field's attribute docstring (the string literal after it in config.py), as plain text, and
    each optimizer's own setting's (its record's, :mod:`initmem.run.optimizers`).

    Read with a regular expression from the source of :mod:`initmem.run.config`, RunConfig's body only (parsing the
    module with :mod:`ast` would cost ``initmem train --help`` a third of its time; a test holds the two readings
    equal); RST markup (````x````) is dropped.
    """
    source = Path(_config.__file__).read_text(encoding="utf-8")
    start = source.index("\nclass RunConfig")
    end = re.compile(r"^\S", re.MULTILINE).search(source, start + 1 + len("class RunConfig"))
    body = source[start : end.start() if end else len(source)]
    docs = {name: " ".join(text.replace("``", "").split()) for name, text in _FIELD_DOC.findall(body)}
    for setting in _optimizers.settings():
        docs[setting.name] = " ".join(setting.doc.replace("``", "").split())
    return docs


def _field_help(f) -> str:
    """The help of one RunConfig flag: its docstring, its allowed values and its default (``%`` escaped)."""
    parts = [field_docs().get(f.name, "").rstrip(".") + "."] if field_docs().get(f.name) else []
    if f.name in FIELD_CHOICES:
        parts.append(f"Allowed: {', '.join(FIELD_CHOICES[f.name])}.")
    default = (
        "none" if f.default is None else json.dumps(list(f.default) if isinstance(f.default, tuple) else f.default)
    )
    parts.append(f"Default: {default}.")
    return " ".join(parts).replace("%", "%%")


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("run configuration (RunConfig fields; 'none' for an optional field)")
    for f in fields(RunConfig):
        flag = "--" + f.name.replace("_", "-")
        doc = _field_help(f)
        if str(f.type) == "bool":
            group.add_argument(
                flag, dest=f.name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=doc
            )
            continue
        base = str(f.type).replace(" | None", "")
        if f.name in FIELD_CHOICES:
            metavar = "{" + ",".join(FIELD_CHOICES[f.name]) + "}"
        else:
            metavar = "JSON_LIST" if base.startswith("tuple") else _METAVARS.get(base, "VALUE")
        group.add_argument(flag, dest=f.name, metavar=metavar, default=argparse.SUPPRESS, help=doc)


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """RunConfig from ``--config FILE`` (if any) overridden by individual flags."""
    values: dict[str, Any] = load_config_file(args.config) if args.config else {}
    names = {f.name for f in fields(RunConfig)}
    for name, value in vars(args).items():
        if name in names:
            values[name] = value if isinstance(value, bool) else parse_field_value(name, value)
    return RunConfig.from_dict(values)


def checkpoint_option(args: argparse.Namespace, config: RunConfig) -> Path | None:
    """The checked ``--checkpoint`` file, or None; ``--checkpoint`` and ``--checkpoint-every`` go together."""
    from ..base.files import check_output_file  # here: its hashing modules are not needed by ``train --help``

    every_flag = "checkpoint_every" in vars(args)  # given on the command line (not only in --config)
    if args.checkpoint is None:
        if every_flag and config.checkpoint_every:
            raise ConfigError("--checkpoint-every: needs --checkpoint FILE (where to keep the checkpoint)")
        if config.checkpoint_every:
            import logging  # here, the one place it logs: ``train --help`` needs no logging

            logging.getLogger("initmem.cli").warning(
                "checkpoint_every=%d (from --config) has no effect without --checkpoint FILE", config.checkpoint_every
            )
        return None
    if not config.checkpoint_every:
        raise ConfigError("--checkpoint: needs --checkpoint-every N (epochs between checkpoints, N > 0)")
    return check_output_file(args.checkpoint, "--checkpoint")

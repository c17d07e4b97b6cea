"""Reading a config or sweep spec file: the mapping in a JSON or YAML file (or a pipe), safely.

:func:`read_mapping_file` reads at most :data:`MAX_INPUT_BYTES`, parses ``.json`` strictly and anything else as YAML
with :func:`yaml_loader` (YAML 1.2 floats such as ``1e-3``; no alias, so no "billion laughs"; a safe loader: nothing
is constructed or executed), and raises :class:`~initmem.run.config.ConfigError` in one line naming the option
being read and the problem.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from .config import ConfigError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (the quick CLI reads its --config with this)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_INPUT_BYTES", "YamlAliasError", "read_mapping_file", "yaml_loader"]


class YamlAliasError(ValueError):
    """A YAML document uses an alias (``*name``), which :func:`yaml_loader` refuses; the message says which and on
    which line: ``a YAML alias (*name, line 3)``."""


def yaml_loader() -> type:
    """A ``yaml.SafeLoader`` subclass that reads YAML 1.2 / JSON floats such as ``1e-3`` and ``1e-08`` as floats, and
    refuses aliases (:class:`YamlAliasError`).

    PyYAML follows YAML 1.1, whose float pattern needs a dot (``1.0e-3``), so ``lr: 1e-3`` would be the string
    ``'1e-3'``, and the JSON that ``json.dumps`` writes for small numbers (``1e-08``) could not be read back.
    An alias repeats a node without copying it, so a 1 KB document of nested aliases (a "billion laughs") holds a
    value billions of items long to walk or to format; none of the package's files needs one. Otherwise the loader
    stays a safe loader (no object construction, nothing executed).
    """
    import yaml

    global _YAML_LOADER
    if _YAML_LOADER is None:

        def compose_node(self: Any, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise YamlAliasError(f"a YAML alias (*{event.anchor[:40]}, line {event.start_mark.line + 1})")
            return yaml.SafeLoader.compose_node(self, parent, index)

        loader = type("InitmemSafeLoader", (yaml.SafeLoader,), {"compose_node": compose_node})
        resolvers = yaml.SafeLoader.yaml_implicit_resolvers
        loader.yaml_implicit_resolvers = {key: list(value) for key, value in resolvers.items()}  # a copy
        loader.add_implicit_resolver("tag:yaml.org,2002:float", _YAML12_FLOAT, list("-+0123456789."))
        _YAML_LOADER = loader
    return _YAML_LOADER


#: Floats YAML 1.1 misses: an exponent without a dot (``1e-3``, ``-2E+5``) and ``1.e3``-style forms.
_YAML12_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")
_YAML_LOADER: type | None = None


#: The most bytes a config or sweep spec file may hold (1 MiB; they hold a few KiB).
MAX_INPUT_BYTES = 1 << 20


def read_mapping_file(path: str | Path, what: str) -> dict[str, Any]:
    """The mapping held by a JSON file (a name ending in ``.json``) or a YAML file (any other name; an empty file is
    an empty mapping).

    A ``.json`` file is parsed as JSON, strictly (a trailing comma is an error); anything else as YAML, of which
    JSON is nearly a subset. ``path`` may be a regular file or a pipe, ``/dev/stdin`` and process substitutions
    (``<(...)``) included (read as YAML), of at most :data:`MAX_INPUT_BYTES`. Numbers such as ``1e-3`` are floats
    and aliases are refused (:func:`yaml_loader`); nothing in the file is executed.

    Raises:
        ConfigError: starting with ``what`` (the option or object being read) when the file is missing, is a
            folder or a device, is larger than :data:`MAX_INPUT_BYTES`, is unreadable or binary, is not valid JSON
            (``.json``) or YAML, uses a YAML alias, or holds something other than a mapping.
    """
    import yaml

    path = Path(path)
    text = _read_text(path, what)
    if path.suffix.lower() == ".json":
        try:
            values = json.loads(text)
        except ValueError as exc:
            where = f"line {exc.lineno} column {exc.colno}: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else exc
            raise ConfigError(f"{what}: {path} is not valid JSON ({where})") from None
    else:
        try:
            values = yaml.load(text, Loader=yaml_loader())  # noqa: S506 - a SafeLoader subclass
        except YamlAliasError as exc:
            raise ConfigError(f"{what}: {path} uses {exc}; aliases are not accepted, write the values out") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{what}: {path} is not valid JSON/YAML ({exc.__class__.__name__})") from exc
        except ValueError as exc:  # a constructor's: an integer of over 4300 digits, say
            raise ConfigError(f"{what}: {path} is not valid JSON/YAML ({str(exc).split(';')[0][:80]})") from None
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise ConfigError(f"{what}: {path} must hold a mapping, not a {type(values).__name__}")
    return values


def _read_text(path: Path, what: str) -> str:
    """The text of ``path`` (a file or a pipe, at most :data:`MAX_INPUT_BYTES`), or :class:`ConfigError` naming
    ``what``."""
    from ..base.files import file_kind

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ConfigError(f"{what}: no such file {path}") from None
    except OSError as exc:
        raise ConfigError(f"{what}: cannot read {path} ({exc.strerror or type(exc).__name__})") from None
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):  # a folder, a device (/dev/zero never ends), a socket
        raise ConfigError(f"{what}: {path} is {file_kind(mode)}, not a file; give a JSON/YAML file or a pipe")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{what}: cannot read {path} ({exc.strerror or type(exc).__name__})") from exc
    if len(data) > MAX_INPUT_BYTES:
        raise ConfigError(
            f"{what}: {path} is larger than {MAX_INPUT_BYTES >> 20} MiB; a config or sweep spec is a few KiB"
        )
    if b"\x00" in data:
        raise ConfigError(f"{what}: {path} is a binary file, not JSON/YAML text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what}: {path} is not UTF-8 text (JSON/YAML expected)") from exc

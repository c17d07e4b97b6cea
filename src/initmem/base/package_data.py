"""The data files shipped inside the package (``study/costs/cost_model.json``, ``study/statistics/critical_values.json``), read with
their shape checked.

:func:`read_package_json` reads one as JSON (no code runs on reading it) and asks the caller's check whether its
content has the shape the reader needs; a file that cannot be read, is not JSON (a truncated one) or has another shape
(one tampered with) raises :class:`PackageFileError`: one line naming the file and how to restore it, which the
command line prints with exit status 2 (:func:`initmem.cli.error_line`). :func:`finite_numbers` says whether a value
is a mapping of names to finite numbers, the shape most of those tables have.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["PackageFileError", "read_package_json", "finite_numbers", "is_number"]


class PackageFileError(ValueError):
    """A data file of the package cannot be used; the message names it and says how to restore it."""


def read_package_json(path: str | os.PathLike, problem: Callable[[Any], str | None]) -> Any:
    """The JSON content of the package's data file ``path``, once ``problem(content)`` returned None (else what is
    wrong with it, in words).

    Raises:
        PackageFileError: ``path`` cannot be read, is not JSON, or ``problem`` names what is wrong with its content;
            the message names the file and the command that restores it.
    """
    path = Path(path)
    try:
        why = problem(content := json.loads(path.read_text(encoding="utf-8")))
    except OSError as exc:
        why = f"cannot be read ({exc.strerror or type(exc).__name__})"
    except ValueError as exc:  # json.JSONDecodeError, UnicodeDecodeError: truncated or overwritten
        why = f"is not valid JSON ({exc})"
    if why is None:
        return content
    shown = _shown(path)
    raise PackageFileError(
        f"{shown}: {why}; the package's copy is damaged: restore it with git checkout -- {shown} (or reinstall initmem)"
    )


def is_number(value: Any) -> bool:
    """Whether ``value`` is a finite int or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def finite_numbers(value: Any, name: str, required: Iterable[str] = ()) -> str | None:
    """None when ``value`` is a non-empty mapping of names to finite numbers that holds every key of ``required``;
    else what is wrong, naming it ``name``."""
    if not isinstance(value, dict) or not value:
        return f"{name} is not a mapping of names to numbers"
    missing = [key for key in required if key not in value]
    if missing:
        return f"{name} lacks {', '.join(missing)}"
    bad = [key for key, number in value.items() if not is_number(number)]
    return f"{name}.{bad[0]} is not a finite number" if bad else None


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when inside it (as ``git checkout`` takes it), else absolute."""
    path = path.resolve()
    return path.relative_to(Path.cwd()).as_posix() if path.is_relative_to(Path.cwd()) else str(path)

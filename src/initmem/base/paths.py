"""Where the repository is (found from the working directory, never from where the package is installed), and the
environment variables the tools read: :data:`ROOT_ENV`, :data:`TRAIN_ENV`, :data:`EXECUTOR_ENV`,
:data:`SCHEDULER_ENV` and :data:`FRESH_ENV`.

:func:`find_repo_root` looks, in this order, at an explicit root (``--root DIR`` of ``initmem experiments`` /
``initmem book``), the environment variable ``INITMEM_ROOT``, then the working directory and its parents (the first
folder whose ``pyproject.toml`` declares ``name = "initmem"``): an installed ``initmem`` lives far from the checkout
whose notebooks, results and book it works on.

The *source checkout* (:func:`source_checkout`) is another thing: the folder above ``src/`` that holds the code
this process runs, asked only for provenance (which commit computed a run: :func:`git_commit`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = [
    "RootError",
    "ROOT_ENV",
    "TRAIN_ENV",
    "EXECUTOR_ENV",
    "SCHEDULER_ENV",
    "FRESH_ENV",
    "fresh_runs",
    "PROJECT_NAME",
    "is_project_root",
    "find_repo_root",
    "default_root",
    "source_checkout",
    "git_commit",
]

#: The environment variable that names the repository root.
ROOT_ENV = "INITMEM_ROOT"
#: Set (to ``1``) by ``initmem experiments`` for the notebooks it executes: there, training the missing runs of an
#: experiment is what was asked for (:func:`initmem.study.costs.results.run_experiment`).
TRAIN_ENV = "INITMEM_TRAIN_MISSING"
#: Set by ``initmem experiments --executor`` for the notebooks it executes: how their sweeps run (an execution
#: setting, not a parameter of the results: it is not part of a notebook's digest, and the run hashes do not change
#: with it while the presets pin the thread count).
EXECUTOR_ENV = "INITMEM_EXECUTOR"
#: Set with :data:`EXECUTOR_ENV` ``dask``: the address of the running scheduler the notebooks' sweeps use.
SCHEDULER_ENV = "INITMEM_SCHEDULER"
#: Set (to ``1``) by ``initmem experiments --fresh``: no run is reused from the committed record, every run of the
#: chapters trains anew into their own folder (:func:`fresh_runs`), a replication check of the record.
FRESH_ENV = "INITMEM_FRESH"
#: The ``[project] name`` in the repository's ``pyproject.toml``.
PROJECT_NAME = "initmem"
_NAME_RE = re.compile(r"""^\s*name\s*=\s*["']([^"']+)["']""", re.MULTILINE)


def fresh_runs() -> bool:
    """Whether :data:`FRESH_ENV` asks for runs trained anew, none reused from the record."""
    return os.environ.get(FRESH_ENV) == "1"


class RootError(ValueError):
    """No initmem repository was found (the message says where it looked and how to name one)."""


def is_project_root(folder: str | os.PathLike) -> bool:
    """Whether ``folder/pyproject.toml`` declares the project ``initmem``."""
    pyproject = Path(folder) / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return _project_name(text) == PROJECT_NAME


def _project_name(text: str) -> str | None:
    """The ``[project] name`` of a pyproject.toml text (tomllib where available, else a regex)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        section = text.split("[project]", 1)[1] if "[project]" in text else ""
        section = re.split(r"^\[", section, maxsplit=1, flags=re.MULTILINE)[0]
        match = _NAME_RE.search(section)
        return match.group(1) if match else None
    try:
        project = tomllib.loads(text).get("project", {})
    except tomllib.TOMLDecodeError:
        return None
    name = project.get("name") if isinstance(project, dict) else None
    return name if isinstance(name, str) else None


def find_repo_root(root: str | os.PathLike | None = None, *, start: str | os.PathLike | None = None) -> Path:
    """The repository root: ``root`` if given, else ``$INITMEM_ROOT``, else the nearest initmem project at or
    above ``start`` (default: the working directory).

    Raises:
        RootError: ``root`` or ``$INITMEM_ROOT`` is not a folder, or no initmem project contains ``start``.
    """
    for value, what in ((root, "--root"), (os.environ.get(ROOT_ENV) or None, ROOT_ENV)):
        if value is not None:
            path = Path(value).expanduser().resolve()
            if not path.is_dir():
                raise RootError(f"{what}: {path} is not a folder")
            return path
    here = Path(start if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if is_project_root(folder):
            return folder
    raise RootError(
        f'--root: no initmem repository at or above {here} (no pyproject.toml with name = "initmem"); '
        f"run inside a checkout, pass --root DIR or set {ROOT_ENV}=DIR"
    )


def default_root() -> Path:
    """:func:`find_repo_root`, or the working directory when there is no repository (for import-time defaults)."""
    try:
        return find_repo_root()
    except RootError:
        return Path.cwd().resolve()


def source_checkout() -> Path:
    """The folder that holds this package's source in the ``src/`` layout (``<checkout>/src/initmem/``): where to
    ask git which commit the running code is. Outside a checkout (an installed wheel) it is some folder of the
    installation, where git finds no repository."""
    return Path(__file__).resolve().parents[3]


def git_commit() -> str:
    """The commit of the source tree this package runs from, or '' outside a git checkout; ``-dirty`` when the
    package's code (``src/``, ``pyproject.toml``) differs from it. Outputs the tools write into the checkout
    (executed notebooks, results) do not make it dirty: they do not change what a run computes."""
    import subprocess  # here: the command line's --help imports this module, and never asks git

    root = source_checkout()
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True
        )
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", "src", "pyproject.toml"],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return ""

"""Where the results of a preset live, for every reader and writer of them.

::

    <results_dir>/<preset>/<experiment>/runs/<hash>.nc    one file per run (the run store of its sweep)
    <results_dir>/<preset>/<experiment>.nc                the combined sweep Dataset (attrs: spec, preset, ...)

A relative ``results_dir`` (the notebooks' default is ``"results"``) is taken from the repository root
(:func:`initmem.base.paths.find_repo_root`: the checkout that contains the working directory, or ``--root`` /
``INITMEM_ROOT``), so an executed notebook opened from ``book/generated/`` or from a subfolder finds the committed
results instead of starting to train into a new folder. Outside any checkout it is taken from the working
directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...base.paths import RootError, find_repo_root

__all__ = ["PRESETS", "RECORD_OUT_DIR", "RECORD_RESULTS_DIR", "EXPLORE_DIR", "resolve_results_dir", "results_paths"]

#: The presets, from cheapest to most expensive: the ``<preset>`` folders of a results directory (their values are
#: the experiments', :mod:`initmem.study.design.presets`; the names are here so that ``initmem experiments --help`` imports
#: no experiment).
PRESETS: tuple[str, ...] = ("smoke", "cpu", "gpu", "paper")
#: The committed record, relative to the root: the executed notebooks the book renders and the results they read.
RECORD_OUT_DIR = Path("book") / "generated"
RECORD_RESULTS_DIR = Path("results")
#: Where explorations go, relative to the root (git-ignored): ``results/explore/<preset>-<digest>/``.
EXPLORE_DIR = Path("results") / "explore"


def resolve_results_dir(results_dir: str | os.PathLike) -> Path:
    """``results_dir`` itself if absolute, else the repository root's ``results_dir`` (see the module docstring)."""
    path = Path(results_dir).expanduser()
    if path.is_absolute():
        return path
    try:
        return find_repo_root() / path
    except RootError:
        return Path.cwd() / path


def results_paths(results_dir: str | os.PathLike, preset: str, name: str) -> tuple[Path, Path]:
    """``(runs_dir, combined_file)`` of experiment ``name`` at ``preset`` (``results_dir`` as
    :func:`resolve_results_dir` resolves it)."""
    base = resolve_results_dir(results_dir) / preset
    return base / name / "runs", base / f"{name}.nc"

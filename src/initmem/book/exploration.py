"""Explorations and the record: where a run of the notebooks goes, and what its pages say about it.

The committed record is each notebook executed at the preset the book renders it at
(:func:`initmem.study.design.presets.book_preset`), without overrides, into ``book/generated/`` with its results under
``results/<preset>/``. Any other run is an *exploration* (:func:`is_exploration`): its results go to
``results/explore/<preset>-<digest of the overrides>/`` (:func:`explore_folder`; git-ignored), its executed notebooks
to that folder's ``notebooks/``, never into the record (:func:`destinations`). Its pages open with a banner
(:func:`exploration_banner`): the parameters the user set first and highlighted, then whatever else differs from the
record, and the command that reproduces the page (:func:`rerun_command`). Fresh runs (``initmem experiments --fresh``,
:func:`initmem.base.paths.fresh_runs`) are an exploration too, even at the record's preset and parameters: every run
trains anew, none is read from the record, into ``results/explore/<tag>-fresh/``.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..base.paths import fresh_runs
from ..study.design import presets as _presets
from ..study.design.layout import EXPLORE_DIR, RECORD_OUT_DIR, RECORD_RESULTS_DIR
from .parameters import ParameterError, jsonable

__all__ = [
    "EXPLORE_NOTEBOOKS",
    "PARAMETER_CELL_TAGS",
    "exploration_tag",
    "is_exploration",
    "explore_folder",
    "destinations",
    "record_differences",
    "rerun_command",
    "exploration_banner",
    "collapse_parameter_cells",
    "add_banner",
]

#: Inside an exploration folder: the executed notebooks (its results sit beside, under ``<preset>/<name>/``).
EXPLORE_NOTEBOOKS = "notebooks"
#: The tag of the banner cell (:func:`add_banner`), which the book's style and its browser test find it by.
BANNER_TAG = "initmem-exploration"


def exploration_tag(preset: str, parameters: Mapping[str, Any] | None) -> str:
    """``<preset>-defaults``, or ``<preset>-<10 hex digits of the overrides' digest>``: an exploration's folder; with
    ``-fresh`` after it for fresh runs (:func:`initmem.base.paths.fresh_runs`)."""
    suffix = "-fresh" if fresh_runs() else ""
    if not parameters:
        return f"{preset}-defaults{suffix}"
    blob = json.dumps(jsonable(dict(parameters), "parameters"), sort_keys=True, separators=(",", ":"))
    return f"{preset}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}{suffix}"


def is_exploration(name: str, preset: str, parameters: Mapping[str, Any] | None) -> bool:
    """Whether running ``name`` at ``preset`` with these overrides departs from the committed record
    (any override, a preset other than :func:`initmem.study.design.presets.book_preset`, or fresh runs)."""
    return bool(parameters) or preset != _presets.book_preset(name) or fresh_runs()


def explore_folder(root: str | Path, preset: str, parameters: Mapping[str, Any] | None) -> Path:
    """``<root>/results/explore/<tag>``: an exploration's results; its executed notebooks are in ``notebooks/``."""
    return Path(root) / EXPLORE_DIR / exploration_tag(preset, parameters)


def destinations(
    name: str, preset: str, user_params: Mapping[str, Any], root: Path, out_dir: Path | None, results_dir: Path | None
) -> tuple[Path, Path, bool]:
    """(executed-notebook folder, results folder, exploring) for one notebook; never the record when exploring.

    Raises:
        ParameterError: an exploration was pointed at the record's folders (``--out-dir``, ``--results-dir``).
    """
    exploring = is_exploration(name, preset, user_params)
    record_out, record_results = root / RECORD_OUT_DIR, root / RECORD_RESULTS_DIR
    if not exploring:
        return (out_dir or record_out), (results_dir or record_results), False
    explore = explore_folder(root, preset, user_params)
    out = out_dir or explore / EXPLORE_NOTEBOOKS
    results = results_dir or explore
    book = _presets.book_preset(name)
    why = "parameter overrides (-p)" if user_params else f"preset {preset!r} (the book renders it at {book!r})"
    why = "--fresh" if fresh_runs() else why
    for chosen, record, option in ((out, record_out, "--out-dir"), (results, record_results, "--results-dir")):
        if chosen.resolve() == record.resolve():
            raise ParameterError(
                f"{option}: {name} with {why} is an exploration and may not write into {record} (the committed "
                f"record); leave {option} out (default: {explore}) or choose another folder"
            )
    return out, results, True


def record_differences(
    name: str, defaults: Mapping[str, Any], preset: str, final: Mapping[str, Any]
) -> dict[str, tuple[Any, Any]]:
    """``{parameter: (committed value, this run's value)}`` for every parameter that differs from the record
    (the notebook's defaults and its book preset's values); ``preset`` is listed when it differs."""
    book = _presets.book_preset(name)
    record = {**defaults, **_presets.notebook_parameters(book, name), "preset": book}
    here = {**defaults, **final, "preset": preset}
    return {k: (record.get(k), v) for k, v in here.items() if k != "results_dir" and record.get(k) != v}


def rerun_command(preset: str | None, only: Iterable[str], overrides: Mapping[str, Any] | None = None) -> str:
    """The ``initmem experiments`` command that reproduces a page: ``--preset``, ``--only`` (the two-character
    prefixes of ``only``) and one ``-p NAME VALUE`` per override, each value as JSON, quoted for a POSIX shell.

    >>> rerun_command("cpu", ["NN_name"], {"batch_sizes": [64, 256]})
    "initmem experiments --preset cpu --only NN -p batch_sizes '[64, 256]'"
    """
    parts = ["initmem experiments"]
    if preset:
        parts.append(f"--preset {preset}")
    parts.append(f"--only {','.join(sorted({name[:2] for name in only}))}")
    for key, value in (overrides or {}).items():
        parts.append(f"-p {key} {shlex.quote(json.dumps(value))}")
    return " ".join(parts)


def exploration_banner(
    name: str,
    differences: Mapping[str, tuple[Any, Any]],
    results_dir: str,
    user_set: Mapping[str, Any] | None = None,
    preset: str | None = None,
) -> str:
    """The markdown cell put at the top of an exploration's executed notebook: what it is, the parameters the user
    set (``user_set``: the ``-p`` overrides) first and in bold, then the other values that differ from the record
    (``differences``, from :func:`record_differences`), where its results are, and the command that reproduces it. At
    another ``preset`` than the record's it says that the page does not draw the record
    (:func:`initmem.study.costs.reuse.record_results`)."""
    user_set = dict(user_set or {})
    order = [*(k for k in differences if k in user_set), *(k for k in differences if k not in user_set)]
    lines = [
        "```{warning}",
        f"**Exploration, not the committed record.** This page was executed with values that differ from those "
        f"the book renders `{name}` with; its numbers are not the ones of the reproduction ledger.",
        "",
    ]
    if fresh_runs():
        lines += ["**Fresh runs**: every run of this page was trained anew, none read from the record.", ""]
    book = _presets.book_preset(name)
    if preset and preset != book:
        lines += [
            f"The committed record is at preset `{book}`, another scale than `{preset}` (other data, network and "
            "budget): this page does not draw or tabulate it beside its own numbers.",
            "",
        ]
    if user_set:
        lines += ["**You set** " + ", ".join(f"**`{k}` = `{json.dumps(v)}`**" for k, v in user_set.items()) + ".", ""]
    lines += ["| parameter | committed | this page |", "|---|---|---|"]
    for key in order:
        record, here = differences[key]
        cells = [f"`{key}`", f"`{json.dumps(record)}`", f"`{json.dumps(here)}`"]
        if key in user_set:
            cells = [f"**{cell}**" for cell in cells]
            cells[0] += " (set by you)"
        lines.append("| " + " | ".join(cells) + " |")
    command = rerun_command(preset, [name], user_set) + " --fresh" * fresh_runs() if preset else None
    lines += ["", f"Results: `{results_dir}`." + (f" Reproduce this page: `{command}`." if command else ""), "```"]
    return "\n".join(lines)


#: How the rendered book shows the parameter cells of an executed notebook (myst-nb cell tags): the defaults cell
#: (every experiment parameter None, "take the preset's value") is removed, the values papermill injected are
#: collapsed. Readers see the prose first and can still open the values a page was computed with (each experiment
#: chapter also ends with the table of them).
PARAMETER_CELL_TAGS = {"parameters": "remove-cell", "injected-parameters": "hide-input"}


def collapse_parameter_cells(nb) -> None:
    """Tag the parameter cells of an executed notebook as :data:`PARAMETER_CELL_TAGS` says."""
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.get("cell_type") != "code":
            continue
        for role, shown in PARAMETER_CELL_TAGS.items():
            if role in tags and shown not in tags:
                cell.metadata["tags"] = tags = [*tags, shown]


def add_banner(nb, text: str) -> None:
    """Insert ``text`` as a markdown cell after the notebook's title cell (the first cell, when it is markdown)."""
    import nbformat

    cell = nbformat.v4.new_markdown_cell(text)
    cell.metadata["tags"] = [BANNER_TAG]
    at = 1 if nb.cells and nb.cells[0].get("cell_type") == "markdown" else 0
    nb.cells.insert(at, cell)

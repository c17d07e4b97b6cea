"""A notebook's parameters: the names its ``parameters`` cell declares, their defaults, the values the runner passes.

papermill fills a notebook's cell tagged ``parameters``. Before anything runs, the runner
(:func:`initmem.book.runner.run_notebooks`) reads which names a notebook declares (:func:`notebook_parameter_names`)
and their literal defaults (:func:`parameter_defaults`), merges the preset's values with the user's overrides
(:func:`final_parameters`: every name must be declared, every value JSON-like; the command line parses ``-p``
values before, :func:`initmem.cli.experiments.parse_parameter_value`) and builds and validates the
experiment's sweep at those values (:func:`validate_experiment`). Each failure is a :class:`ParameterError` of one
line naming the notebook and the parameter.
"""

from __future__ import annotations

import ast
import contextlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..base.messages import shown
from ..study.design.presets import zipped_defaults

__all__ = [
    "INJECTED",
    "ParameterError",
    "notebook_parameter_names",
    "jsonable",
    "final_parameters",
    "parameter_defaults",
    "validate_experiment",
]

#: Parameters the runner fills in itself when a notebook's parameters cell declares them.
INJECTED = ("preset", "results_dir")


class ParameterError(ValueError):
    """A parameter is unknown to a notebook, or its value is not JSON-like; or an option names a folder the book
    cannot use."""


def _cell_source(nb) -> str:
    """The source of the notebook's ``parameters`` cell without IPython magics (so that ast parses it); ``""``
    without such a cell."""
    for cell in nb.cells:
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
            return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    return ""


def notebook_parameter_names(nb) -> list[str]:
    """Names assigned at top level in the notebook's ``parameters`` cell (empty if it has none)."""
    names: list[str] = []
    for node in ast.parse(_cell_source(nb)).body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, ast.Name) and t.id not in names:
                    names.append(t.id)
    return names


def jsonable(value: Any, where: str) -> Any:
    """``value`` with tuples turned into lists; ``ParameterError`` for anything not JSON-like."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v, where) for v in value]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ParameterError(f"{where}: dict keys must be strings, got {shown(k)}")
            out[k] = jsonable(v, where)
        return out
    # numpy scalars and the like
    item = getattr(value, "item", None)
    if callable(item):
        v = item()
        if isinstance(v, (bool, int, float, str)):
            return v
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise ParameterError(
        f"{where}: {type(value).__name__} value {shown(value)} is not JSON-like "
        "(papermill parameters must be numbers, strings, booleans, None, lists or dicts)"
    )


def final_parameters(
    name: str,
    declared: Sequence[str],
    preset: str,
    preset_params: Mapping[str, Any],
    user_params: Mapping[str, Any],
    results_dir: Path,
) -> dict[str, Any]:
    """The values papermill passes to notebook ``name``: the preset's, then the user's, then the zipped lists the user
    left to follow a list they set (:func:`initmem.study.design.presets.zipped_defaults`: ``-p optimizers "[sgd, adam]"``
    takes each optimizer's ``lrs``, ``weight_decays`` and ``aux_lrs`` entry from the preset), then the injected
    ``preset`` and ``results_dir`` (where ``declared`` has them), each JSON-like. Raises :class:`ParameterError` for a
    name the notebook does not declare or the user may not set, or a configuration the preset has no entry for."""
    allowed = [p for p in declared if p not in INJECTED]
    allowed_txt = ", ".join(allowed) if allowed else "(none: the notebook has no parameters cell)"
    for p in user_params:
        if p in INJECTED:
            raise ParameterError(f"{p!r} is set by the runner; use the {p.replace('_', '-')} option instead")
    for source, params in (("preset " + repr(preset), preset_params), ("the command line", user_params)):
        unknown = [p for p in params if p not in allowed]
        if unknown:
            raise ParameterError(
                f"notebook {name!r} has no parameter {', '.join(map(repr, unknown))} (from {source}); "
                f"its parameters are: {allowed_txt}"
            )
    final: dict[str, Any] = {}
    final.update(preset_params)
    final.update(user_params)
    try:
        final.update(zipped_defaults(name, preset, user_params))
    except ValueError as exc:
        raise ParameterError(f"notebook {name!r}, parameter {str(exc).split(':', 1)[0]!r}: {exc}") from None
    if "preset" in declared:
        final["preset"] = preset
    if "results_dir" in declared:
        final["results_dir"] = str(results_dir)
    return {k: jsonable(v, f"notebook {name!r}, parameter {k!r}") for k, v in final.items()}


def parameter_defaults(nb) -> dict[str, Any]:
    """The literal values assigned in the notebook's ``parameters`` cell (names with non-literal values are left out)."""
    values: dict[str, Any] = {}
    for node in ast.parse(_cell_source(nb)).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            with contextlib.suppress(ValueError, SyntaxError, TypeError):
                values[node.targets[0].id] = jsonable(ast.literal_eval(node.value), node.targets[0].id)
    return values


def validate_experiment(name: str, parameters: Mapping[str, Any], overridden: Iterable[str] = ()) -> None:
    """Build experiment ``name``'s sweep from ``parameters`` and validate every run's config, before anything runs.

    Only the experiments of :data:`initmem.study.design.registry.EXPERIMENT_SPECS` are checked (the others build no sweep).
    Raises :class:`ParameterError` with one line naming the notebook and the parameter, e.g.
    ``notebook 'NN_name', parameter 'sigma_ws': sigma_w: must be > 0, got -1.0 (sweep point ...)``.
    """
    from ..study.design.registry import EXPERIMENT_SPECS, experiment_spec
    from ..sweeps.spec import SweepSpec

    if name not in EXPERIMENT_SPECS:
        return
    spec: dict[str, Any] = {}
    try:
        spec = experiment_spec(name, parameters)
        SweepSpec.from_dict(spec)
    except (ValueError, TypeError) as exc:
        message = " ".join(str(exc).split())
        param = _parameter_behind(message, spec, parameters, list(overridden))
        where = f"notebook {name!r}" + (f", parameter {param!r}" if param else "")
        raise ParameterError(f"{where}: {message}") from None


def _parameter_behind(
    message: str, spec: Mapping[str, Any], parameters: Mapping[str, Any], overridden: Sequence[str]
) -> str | None:
    """The notebook parameter that an error about a sweep field (``sigma_w: ...``, ``grid.seed: ...``) came from."""
    field = message.split(":", 1)[0].strip().split(".", 1)[-1]  # "grid.seed" -> "seed"
    axes = {**spec.get("grid", {}), **spec.get("zip", {})}
    if field in axes:
        for name in (*overridden, *parameters):
            value = parameters.get(name)
            if isinstance(value, (list, tuple)) and list(value) == list(axes[field]):
                return name
    return field if field in parameters else None

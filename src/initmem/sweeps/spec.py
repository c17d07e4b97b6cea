"""The sweep spec: a base :class:`~initmem.run.config.RunConfig` plus the fields to vary.

A :class:`SweepSpec` holds ``base`` (RunConfig fields), ``grid`` (lists whose Cartesian product it sweeps, one
dimension each), at most one ``zip`` group (lists walked in lock step along one dimension named after the first zipped
field, whose values must differ; the others become coordinates along it) and ``also`` (further grids, each replacing
some of the grid's lists; one that names the first zipped field walks only those entries of the zip). The sweep is the
union of the grids' points (a point two grids share is one run); each coordinate is the union of its values in
first-seen order, and a point no grid holds is NaN in the combined Dataset. Swept values are numbers, strings or
booleans; execution fields (``device``, ``progress``, ``checkpoint_every``) are not part of a run's hash and cannot be
swept. Every point is validated when the spec is built, so a bad value fails before anything trains; a spec of more
than :data:`MAX_RUNS` runs is refused from its lists' lengths first. The format with examples: the API page of layer
``sweeps`` (``book/api/sweeps.md``).
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from ..base.messages import shown
from ..run.config import EXECUTION_FIELDS, ConfigError, RunConfig, field_value
from ..run.mapping_files import read_mapping_file

__all__ = ["SweepSpec", "as_spec", "MAX_RUNS"]

#: The most runs a sweep may have (the largest experiment has a few hundred); a larger spec is refused before its
#: points are built (each costs about 0.25 ms and a few KiB).
MAX_RUNS = 100_000

_SPEC_KEYS = ("base", "grid", "zip", "also")
_EMPTY: dict[str, Any] = {"base": {}, "grid": {}, "zip": {}, "also": ()}
_FIELD_TYPES = {f.name: str(f.type) for f in fields(RunConfig)}
_SCALAR_TYPES = (bool, int, float, str)


@dataclass(frozen=True)
class SweepSpec:
    """A base config, a grid, one optional zip group and optional further grids ``also`` (see the module
    docstring).

    ``base`` may be a mapping of RunConfig fields or a :class:`RunConfig`. Everything is validated on
    construction, including every point's RunConfig; problems raise :class:`ConfigError` with one line
    naming the key (``grid.sigma_w: ...``) or the field and the sweep point.
    """

    base: Mapping[str, Any] = field(default_factory=dict)
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    zip: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    also: Sequence[Mapping[str, Sequence[Any]]] = ()
    _points: tuple[tuple[dict[str, Any], RunConfig], ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        base = self.base.to_dict() if isinstance(self.base, RunConfig) else self.base
        object.__setattr__(self, "base", _check_base(base))
        object.__setattr__(self, "grid", _check_axes("grid", self.grid))
        object.__setattr__(self, "zip", _check_axes("zip", self.zip))
        _check_zip(self.grid, self.zip)
        object.__setattr__(self, "also", _check_also(self.grid, self.zip, self.also))
        most = sum(math.prod(self._grid_shape(grid)) for grid in self._grids())
        if most > MAX_RUNS:
            raise ConfigError(
                f"sweep spec: {most:,} runs ({' + '.join(' x '.join(map(str, self._grid_shape(g))) for g in self._grids())}) "
                f"are more than the {MAX_RUNS:,} a sweep may have; split it into several sweeps"
            )
        object.__setattr__(self, "_points", tuple(self._build_points()))

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> SweepSpec:
        """From ``{"base": {...}, "grid": {...}, "zip": {...}, "also": [{...}, ...]}`` (every key optional)."""
        if not isinstance(values, Mapping):
            raise ConfigError(
                f"sweep spec: must be a mapping with keys {', '.join(_SPEC_KEYS)}, got {type(values).__name__}"
            )
        unknown = [key for key in values if key not in _SPEC_KEYS]
        if unknown:
            raise ConfigError(f"{unknown[0]}: unknown sweep spec key; allowed keys are {', '.join(_SPEC_KEYS)}")
        return cls(**{key: values[key] if values[key] is not None else _EMPTY[key] for key in values})

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> SweepSpec:
        """Read a YAML or JSON spec file."""
        return cls.from_dict(read_mapping_file(path, "sweep spec"))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict that :meth:`from_dict` turns back into an equal spec (``also`` only when it is given)."""
        out = {
            "base": dict(self.base),
            "grid": {k: list(v) for k, v in self.grid.items()},
            "zip": {k: list(v) for k, v in self.zip.items()},
        }
        if self.also:
            out["also"] = [{k: list(v) for k, v in grid.items()} for grid in self.also]
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=False)

    # --- the points ---------------------------------------------------------------------------
    @property
    def dims(self) -> list[str]:
        """The sweep dimensions: the grid fields, then the first zipped field."""
        return [*self.grid, *list(self.zip)[:1]]

    def coordinate(self, name: str) -> list[Any]:
        """The values of sweep field ``name`` (a grid or zipped field): the union over the grids, in first-seen
        order."""
        if name in self.zip:
            return list(self.zip[name])
        return list(dict.fromkeys(value for grid in self._grids() for value in grid[name]))

    @property
    def shape(self) -> tuple[int, ...]:
        """Sizes of :attr:`dims`."""
        zipped = [len(next(iter(self.zip.values())))] if self.zip else []
        return (*(len(self.coordinate(name)) for name in self.grid), *zipped)

    @property
    def n_runs(self) -> int:
        """The number of runs: ``prod(shape)`` for one grid, fewer where ``also`` leaves points of the union out."""
        return len(self._points)

    def index(self, coords: Mapping[str, Any]) -> tuple[int, ...]:
        """The position of a point's ``coords`` (as :meth:`configs` gives them) in an array of :attr:`shape`."""
        position = [self.coordinate(name).index(coords[name]) for name in self.grid]
        if self.zip:
            first = next(iter(self.zip))
            position.append(list(self.zip[first]).index(coords[first]))
        return tuple(position)

    def _grids(self) -> list[dict[str, list[Any]]]:
        """The grid and each of ``also`` completed with the grid's lists."""
        return [dict(self.grid), *({**self.grid, **grid} for grid in self.also)]

    def _zip_entries(self, grid: Mapping[str, Sequence[Any]]) -> list[int]:
        """The zip's entries a grid walks: all, or those whose first zipped value the grid lists."""
        if not self.zip:
            return [0]
        first, column = next(iter(self.zip.items()))
        return [i for i, value in enumerate(column) if first not in grid or value in grid[first]]

    def _grid_shape(self, grid: Mapping[str, Sequence[Any]]) -> tuple[int, ...]:
        zipped = [len(self._zip_entries(grid))] if self.zip else []
        return (*(len(v) for name, v in grid.items() if name not in self.zip), *zipped)

    def configs(self) -> list[tuple[dict[str, Any], RunConfig]]:
        """Every point as ``(coords, config)``: the grid's in C order of its shape (the last dim fastest), then each
        of ``also``'s points that no earlier grid holds.

        ``coords`` maps every swept field (grid and zipped, in spec order) to its value.
        """
        return [(dict(coords), config) for coords, config in self._points]

    def _build_points(self) -> Iterable[tuple[dict[str, Any], RunConfig]]:
        seen: dict[str, dict[str, Any]] = {}
        held: set[str] = set()
        for grid in self._grids():
            axes = {name: values for name, values in grid.items() if name not in self.zip}
            for values in itertools.product(*axes.values(), self._zip_entries(grid)):
                coords = dict(zip(axes, values[:-1]))
                coords.update({name: column[values[-1]] for name, column in self.zip.items()})
                token = json.dumps(coords, sort_keys=True)
                if token not in held:  # a point two grids share is one run
                    held.add(token)
                    yield from self._point(coords, seen)

    def _point(
        self, coords: dict[str, Any], seen: dict[str, dict[str, Any]]
    ) -> Iterable[tuple[dict[str, Any], RunConfig]]:
        try:
            config = RunConfig.from_dict({**self.base, **coords})
        except ConfigError as exc:
            where = f" (sweep point {_format_coords(coords)})" if coords else ""
            raise ConfigError(f"{exc}{where}") from None
        digest = config.hash()
        if digest in seen:
            raise ConfigError(
                f"sweep points {_format_coords(seen[digest])} and {_format_coords(coords)} are the same run "
                f"(hash {digest}); remove one of the values"
            )
        seen[digest] = coords
        yield coords, config


def _format_coords(coords: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={shown(v, 40)}" for k, v in coords.items()) or "base"


def _check_base(base: Any) -> dict[str, Any]:
    if not isinstance(base, Mapping):
        raise ConfigError(f"base: must be a mapping of RunConfig fields, got {type(base).__name__}")
    for key in base:
        if key not in _FIELD_TYPES:
            raise ConfigError(f"base.{key}: unknown field; known fields are {', '.join(sorted(_FIELD_TYPES))}")
    return {key: field_value(key, value) for key, value in base.items()}


def _check_axes(where: str, axes: Any) -> dict[str, list[Any]]:
    """Validate ``grid`` or ``zip``: known, non-execution fields -> non-empty lists of distinct scalars."""
    if not isinstance(axes, Mapping):
        raise ConfigError(f"{where}: must be a mapping of field -> list of values, got {type(axes).__name__}")
    out: dict[str, list[Any]] = {}
    for name, values in axes.items():
        key = f"{where}.{name}"
        if name not in _FIELD_TYPES:
            raise ConfigError(f"{key}: unknown field; known fields are {', '.join(sorted(_FIELD_TYPES))}")
        if name in EXECUTION_FIELDS:
            raise ConfigError(f"{key}: an execution field (not part of the run hash) cannot be swept; set it in base")
        if not isinstance(values, (list, tuple)):
            raise ConfigError(f"{key}: must be a list of values, got {shown(values)}")
        if len(values) == 0:
            raise ConfigError(f"{key}: empty list; give at least one value")
        for value in values:
            if not isinstance(value, _SCALAR_TYPES):
                raise ConfigError(
                    f"{key}: swept values must be numbers, strings or booleans (they become coordinates), got {shown(value)}"
                )
        normalised = [field_value(name, value) for value in values]
        if where != "zip" or not out:  # a dimension's coordinate must not repeat
            _check_distinct(key, normalised)
        out[name] = normalised
    return out


def _check_also(grid: Mapping[str, list], zipped: Mapping[str, list], also: Any) -> tuple[dict[str, list[Any]], ...]:
    """Validate ``also``: a list of grids, each over some of the grid's own fields and, optionally, some values of the
    first zipped field."""
    if not isinstance(also, (list, tuple)):
        raise ConfigError(f"also: must be a list of grids (field -> list of values), got {shown(also)}")
    checked = []
    for k, extra in enumerate(also):
        axes = _check_axes(f"also[{k}]", extra)
        first = next(iter(zipped), None)
        foreign = [name for name in axes if name not in grid and name != first]
        if foreign:
            raise ConfigError(
                f"also[{k}].{foreign[0]}: not a grid field; a further grid replaces lists of the grid's own fields "
                f"({', '.join(grid) or 'none'}) or names some values of the first zipped field"
            )
        unknown = [value for value in axes.get(first, ()) if value not in zipped[first]]
        if unknown:
            raise ConfigError(
                f"also[{k}].{first}: {shown(unknown[0])} is not one of the zipped values {shown(zipped[first])}"
            )
        checked.append(axes)
    return tuple(checked)


def _check_distinct(key: str, values: list[Any]) -> None:
    seen: set[str] = set()
    for value in values:
        token = json.dumps(value)
        if token in seen:
            raise ConfigError(f"{key}: duplicate value {shown(value)}; every value of a dimension must differ")
        seen.add(token)


def _check_zip(grid: Mapping[str, list], zipped: Mapping[str, list]) -> None:
    both = [name for name in zipped if name in grid]
    if both:
        raise ConfigError(f"zip.{both[0]}: already a grid field; a field can be swept only once")
    lengths = {name: len(values) for name, values in zipped.items()}
    if len(set(lengths.values())) > 1:
        listing = ", ".join(f"{name}: {n}" for name, n in lengths.items())
        raise ConfigError(f"zip: the zipped lists must have equal lengths, got {listing}")


def as_spec(spec: SweepSpec | Mapping[str, Any] | str | os.PathLike) -> SweepSpec:
    if isinstance(spec, SweepSpec):
        return spec
    if isinstance(spec, Mapping):
        return SweepSpec.from_dict(spec)
    return SweepSpec.from_file(spec)

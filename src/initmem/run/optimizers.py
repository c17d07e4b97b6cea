"""The optimizers: one record each, in ``optimizers.json`` beside this module and nowhere else.

An :class:`Optimizer` record holds everything the package knows about one optimizer besides its update: its name
(``RunConfig.optimizer``), label and colour, family (which forgetting clock governs it), decay modes, whether K runs of
it can train as one stacked model, the hyperparameters it trains the small networks with (the smoke preset's), the
settings it adds to :class:`~initmem.run.config.RunConfig`, and its builder. The records are plain data (:data:`TABLE`)
read through :mod:`initmem.base.records`, which notes each look-up, so a page depends on the records it used. Every
list of optimizers derives from them, read when asked, never at import: :func:`record` (one; :func:`lookup`,
:func:`label`), :func:`names` (the listing), and the views :func:`records`, :func:`family`, :func:`in_paper`,
:func:`sequential` and :func:`settings`. The smoke preset trains every registered optimizer, the other presets the
paper's (:func:`in_paper`); a new optimizer is not one of them. This module imports nothing heavy (no torch): the study
and ``--help`` read it. How to add an optimizer: the API page of layer ``run`` (``book/api/run.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..base import records as _records

__all__ = [
    "TABLE",
    "Optimizer",
    "Setting",
    "record",
    "lookup",
    "names",
    "records",
    "family",
    "in_paper",
    "sequential",
    "settings",
    "label",
]

#: The records' file: ``{"kind": "optimizer", "records": {name: {field: value}}}``, in the order tables and figures
#: list them.
TABLE = Path(__file__).with_suffix(".json")

#: The families: ``sgd`` (forgets on the clock T_SGD, or T_L2 with weight decay; its learning rate scales with the
#: batch size) and ``adaptive`` (its step has a size set by the learning rate, not by the gradient: T_adapt).
FAMILIES = ("sgd", "adaptive")


@dataclass(frozen=True)
class Setting:
    """A RunConfig field that one optimizer adds: a number, its default (which must be what the optimizer does
    without it) and its meaning (the ``--help`` text), allowed in ``[minimum, below)``."""

    name: str
    default: float
    doc: str
    minimum: float = 0.0
    below: float = float("inf")

    @property
    def annotation(self) -> str:
        """The field's type as RunConfig's annotations write it (``float`` or ``int``)."""
        return type(self.default).__name__


@dataclass(frozen=True)
class Optimizer:
    """One optimizer, as every part of the package sees it."""

    name: str
    """``RunConfig.optimizer``: the name in configs, on the command line and in the results' coordinates."""
    label: str
    """How figures, tables and the ledger write it (the paper's spelling)."""
    family: str
    """``sgd`` or ``adaptive`` (:data:`FAMILIES`): which forgetting clock governs it."""
    colour: str
    """Its colour on every page."""
    builder: str
    """``module:function`` in :mod:`initmem.run.optim`: ``function(model, config)`` returns the torch optimizer."""
    decay_modes: tuple[str, ...]
    """The weight-decay modes it allows; the first is what ``decay_mode: auto`` means."""
    elementwise: bool
    """Whether its update acts on each parameter entry alone, so that K runs can train as one stacked model
    (:mod:`initmem.run.stacked`); an update over whole matrices (Muon's orthogonalisation) trains run by run."""
    defaults: Mapping[str, float]
    """RunConfig values (``lr``, ``weight_decay``, ``aux_lr``) it trains the small networks with: the smoke preset's."""
    settings: tuple[Setting, ...]
    """The RunConfig fields it adds (its own hyperparameters), added after cache format 2."""
    in_paper: bool
    """Whether the paper trains it: the presets beyond smoke compare the paper's optimizers (:func:`in_paper`)."""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"{self.name}: family must be one of {', '.join(FAMILIES)}, got {self.family!r}")
        if not self.decay_modes or not set(self.decay_modes) <= {"l2", "decoupled"}:
            raise ValueError(f"{self.name}: decay_modes must be 'l2' and/or 'decoupled', got {self.decay_modes!r}")
        object.__setattr__(self, "defaults", MappingProxyType(dict(self.defaults)))


def _optimizer(name: str, data: Mapping[str, Any]) -> Optimizer:
    """Record ``name`` from its data in :data:`TABLE`."""
    fields = {**data, "decay_modes": tuple(data["decay_modes"])}
    return Optimizer(name, **{**fields, "settings": tuple(Setting(**s) for s in data["settings"])})


def lookup(name: str) -> Optimizer | None:
    """The record of optimizer ``name``, None if there is none (that it was looked for is noted too)."""
    data = _records.record(TABLE, name)
    return None if data is None else _optimizer(name, data)


def record(name: str) -> Optimizer:
    """The record of optimizer ``name``; :class:`KeyError` naming the registered ones if there is none."""
    found = lookup(name)
    if found is None:
        raise KeyError(f"optimizer: allowed values are {', '.join(names())}; got {name!r}")
    return found


def label(name: str) -> str:
    """How figures and tables write optimizer ``name`` (its record's label); any other text unchanged."""
    found = lookup(name)
    return name if found is None else found.label


def names() -> tuple[str, ...]:
    """The optimizers' names, in the order tables and figures list them: a page that asks depends on the listing."""
    return _records.names(TABLE)


def records() -> tuple[Optimizer, ...]:
    """Every optimizer's record, in :func:`names` order (the listing and each record)."""
    return tuple(record(name) for name in names())


def family(which: str) -> tuple[str, ...]:
    """The optimizers of family ``which`` (:data:`FAMILIES`): ``sgd`` (clock T_SGD, or T_L2 with weight decay) or
    ``adaptive`` (T_adapt), in order."""
    if which not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {which!r}")
    return _records.where(TABLE, "family", which)


def in_paper() -> tuple[str, ...]:
    """The optimizers the paper trains, in order."""
    return _records.where(TABLE, "in_paper", True)


def sequential() -> tuple[str, ...]:
    """The optimizers whose update is not elementwise: their runs train one by one, never stacked."""
    return _records.where(TABLE, "elementwise", False)


def settings() -> tuple[Setting, ...]:
    """Every optimizer's own settings, in order: RunConfig's fields after its own."""
    return tuple(Setting(**s) for own in _records.each(TABLE, "settings").values() for s in own)

"""The chapters with preset values, one module each, found by listing this package, which defines their record.

Each module ``eNN_name.py`` holds one :class:`Experiment` record, ``EXPERIMENT``, named like its notebook: its sweep
spec, its values at each preset it supports, the reasons for those values, the claims its results decide, the names
its notebook glues and the results it reads. :data:`DISCOVERED` lists them in the order of their module names; the
registry, the presets, the claims' table, the cost tables and ``scripts/preset_specs.py`` read these records
instead of listing experiments.

A module is imported only when its experiment is asked for (:func:`experiment`), so a page's record of what it used
(:mod:`initmem.book.digest`) names only the experiments it uses. Modules beginning with ``_`` hold what several
experiments share. Adding a chapter takes three files: the API page's "Adding a chapter".
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...base.reads import listed

__all__ = [
    "Experiment",
    "Note",
    "CLOCKS",
    "LEDGER",
    "TRAINED",
    "DISCOVERED",
    "Table",
    "discover",
    "names",
    "exists",
    "experiment",
    "find",
    "in_group",
    "judged_by",
]


#: Group of the experiments whose runs feed the clock collapse (07) and the ledger (99):
#: :data:`initmem.study.design.registry.EXPERIMENTS`.
CLOCKS = "clocks"
#: Group of the experiments the ledger (99) reads besides those of :data:`CLOCKS` (a claim's verdict or its note).
LEDGER = "ledger"
#: Every experiment that trains (has a :attr:`Experiment.spec`); a reader names it in
#: :attr:`Experiment.reads_groups`, never an experiment in :attr:`Experiment.groups`.
TRAINED = "trained"


@dataclass(frozen=True)
class Note:
    """A choice the paper does not state, at one preset, and why it was made.

    ``parameters`` names the preset parameters that hold the choice: the Setup chapter's value column is read from
    the preset (:func:`initmem.study.design.preset_notes.notes_table`), so it cannot drift from what runs. ``notebooks``
    restricts the row to some notebooks (default: every notebook of the preset that defines one of the parameters;
    in an experiment module's :attr:`Experiment.notes`, that experiment). A choice that no parameter holds (how the
    runs were produced) has no parameters and states itself in ``fact``.
    """

    setting: str
    parameters: tuple[str, ...]
    reason: str
    notebooks: tuple[str, ...] = ()
    fact: str = ""


@dataclass(frozen=True)
class Experiment:
    """One chapter of the book with preset values: everything the package knows about it besides its notebook.

    Attributes:
        name: the notebook's file name without ``.py`` (``NN_name``); its results' folder name.
        spec: its notebook's parameters -> its sweep spec (``base``, ``grid``, ``zip``, ``also``); None for a page
            that reads other experiments' results and trains nothing.
        presets: preset name -> the values of its notebook's parameters there (an experiment exists at the presets
            it lists only; a reader's entry is empty).
        notes: preset name -> the choices of its values the paper does not state, with their reasons.
        claims: the claims its results decide (:data:`initmem.study.verdicts.judges.RULES` holds each claim's rule).
        annotates: the claims whose rows its results add a note to (:data:`initmem.study.verdicts.judges.NOTES`), judged by
            another experiment.
        glue: the names its notebook must glue (figures and the numbers the book and the ledger use).
        reads: the notebooks whose results it reads besides its own.
        reads_claims: the claims whose experiments' results it reads (:func:`initmem.study.experiments.judged_by`).
        reads_groups: the groups (:data:`CLOCKS`, :data:`LEDGER`, :data:`TRAINED`) whose results it reads.
        groups: the groups it belongs to.
        book_preset: the preset ``initmem book`` renders it at (None: the book's default).
        zipped: a list parameter whose entries name its configurations -> the parameters zipped with it.
        attrs: parameters stored as attributes of its combined Dataset (its analyses read them back).
        train_order: its entries in the order ``scripts/preset_specs.py`` writes a preset's sweeps -> their rank
            (``NAME:OPTIMIZER`` trains one optimizer of it first).
    """

    name: str
    spec: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    notes: Mapping[str, tuple[Note, ...]] = field(default_factory=dict)
    claims: tuple[str, ...] = ()
    annotates: tuple[str, ...] = ()
    glue: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    reads_claims: tuple[str, ...] = ()
    reads_groups: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    book_preset: str | None = None
    zipped: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    attrs: tuple[str, ...] = ()
    train_order: Mapping[str, int] = field(default_factory=dict)

    def in_group(self, group: str) -> bool:
        """Whether it belongs to ``group`` (:data:`TRAINED`: whether it has a spec)."""
        return self.spec is not None if group == TRAINED else group in self.groups


def discover(path: list[str] | tuple[str, ...], package: str) -> tuple[Experiment, ...]:
    """The ``EXPERIMENT`` of every module of ``package`` (found on ``path``) not beginning with ``_``, by module name.

    Raises:
        ValueError: two modules declaring the same experiment name.
    """
    found = []
    for info in sorted(pkgutil.iter_modules(path), key=lambda info: info.name):
        if not info.name.startswith("_"):
            found.append(importlib.import_module(f"{package}.{info.name}").EXPERIMENT)
    names = [e.name for e in found]
    if len(set(names)) != len(names):
        raise ValueError(f"experiments: two modules declare the same name: {', '.join(names)}")
    return tuple(found)


@functools.cache
def names() -> tuple[str, ...]:
    """Every experiment's name, in module order, read from its module's name (``eNN_name.py`` declares ``NN_name``)
    without importing any. The listing is noted (:func:`initmem.base.reads.listed`): a page that listed the
    experiments is stale once a module appears or goes."""
    listed(Path(__file__).parent, "e*.py")
    modules = sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))
    return tuple(module.removeprefix("e") for module in modules)


def exists(name: str) -> bool:
    """Whether a module declares experiment ``name`` (``e<name>.py``), without listing the others."""
    return ("e" + name).isidentifier() and importlib.util.find_spec(f"{__name__}.e{name}") is not None


def experiment(name: str) -> Experiment:
    """The record of experiment ``name``, importing its module alone (and what that module imports).

    Raises:
        ValueError: no module declares it, or the module ``e<name>`` declares another name.
    """
    if not exists(name):
        raise ValueError(f"name: unknown experiment {name!r}; known: {', '.join(names())}")
    record = importlib.import_module(f"{__name__}.e{name}").EXPERIMENT
    if record.name != name:
        raise ValueError(f"experiments: module e{name} declares {record.name!r}, not {name!r}")
    return record


@functools.cache
def _discovered() -> tuple[Experiment, ...]:
    names()  # the listing is noted: what every experiment is depends on which modules exist
    return discover(__path__, __name__)


def __getattr__(attribute: str) -> Any:
    """:data:`DISCOVERED`, every experiment in the order of its module's name, imported once it is asked for."""
    if attribute == "DISCOVERED":
        return _discovered()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


def find(test: Callable[[Experiment], bool]) -> Iterator[Experiment]:
    """The experiments for which ``test`` holds: first those whose modules are imported already, then the others in
    module order, each imported only when the ones before it have been tried (a caller that stops at the first
    imports no more)."""
    loaded = [n for n in names() if f"{__name__}.e{n}" in sys.modules]
    for name in (*loaded, *(n for n in names() if n not in loaded)):
        record = experiment(name)
        if test(record):
            yield record


def in_group(*groups: str) -> tuple[str, ...]:
    """The names of the experiments in any of ``groups``, in module order (every module is imported; none for no
    groups)."""
    return tuple(e.name for e in _discovered() if any(e.in_group(g) for g in groups)) if groups else ()


def judged_by(claim: str) -> str:
    """The name of the experiment whose module lists ``claim`` (``"C5"``) among its claims (:func:`find`: the
    modules imported already are tried first).

    Raises:
        ValueError: no experiment lists it.
    """
    for e in find(lambda e: claim in e.claims):
        return e.name
    known = ", ".join(c for e in _discovered() for c in e.claims)
    raise ValueError(f"claim: no experiment judges {claim!r}; the experiments judge {known}")


_ABSENT = object()


class Table(MutableMapping[str, Any]):
    """A table keyed by experiment name whose entries are read from the experiments' records when asked for:
    ``entry(record)`` gives an experiment's entry (:data:`Table.ABSENT`: it has none). Looking one name up imports
    that experiment's module alone; listing the table imports every module. Entries may be set and deleted (a test
    adds a notebook of its own), in front of what the records give."""

    ABSENT = _ABSENT

    def __init__(self, entry: Callable[[Experiment], Any]) -> None:
        self._entry = entry
        self._entries: dict[str, Any] = {}

    def _lookup(self, name: str) -> Any:
        if name not in self._entries:
            self._entries[name] = self._entry(experiment(name)) if exists(name) else _ABSENT
        return self._entries[name]

    def __getitem__(self, name: str) -> Any:
        value = self._lookup(name)
        if value is _ABSENT:
            raise KeyError(name)
        return value

    def __setitem__(self, name: str, value: Any) -> None:
        self._entries[name] = value

    def __delitem__(self, name: str) -> None:
        if self._lookup(name) is _ABSENT:
            raise KeyError(name)
        self._entries[name] = _ABSENT

    def __iter__(self) -> Iterator[str]:
        listed = [*names(), *(n for n in self._entries if n not in names())]
        return iter([n for n in listed if self._lookup(n) is not _ABSENT])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return repr(dict(self))

"""What one experiment module declares: an :class:`Experiment` record, and the :class:`Note` on a preset's choice."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Experiment", "Note", "CLOCKS", "LEDGER", "TRAINED"]

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

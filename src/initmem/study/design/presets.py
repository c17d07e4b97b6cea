"""Presets: the per-notebook parameters for each hardware budget.

A *preset* names a compute budget: ``smoke`` (checks that every notebook runs; its numbers mean nothing), ``cpu``
(hours on a laptop CPU, budgets in epochs), ``gpu`` (experiment 01 only, at the paper's scale on one GPU within a
time budget; :mod:`initmem.study.verdicts.gpu_results`) and ``paper`` (the paper's protocol); the book's Setup and Reproduce
chapters describe them. Every experiment notebook has a cell tagged ``parameters`` that declares each parameter as
None; its values come from ``NOTEBOOK_PARAMETERS`` (one dict per preset, keyed by notebook name, read from the
``presets`` of each module of :mod:`initmem.study.experiments`) and only from there (:func:`resolve_parameters`).
The runner (:func:`initmem.book.runner.run_notebooks`) starts from :func:`notebook_parameters` and applies the
user's ``-p NAME VALUE`` overrides. How to add an entry: below, on this layer's API page.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping
from typing import Any

from ...base.messages import shown
from ..experiments import Table, in_group, judged_by
from .layout import PRESETS
from .registry import ZIPPED

__all__ = [
    "BOOK_PRESET",
    "BOOK_PRESET_BY_NOTEBOOK",
    "book_preset",
    "PRESET_DESCRIPTIONS",
    "NOTEBOOK_PARAMETERS",
    "NOTEBOOK_READS",
    "check_preset",
    "notebook_parameters",
    "resolve_parameters",
    "zipped_defaults",
]

#: The preset ``initmem book`` renders a notebook at, unless :data:`BOOK_PRESET_BY_NOTEBOOK` names another.
BOOK_PRESET: str = "smoke"

#: Notebooks the book renders at another preset than :data:`BOOK_PRESET` (each module's
#: :attr:`~initmem.study.experiments.Experiment.book_preset`). A notebook moves to ``cpu`` only once every run of its
#: ``cpu`` sweep (and of the sweeps it reads) is committed under ``results/cpu/``, so that building the book reads
#: results and never trains (tests/test_book_presets.py checks this). Every page prints the preset it was executed at.
BOOK_PRESET_BY_NOTEBOOK: Table = Table(lambda e: e.book_preset or Table.ABSENT)

#: One line per preset, shown by the CLI and the book.
PRESET_DESCRIPTIONS: dict[str, str] = {
    "smoke": "end-to-end check in minutes on a CPU; the numbers mean nothing",
    "cpu": "small networks and a CIFAR-10 subset, sized for a laptop CPU (hours)",
    "gpu": "01 only, at paper scale on one GPU in minutes: one seed, the epochs that fit (benchmarks/gpu_oneshot.py)",
    "paper": "the paper's protocol: full CIFAR-10 and full-width networks (a GPU job)",
}

#: Per-preset parameter overrides, keyed by notebook name: each experiment module's
#: :attr:`~initmem.study.experiments.Experiment.presets`, in module order. Theory notebooks (``T*``) have none: they
#: are cheap at every preset. Every value the paper does not state is a choice; each is listed with its reason in
#: :mod:`initmem.study.design.preset_notes` (rendered as a table in the book's Setup chapter).
NOTEBOOK_PARAMETERS: dict[str, Table] = {
    preset: Table(lambda e, preset=preset: e.presets.get(preset, Table.ABSENT)) for preset in PRESETS
}

#: Notebooks that read the results of other notebooks (besides their own): the runner's digest of a
#: reader should cover these results too, so that it re-executes when they change. Each module names the notebooks
#: it reads (:attr:`~initmem.study.experiments.Experiment.reads`), their groups (``reads_groups``) or the claims
#: they judge (``reads_claims``).
NOTEBOOK_READS: Table = Table(
    lambda e: (
        (*e.reads, *in_group(*e.reads_groups), *map(judged_by, e.reads_claims))
        if e.reads or e.reads_groups or e.reads_claims
        else Table.ABSENT
    )
)


def book_preset(name: str) -> str:
    """The preset the book renders notebook ``name`` at."""
    return BOOK_PRESET_BY_NOTEBOOK.get(name, BOOK_PRESET)


def check_preset(preset: str) -> str:
    """Return ``preset`` if it is known, else raise ``ValueError`` naming the allowed presets."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; allowed presets: {', '.join(PRESETS)}")
    return preset


def notebook_parameters(preset: str, name: str) -> dict[str, Any]:
    """The parameter overrides of notebook ``name`` under ``preset`` (a fresh copy; may be empty).

    >>> notebook_parameters("smoke", "T1_scale_invariance")
    {}
    """
    check_preset(preset)
    return copy.deepcopy(NOTEBOOK_PARAMETERS.get(preset, {}).get(name, {}))


def resolve_parameters(name: str, preset: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of experiment notebook ``name`` at ``preset``, each replaced by its value in ``given`` unless
    that is None.

    An experiment notebook's ``parameters`` cell declares every parameter as None ("the preset's value"): the values
    live here, once. A reader (or papermill, or ``initmem experiments -p``) sets some; the notebook passes its
    ``globals()`` as ``given`` and gets the complete set back. Names the preset does not define are ignored.

    >>> name = judged_by("C1")  # any experiment defined at the preset
    >>> resolve_parameters(name, "smoke", {"seeds": [0, 1], "width": None})["seeds"]
    [0, 1]
    """
    values = notebook_parameters(preset, name)
    if not values:
        defined = [n for n, v in NOTEBOOK_PARAMETERS[preset].items() if v]
        elsewhere = [p for p in PRESETS if NOTEBOOK_PARAMETERS[p].get(name)]
        raise ValueError(
            f"preset: {name} is not defined at preset {preset!r} (it defines {', '.join(defined)}); "
            f"presets that define it: {', '.join(elsewhere) or 'none'}"
        )
    values.update({key: copy.deepcopy(given[key]) for key in values if given.get(key) is not None})
    values.update(zipped_defaults(name, preset, given))
    return values


def zipped_defaults(name: str, preset: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The zipped parameters of experiment ``name`` (:data:`initmem.study.design.registry.ZIPPED`) that ``given`` leaves
    unset (missing or None) while it sets the list they follow: each entry the preset's value for that configuration,
    so that ``-p optimizers "[sgd, adam]"`` alone trains each optimizer at its own learning rate, decay and aux lr.

    >>> zipped_defaults(judged_by("C1"), "smoke", {"optimizers": ["adam", "sgd"], "lrs": None})
    {'lrs': [0.005, 0.05], 'weight_decays': [0.0, 0.0], 'aux_lrs': [0.001, 0.001]}

    Raises:
        ValueError: a configuration the preset gives no value for, e.g. ``optimizers: 'lion' has no entry in lrs at
            preset 'smoke' (it has sgd, adam, ...); give lrs too, one entry per entry of optimizers``.
    """
    found: dict[str, Any] = {}
    for key, followers in ZIPPED.get(name, {}).items():
        chosen = given.get(key)
        if not isinstance(chosen, (list, tuple)):  # unset, or not a list (the sweep's validation says so)
            continue
        for follower in followers:
            if given.get(follower) is None:
                found[follower] = [_zipped_entry(name, preset, key, follower, entry) for entry in chosen]
    return found


def _zipped_entry(name: str, preset: str, key: str, follower: str, entry: Any) -> Any:
    """``follower``'s entry for configuration ``entry`` of ``key`` at ``preset``: from experiment ``name``'s own lists
    there, else from those of another experiment that zips the same two (09's optimizers take their decays from 01's
    where 09 lacks one)."""
    others = (other for other, zipped in ZIPPED.items() if other != name and follower in zipped.get(key, ()))
    sources = itertools.chain([name], others)  # the others' modules are imported only when its own lists lack it
    known: list[Any] = []
    for source in sources:
        values = NOTEBOOK_PARAMETERS[preset].get(source, {})
        keys, entries = list(values.get(key) or []), list(values.get(follower) or [])
        if entry in keys and len(keys) == len(entries):
            return copy.deepcopy(entries[keys.index(entry)])
        known += [k for k in keys if k not in known]
    raise ValueError(
        f"{key}: {shown(entry)} has no entry in {follower} at preset {preset!r} (it has "
        f"{', '.join(map(str, known)) or 'none'}); give {follower} too, one entry per entry of {key}"
    )

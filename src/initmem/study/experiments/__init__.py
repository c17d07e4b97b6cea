"""The chapters with preset values, one module each, found by listing this package.

Each module ``eNN_name.py`` holds one :class:`Experiment` record, ``EXPERIMENT``, named like its notebook: its sweep
spec, its values at each preset it supports, the reasons for those values, the claims its results decide, the names
its notebook glues and the results it reads. :data:`DISCOVERED` lists them in the order of their module names; the
registry (:mod:`initmem.study.registry`), the presets (:mod:`initmem.study.presets`), their notes
(:mod:`initmem.study.preset_notes`), the claims' table (:data:`initmem.study.judges.CLAIMS`), the cost tables
(:mod:`initmem.study.costs`) and ``scripts/preset_specs.py`` read these records instead of listing experiments.

Adding a chapter
----------------
1. Its notebook ``notebooks/NN_name.py`` (a ``parameters`` cell declaring every parameter as None).
2. Its module ``eNN_name.py`` here: ``EXPERIMENT = Experiment(name="NN_name", spec=..., presets={"smoke": {...}})``
   (an experiment may exist at smoke only). The modules beginning with ``_`` hold what several experiments share.
3. Its line in ``book/_toc.yml``.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._record import CLOCKS, LEDGER, TRAINED, Experiment, Note

__all__ = ["Experiment", "Note", "CLOCKS", "LEDGER", "TRAINED", "DISCOVERED", "discover", "in_group", "judged_by"]


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


#: Every experiment, in the order of its module's name (its value, every record with every preset, is not printed here).
#:
#: :meta hide-value:
DISCOVERED: tuple[Experiment, ...] = discover(__path__, __name__)


def in_group(*groups: str) -> tuple[str, ...]:
    """The names of the experiments in any of ``groups``, in :data:`DISCOVERED` order."""
    return tuple(e.name for e in DISCOVERED if any(e.in_group(g) for g in groups))


def judged_by(claim: str) -> str:
    """The name of the experiment whose module lists ``claim`` (``"C5"``) among its claims.

    Raises:
        ValueError: no experiment lists it.
    """
    for e in DISCOVERED:
        if claim in e.claims:
            return e.name
    known = ", ".join(c for e in DISCOVERED for c in e.claims)
    raise ValueError(f"claim: no experiment judges {claim!r}; the experiments judge {known}")

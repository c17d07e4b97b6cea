"""The claims ledger: the paper's claims C1-C7 (and B1, a test beyond the paper) against this reproduction.

Each claim, or each part of one (an optimizer of C2, a lever of C4, a design of C5), becomes one row judged by the
printed rules of :mod:`initmem.study.verdicts.rules` from its direction effect (a per-seed paired contrast of cross-fitted
spreads, with its calibrated interval, :mod:`initmem.study.statistics.calibration`), its noise null (:mod:`initmem.study.statistics.nulls`)
and, where the paper gives a number ``P``, its size against the band ``P +- max(5 pp, 30 % of P)``; the ledger's
page ("How a claim is judged") explains each.

:func:`reproduction_table` builds every row with the judges of :mod:`initmem.study.verdicts.judges` on the vocabulary of
:mod:`initmem.study.verdicts.ledger`; :mod:`initmem.study.verdicts.ledger_text` tells it; :func:`chapter_box` and
:func:`chapter_verdicts` render a chapter's rows. Spreads are those of the validation-selected predictor (the paper's
metric), except where the premise or the design points at the final one: C1 and C2 judge both and the final predictor
carries the verdict where the selected checkpoints do not interpolate; C3's final predictor carries the claim when
validation selects the same checkpoints at every horizon; C5's designs equalise the runs' ends, so they judge the
final ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import xarray as xr

from .. import experiments
from ..statistics.stats import Interval, n_diverged
from .judges import RULES as _JUDGES
from .judges import annotations_of, claims_of
from .ledger import Row, scale_text
from .ledger_text import verdict_box
from .rules import INCONCLUSIVE, Verdict

__all__ = [
    "reproduction_table",
    "claim_rows",
    "chapter_table",
    "chapter_box",
    "chapter_verdicts",
]


def claim_rows(results: Mapping[str, xr.Dataset], claims: list[str] | None = None) -> list[Row]:
    """The ledger's rows (:class:`~initmem.study.verdicts.ledger.Row`) for ``results`` (experiment name -> combined Dataset), in ledger order; only
    ``claims`` if given. A claim whose experiment has no results, or lacks what its rule needs, is one inconclusive
    row with the reason in its note."""
    rows: list[Row] = []
    for claim, name, rule in _judging(results, claims):
        ds = results.get(name)
        empty = Interval(math.nan, math.nan, math.nan, 0)
        if ds is None:
            rows.append(
                Row(claim, "", Verdict(INCONCLUSIVE, f"not measured: no results of {name}"), empty, experiment=name)
            )
            continue
        try:
            own = rule(ds)
        except (KeyError, ValueError, IndexError) as exc:
            own = [
                Row(
                    claim,
                    "",
                    Verdict(INCONCLUSIVE, f"{name} lacks what the rule needs ({type(exc).__name__}: {exc})"),
                    empty,
                    scale=scale_text(ds),
                    experiment=name,
                )
            ]
        diverged = n_diverged(ds)
        for row in own:
            row.experiment = name
            if diverged:  # their predictors are NaN: they are left out of every interval above
                row.note = "; ".join(filter(None, [row.note, f"{diverged} run(s) of {name} diverged and are left out"]))
        rows.extend(own)
    # e.g. what C2's knob, the adaptive learning rate, measured at each value (only results can annotate)
    for claim, name, annotate in annotations_of(_records(results)):
        if any(row.claim == claim for row in rows):
            note = annotate(results[name], results.get(experiments.judged_by(claim)), name)
            for row in rows:
                if row.claim == claim:
                    row.note = "; ".join(filter(None, [row.note, note]))
    return rows


def _records(results: Mapping[str, xr.Dataset]) -> list[experiments.Experiment]:
    """The records of the experiments ``results`` holds, in module order (each module imported)."""
    return [experiments.experiment(name) for name in sorted(results) if experiments.exists(name)]


def _judging(results: Mapping[str, xr.Dataset], claims: list[str] | None) -> tuple[tuple[str, str, Any], ...]:
    """(claim, experiment, rule) of every claim, or of ``claims``, in ledger order: looked up among the experiments of
    ``results`` first, so that a chapter's own claims import no other experiment's module."""
    wanted = list(_JUDGES) if claims is None else [c for c in _JUDGES if c in claims]
    found = {claim: (claim, name, rule) for claim, name, rule in claims_of(_records(results)) if claim in wanted}
    if len(found) < len(wanted):
        found = {row[0]: row for row in claims_of(experiments.DISCOVERED)}
    return tuple(found[claim] for claim in wanted if claim in found)


def reproduction_table(results: Mapping[str, xr.Dataset], claims: list[str] | None = None) -> Any:
    """The ledger as a pandas DataFrame indexed by row (``"C1"``, ``"C2 Adam"``, ...; :attr:`~initmem.study.verdicts.ledger.Row.key`), with the
    columns of :meth:`~initmem.study.verdicts.ledger.Row.as_dict`: the paper's statement and number with its band, ours (text), the direction
    effect's mean and 95 % interval (``effect``, ``effect_low``, ``effect_high``, ``seeds``), the size's
    (``size``...), the null (``p_value``, ``null_mean``, ``null_p95``, ``raw``), ``verdict`` (one of
    :data:`~initmem.study.verdicts.rules.VERDICTS`), ``reason``, ``seeds_needed`` (inconclusive rows), ``rule``, ``clocks``, ``scale``, ``note``,
    ``predictor`` (the predictor the verdict judged, where the row names one)."""
    import pandas as pd

    rows = claim_rows(results, claims)
    table = pd.DataFrame([row.as_dict() for row in rows], index=pd.Index([row.key for row in rows], name="row"))
    table["seeds_needed"] = table["seeds_needed"].astype("Int64")
    return table


def _own_claims(experiment: str, claims: list[str] | None) -> list[str]:
    return list(claims) if claims else [claim for claim, _, _ in claims_of([experiments.experiment(experiment)])]


def chapter_table(experiment: str, ds: xr.Dataset, claims: list[str] | None = None) -> Any:
    """The :func:`reproduction_table` of the claims that ``experiment``'s results ``ds`` decide (all of them, or
    ``claims``)."""
    return reproduction_table({experiment: ds}, _own_claims(experiment, claims))


def chapter_box(experiment: str, ds: xr.Dataset, claims: list[str] | None = None) -> str:
    """The verdict box of the claims that ``experiment``'s results ``ds`` decide (all of them, or ``claims``), for
    its chapter; the same rules and numbers as the ledger."""
    return verdict_box(chapter_table(experiment, ds, claims), _own_claims(experiment, claims))


def chapter_verdicts(experiment: str, ds: xr.Dataset, claims: list[str] | None = None, label: str | None = None) -> str:
    """One line with the verdict of each row that ``experiment``'s results ``ds`` decide, for the first screen of
    its chapter, linking to the full box (:func:`chapter_box`) under the MyST target ``label`` (default
    ``verdict-<experiment>``), e.g. ``**Verdict at the cpu preset:** C1 reproduced in direction · C7 reproduced in
    direction ({ref}`the numbers and the rules <verdict-NN_name>`).``"""
    table = chapter_table(experiment, ds, claims)
    where = f"the {ds.attrs['preset']} preset" if "preset" in ds.attrs else "this preset"
    verdicts = " · ".join(f"{key} {row['verdict']}" for key, row in table.iterrows())
    return (
        f"**Verdict at {where}:** {verdicts} ({{ref}}`the numbers and the rules <{label or f'verdict-{experiment}'}>`)."
    )

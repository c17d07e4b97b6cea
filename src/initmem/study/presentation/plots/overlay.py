"""The committed record beside an exploration, in the same figure: the record muted, the exploration in colour,
where their axes meet.

An exploration's page (:mod:`initmem.book.exploration`) reads the record's Dataset of the chapter
(:func:`initmem.study.costs.reuse.record_results`; None on the record's own pages) and passes it to the chapter's main
figure as ``record=``. The figure draws the record first, in :data:`RECORD_COLOR` with :data:`RECORD_LINE`, only
where the record's coordinates meet the exploration's (:func:`shared`), adds the legend entry :func:`record_handle`
and says so in its caption (:func:`record_note`). Without ``record`` a figure is the record's own. The figures that
take ``record``: :func:`~initmem.study.presentation.plots.figures.acc_vs_sigma` (01),
:func:`~initmem.study.presentation.plots.spreads.spread_heatmap` (03), :func:`initmem.study.presentation.batch_plots.batch_spreads` (04) and
:func:`initmem.study.presentation.phase_plots.phase_heatmaps` (10).
"""

from __future__ import annotations

from typing import Any

import xarray as xr

__all__ = ["RECORD_COLOR", "RECORD_LINE", "RECORD_LABEL", "shared", "plain", "record_handle", "record_note"]

#: The record's colour: a light grey, under the exploration's colours.
RECORD_COLOR = "0.6"
#: How the record's lines are drawn (thin, dashed, hollow markers, behind the exploration's lines).
RECORD_LINE: dict[str, Any] = {
    "color": RECORD_COLOR,
    "lw": 1.0,
    "ls": "--",
    "marker": "o",
    "mfc": "none",
    "ms": 4,
    "zorder": 1.5,
}
#: The legend entry of the record.
RECORD_LABEL = "committed record"


def shared(ds: xr.Dataset, record: xr.Dataset, dim: str) -> list[Any]:
    """The values of ``dim`` that both ``ds`` and ``record`` have, in ``ds``'s order; ``[None]`` when neither has the
    dimension (the whole Dataset is one group), ``[]`` when only one has it."""
    if dim not in ds.dims and dim not in record.dims:
        return [None]
    if dim not in ds.dims or dim not in record.dims:
        return []
    theirs = {plain(v) for v in record[dim].values}
    return [plain(v) for v in ds[dim].values if plain(v) in theirs]


def plain(value: Any) -> Any:
    """A coordinate's value as a Python scalar (``np.float64(0.1)`` -> ``0.1``), so that values compare and hash alike."""
    return value.item() if hasattr(value, "item") else value


def record_handle() -> Any:
    """The legend entry of the record's lines."""
    from matplotlib.lines import Line2D

    return Line2D([], [], label=RECORD_LABEL, **RECORD_LINE)


def record_note(record: xr.Dataset, extra: str | None = None) -> str:
    """``extra`` followed by the caption's note on the record: ``grey, dashed: the committed record (preset cpu)``."""
    preset = record.attrs.get("preset")
    note = "grey, dashed: the committed record" + (f" (preset {preset})" if preset else "")
    return "; ".join(filter(None, [extra, note]))

"""The figures of the experiment notebooks and the book: each function takes sweep Datasets (or tables built
from them) and returns a :class:`matplotlib.figure.Figure`.

* :mod:`~initmem.study.presentation.plots.style` -- legible at the book's width (:func:`~initmem.study.presentation.plots.style.use_book_style`,
  :func:`~initmem.study.presentation.plots.style.panels`, legend strips under the data, log axes);
* :mod:`~initmem.study.presentation.plots.labels` -- words and units for the names in the results;
* :mod:`~initmem.study.presentation.plots.captions` -- the caption line (preset, model, width, data size, seeds) and the title;
* :mod:`~initmem.study.presentation.plots.seeds` -- seeds as points beside their mean, or the mean's 95 % interval;
* :mod:`~initmem.study.presentation.plots.figures` -- the figures against sigma_w: accuracy, spread bars, training curves, norms;
* :mod:`~initmem.study.presentation.plots.spreads` -- the spread against the training length, (lr, L2), a swept field, the clocks;
* :mod:`~initmem.study.presentation.plots.ladder` -- the spread on every rung of the scale ladder, beside the paper's number;
* :mod:`~initmem.study.presentation.plots.overlay` -- the committed record drawn muted under an exploration.

Every name is importable from the package itself: ``plots.acc_vs_sigma(ds, hue="optimizer")``.
"""

from __future__ import annotations

from .captions import caption, caption_many
from .figures import acc_vs_sigma, depth_panels, norm_scatter, norm_trajectories, spread_bars, training_curves
from .labels import label
from .ladder import spread_ladder
from .spreads import spread_heatmap, spread_vs, spread_vs_clocks, spread_vs_horizon
from .style import (
    BOOK_COLUMN_PX,
    FIGURE_WIDTH,
    MIN_CAPTION_PT,
    MIN_TEXT_PX,
    MIN_TICK_PT,
    PANEL_HEIGHT,
    PX_PER_INCH,
    SEED_POINTS_MAX,
    STYLE,
    legend_in,
    panels,
    use_book_style,
)

__all__ = [
    "STYLE",
    "BOOK_COLUMN_PX",
    "MIN_TEXT_PX",
    "MIN_CAPTION_PT",
    "MIN_TICK_PT",
    "PX_PER_INCH",
    "FIGURE_WIDTH",
    "PANEL_HEIGHT",
    "SEED_POINTS_MAX",
    "use_book_style",
    "panels",
    "legend_in",
    "caption",
    "caption_many",
    "label",
    "acc_vs_sigma",
    "spread_bars",
    "training_curves",
    "spread_vs_horizon",
    "spread_heatmap",
    "spread_vs",
    "depth_panels",
    "norm_scatter",
    "norm_trajectories",
    "spread_vs_clocks",
    "spread_ladder",
]

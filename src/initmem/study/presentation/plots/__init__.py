"""The figures of the experiment notebooks and the book: each function takes sweep Datasets (or tables built
from them) and returns a :class:`matplotlib.figure.Figure`.

* :mod:`~initmem.study.presentation.plots.style` -- legible at the book's width (``style.use_book_style()``, panels,
  legend strips under the data, log axes);
* :mod:`~initmem.study.presentation.plots.labels` -- words and units for the names in the results;
* :mod:`~initmem.study.presentation.plots.captions` -- the caption line (preset, model, width, data size, seeds) and the title;
* :mod:`~initmem.study.presentation.plots.seeds` -- seeds as points beside their mean, or the mean's 95 % interval;
* :mod:`~initmem.study.presentation.plots.figures` (start here) -- the figures against sigma_w: accuracy, spread bars, training curves, norms;
* :mod:`~initmem.study.presentation.plots.spreads` -- the spread against the training length, (lr, L2), a swept field, the clocks;
* :mod:`~initmem.study.presentation.plots.ladder` -- the spread on every rung of the scale ladder, beside the paper's number;
* :mod:`~initmem.study.presentation.plots.overlay` -- the committed record drawn muted under an exploration.

It re-exports nothing: ``from initmem.study.presentation.plots import figures`` then ``figures.acc_vs_sigma(ds)``.
"""

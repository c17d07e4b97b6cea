"""The figures: sweep Datasets, their statistics and the ledger's verdicts drawn for the notebooks and the book.

Combined Datasets (or tables built from them) go in; out comes a :class:`matplotlib.figure.Figure`:

* :mod:`~initmem.study.presentation.plots` (open it first) -- the style, the captions and the figures every chapter
  draws;
* one chapter's own figures: :mod:`~initmem.study.presentation.batch_plots` (04),
  :mod:`~initmem.study.presentation.phase_plots` (10), :mod:`~initmem.study.presentation.forest` (the ledger's forest
  plot).

It may import every other part of the study; nothing of the study imports it.
"""

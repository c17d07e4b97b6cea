"""The study: the paper's experiments, their presets, costs and results, statistics, verdicts and figures.

Its sub-packages, from the bottom up (each imports only those before it; statistics imports none of them):

* :mod:`~initmem.study.experiments` -- one record per chapter; :mod:`~initmem.study.design` -- presets, each
  experiment's sweep, where its results live;
* :mod:`~initmem.study.costs` -- what a preset costs, the runs to train, load-or-run;
* :mod:`~initmem.study.statistics` -- spreads, intervals, noise nulls, the summary table;
* :mod:`~initmem.study.verdicts` -- the claims judged by printed rules (start at :mod:`~initmem.study.verdicts.claims`);
* :mod:`~initmem.study.presentation` -- the figures.

It may import :mod:`initmem.base`, :mod:`initmem.run` and :mod:`initmem.sweeps`, never :mod:`initmem.theory` or
:mod:`initmem.book.build`. Analysing committed results needs no torch: from ``run`` it imports only the torch-free
:mod:`~initmem.run.config`, :mod:`~initmem.run.thresholds` and :mod:`~initmem.run.variables` at module level
(``tests/test_architecture.py`` checks it); training a missing run imports the trainer when it is called.
"""

"""The study: the paper's experiments, their presets, results, statistics, verdicts and figures.

* the experiments: :mod:`~initmem.study.design.presets`, :mod:`~initmem.study.design.preset_notes` (the choices the paper does not
  state), :mod:`~initmem.study.design.registry` (each experiment's sweep from its parameters), :mod:`~initmem.study.costs.costs`;
* their results: :mod:`~initmem.study.costs.results` (load-or-run, where results live), :mod:`~initmem.study.costs.timed` (within
  a wall-time budget), :mod:`~initmem.study.costs.reuse` (what an exploration takes from the committed record);
* reading them: :mod:`~initmem.study.statistics.stats`, :mod:`~initmem.study.statistics.summary`, :mod:`~initmem.study.statistics.analysis`,
  :mod:`~initmem.study.verdicts.claims` (the claims ledger and its verdicts), :mod:`~initmem.study.verdicts.gpu_results`;
* the figures: :mod:`~initmem.study.presentation.plots`, :mod:`~initmem.study.presentation.batch_plots`, :mod:`~initmem.study.presentation.phase_plots`,
  :mod:`~initmem.study.presentation.forest`.

It may import :mod:`initmem.base`, :mod:`initmem.run` and :mod:`initmem.sweeps`, never :mod:`initmem.theory` or
:mod:`initmem.book.build`. Analysing committed results needs no torch: from ``run`` it imports only the torch-free
:mod:`~initmem.run.config`, :mod:`~initmem.run.thresholds` and :mod:`~initmem.run.variables` at module level
(``tests/test_architecture.py`` checks it); training a missing run imports the trainer when it is called.
"""

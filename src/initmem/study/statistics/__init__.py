"""Statistics over seeds: the numbers every table, figure and verdict is made of.

A sweep's combined Dataset (sigma_w x seeds x configurations) goes in; out come spreads with their intervals, noise
nulls and the summary table:

* :mod:`~initmem.study.statistics.stats` (open it first) -- spreads over sigma_w, seed means, intervals, diverged runs;
* :mod:`~initmem.study.statistics.nulls` -- how large an effect seed noise alone makes (permutation nulls);
* :mod:`~initmem.study.statistics.calibration` -- calibrated 95 % intervals for cross-fitted spreads and their
  contrasts (``critical_values.json``);
* :mod:`~initmem.study.statistics.summary` -- a sweep's summary table, in :mod:`~initmem.study.statistics.tables`'
  format; :mod:`~initmem.study.statistics.analysis` -- what the chapters compute from it;
  :mod:`~initmem.study.statistics.batches` -- experiment 04's points and fair comparisons.

It imports nothing else of the study (base and the torch-free parts of run only): a verdict is built on it, never the
other way round.
"""

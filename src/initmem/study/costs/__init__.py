"""What a preset costs and the runs it pays for: from an experiment's sweep to its results, trained or read.

An experiment's sweep at a preset (:mod:`initmem.study.design`) goes in; out come its price, the plan of what to train,
and its combined results:

* :mod:`~initmem.study.costs.costs` (open it first) -- what a preset costs, estimated before it runs (the fitted model
  ``cost_model.json`` over :mod:`~initmem.study.costs.flops`, refitted by :mod:`~initmem.study.costs.cost_fit`) and
  measured after;
* :mod:`~initmem.study.costs.reuse` -- what an exploration takes from the committed record, so only missing runs train;
* :mod:`~initmem.study.costs.results` -- load-or-run, the one call every experiment notebook makes;
  :mod:`~initmem.study.costs.timed` -- an experiment within a wall-time budget;
* :mod:`~initmem.study.costs.replays` -- runs of one configuration trained twice, and how far apart they end.

It may import :mod:`initmem.study.experiments` and :mod:`initmem.study.design` (and base, run, sweeps), nothing else of
the study.
"""

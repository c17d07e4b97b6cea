"""One run: everything that decides what a single training run computes and records.

* :mod:`~initmem.run.config` -- :class:`RunConfig`, its validation and its hash (the cache key);
  :mod:`~initmem.run.mapping_files` reads a config or sweep spec file (JSON or YAML, safely);
* :mod:`~initmem.run.optimizers` -- one record per optimizer: every list of optimizers derives from it;
* :mod:`~initmem.run.data`, :mod:`~initmem.run.models`, :mod:`~initmem.run.kernels` (which parameters are kernels,
  which is the head), :mod:`~initmem.run.sigma_w` (the one definition of sigma_w), :mod:`~initmem.run.optim`
  (the optimizers and the learning-rate schedules);
* :mod:`~initmem.run.metrics` -- the paper's per-run measurements; :mod:`~initmem.run.records` -- what a run
  records, with :mod:`~initmem.run.variables` and :mod:`~initmem.run.thresholds` (both free of torch, for the
  study) and :mod:`~initmem.run.elapsed`;
* :mod:`~initmem.run.loop` -- what every trainer shares; :mod:`~initmem.run.training` -- :func:`train`, one run;
  :mod:`~initmem.run.stacked` -- K runs as one vmapped model.

It may import :mod:`initmem.base` only.
"""

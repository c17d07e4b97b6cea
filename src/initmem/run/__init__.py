"""One run: everything that decides what a single training run computes and records.

* :mod:`~initmem.run.config` -- :class:`RunConfig`, its validation and its hash (the cache key);
  :mod:`~initmem.run.mapping_files` reads a config or sweep spec file (JSON or YAML, safely);
* :mod:`~initmem.run.optimizers` -- one record per optimizer (name, family, label, colour, builder, defaults, its own
  settings): every list of optimizers derives from it;
* :mod:`~initmem.run.data` -- CIFAR-10 (torchvision batches or the JPEG archive) and synthetic data, resident on
  the device, batched by index: sources, decode, synthetic, batches, prepare;
* :mod:`~initmem.run.models` -- ResNet-9 and the CIFAR ResNets;
* :mod:`~initmem.run.kernels` -- which parameters are kernels, which is the head (the taxonomy every other
  module uses);
* :mod:`~initmem.run.sigma_w` -- the one definition of sigma_w, for any ``nn.Module``;
* :mod:`~initmem.run.optim` -- SGD, SGD+momentum, Adam, AdamW, Muon, and the learning-rate schedules: muon,
  schedules, build;
* :mod:`~initmem.run.metrics` -- the paper's per-run measurements: clocks, norms, tau_interp, selection;
* :mod:`~initmem.run.records` -- what a run records and the Dataset with provenance; the names it records and the
  recorded epochs are in :mod:`~initmem.run.variables`, the yes/no thresholds in :mod:`~initmem.run.thresholds`
  (both free of torch, for the study), the seconds it spends (wall clock and CPU time) in
  :mod:`~initmem.run.elapsed`;
* :mod:`~initmem.run.loop` -- the pieces every training loop shares: device and precision, the epoch-0
  measurement, the one training step (schedule, update, clocks), checkpoints;
* :mod:`~initmem.run.training` -- :func:`train`, one run; :mod:`~initmem.run.stacked` -- K runs as one vmapped
  model.

It may import :mod:`initmem.base` only.
"""

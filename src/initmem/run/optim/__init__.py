"""Optimizers, weight decay and learning-rate schedules: the exact variants every run uses.

* :mod:`~initmem.run.optim.muon` -- Muon: Newton-Schulz orthogonalisation, :class:`~initmem.run.optim.muon.Muon` and
  :class:`~initmem.run.optim.muon.MuonWithAuxAdam` (Muon for hidden kernels, AdamW for the rest, as one optimizer),
  and our choices where the paper is silent;
* :mod:`~initmem.run.optim.schedules` -- the learning-rate schedule as a pure function of the global step
  (:func:`~initmem.run.optim.schedules.lr_multiplier`), applied before each step;
* :mod:`~initmem.run.optim.build` -- :func:`~initmem.run.optim.build.build_optimizer`: a
  :class:`~initmem.run.config.RunConfig` (or an optimizer name and keywords) -> ONE ``torch.optim.Optimizer``, with
  the weight-decay conventions; it calls the builder that the optimizer's record (:mod:`initmem.run.optimizers`) names.

An optimizer added later lives in a module of its own, which its record names. This package re-exports nothing:
``from initmem.run.optim.build import build_optimizer``.
"""

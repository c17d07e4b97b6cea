"""Optimizers, weight decay and learning-rate schedules: the exact variants every run uses.

* :mod:`~initmem.run.optim.muon` -- Muon: Newton-Schulz orthogonalisation, :class:`Muon` and
  :class:`MuonWithAuxAdam` (Muon for hidden kernels, AdamW for the rest, as one optimizer), and our choices where
  the paper is silent;
* :mod:`~initmem.run.optim.schedules` -- the learning-rate schedule as a pure function of the global step
  (:func:`lr_multiplier`) and :func:`apply_lr_multiplier`, which the training loop calls before each step;
* :mod:`~initmem.run.optim.build` -- :func:`build_optimizer`: a :class:`~initmem.run.config.RunConfig` (or an
  optimizer name and keywords) -> ONE ``torch.optim.Optimizer``, with the weight-decay conventions and
  :class:`SGDW`; it calls the builder that the optimizer's record (:mod:`initmem.run.optimizers`) names.

Every public name of these three is importable from here (``from initmem.run.optim import build_optimizer``); an
optimizer added later lives in a module of its own, which its record names (:mod:`initmem.run.optimizers`).
"""

from .build import OPTIMIZER_FIELDS, SGDW, build_optimizer, builder, optimizer_config, split_muon_params, trainable
from .muon import ADAM_DEFAULTS, MUON_DEFAULTS, NS_COEFFICIENTS, Muon, MuonWithAuxAdam, zeropower_via_newtonschulz5
from .schedules import LRSchedule, apply_lr_multiplier, lr_multiplier

__all__ = [
    "ADAM_DEFAULTS",
    "MUON_DEFAULTS",
    "NS_COEFFICIENTS",
    "LRSchedule",
    "Muon",
    "MuonWithAuxAdam",
    "SGDW",
    "apply_lr_multiplier",
    "build_optimizer",
    "builder",
    "optimizer_config",
    "OPTIMIZER_FIELDS",
    "lr_multiplier",
    "split_muon_params",
    "trainable",
    "zeropower_via_newtonschulz5",
]

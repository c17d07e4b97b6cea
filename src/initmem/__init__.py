"""initmem: do deep networks forget their initialization?

The executable companion to *Do Deep Networks Forget Initialization? A Forgetting-Time View of
Practical Inductive Bias* (Das, Beneventano, Dey, McKinley, Poggio; arXiv:2605.29152).

The small public API::

    from initmem import measure_init_memory, RunConfig, train, sweep, SweepSpec, init_sigma_w_, build_optimizer, spread

    ds = measure_init_memory(my_model_fn, (x_train, y_train), (x_val, y_val), (x_test, y_test))  # your own model
    ds = train(RunConfig(model="resnet9", width=16, sigma_w=0.5, optimizer="sgd", lr=0.01))     # a built-in run

This module is the facade over the package's layers (base, run, sweeps, study, theory, book, cli: one API page
each): it imports every public name but the version lazily, so ``import initmem`` and the CLI start fast.
"""

from __future__ import annotations

import importlib

from .base.version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start (a tenth of a quick CLI call)
if TYPE_CHECKING:
    from typing import Any

# The package's public API, the one deliberate exception to "one home for every name": the README, the API page
# and the own-model chapter (U1) document ``from initmem import ...`` for these names; everything else is imported
# from the module that defines it (tests/test_architecture.py checks both).
#: Public name -> the module that defines it (imported on first access).
LAZY_EXPORTS: dict[str, str] = {
    "RunConfig": "initmem.run.config",
    "ConfigError": "initmem.run.config",
    "measure_init_memory": "initmem.sweeps.measure",
    "cifar10_tensors": "initmem.run.data.prepare",
    "train": "initmem.run.training",
    "init_sigma_w_": "initmem.run.sigma_w",
    "build_optimizer": "initmem.run.optim.build",
    "build_model": "initmem.run.models",
    "sweep": "initmem.sweeps.driver",
    "SweepSpec": "initmem.sweeps.spec",
    "spread": "initmem.study.statistics.stats",
    "summary_table": "initmem.study.statistics.summary",
    "spread_lines": "initmem.study.statistics.summary",
}

__all__ = ["__version__", *LAZY_EXPORTS]


def __getattr__(name: str) -> Any:
    """Import a public name of :data:`LAZY_EXPORTS` on first access."""
    if name in LAZY_EXPORTS:
        return getattr(importlib.import_module(LAZY_EXPORTS[name]), name)
    raise AttributeError(f"module 'initmem' has no attribute {name!r}")

"""initmem: do deep networks forget their initialization?

The executable companion to *Do Deep Networks Forget Initialization? A Forgetting-Time View of
Practical Inductive Bias* (Das, Beneventano, Dey, McKinley, Poggio; arXiv:2605.29152).

The small public API::

    from initmem import measure_init_memory, RunConfig, train, sweep, SweepSpec, init_sigma_w_, build_optimizer, spread

    ds = measure_init_memory(my_model_fn, (x_train, y_train), (x_val, y_val), (x_test, y_test))  # your own model
    ds = train(RunConfig(model="resnet9", width=16, sigma_w=0.5, optimizer="sgd", lr=0.01))     # a built-in run
"""

from __future__ import annotations

__version__ = "0.1.0"

from .config import ConfigError, RunConfig  # noqa: E402

__all__ = [
    "__version__",
    "ConfigError",
    "measure_init_memory",
    "RunConfig",
    "train",
    "init_sigma_w_",
    "build_optimizer",
    "build_model",
    "spread",
    "summary_table",
    "sweep",
    "SweepSpec",
]


def __getattr__(name: str):
    """Import the torch-heavy parts lazily, so ``import initmem`` and the CLI start fast."""
    if name == "measure_init_memory":
        from .measure import measure_init_memory

        return measure_init_memory
    if name == "train":
        from .training import train

        return train
    if name == "init_sigma_w_":
        from .init import init_sigma_w_

        return init_sigma_w_
    if name == "build_optimizer":
        from .optim import build_optimizer

        return build_optimizer
    if name == "build_model":
        from .models import build_model

        return build_model
    if name in ("sweep", "SweepSpec", "spread", "summary_table"):
        from . import sweeps

        return getattr(sweeps, name)
    raise AttributeError(f"module 'initmem' has no attribute {name!r}")

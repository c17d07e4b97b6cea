"""The optimizers: one record each, registered here and nowhere else.

An :class:`Optimizer` record holds everything the package knows about one optimizer besides its update: its name
(``RunConfig.optimizer``), the words and colour the figures give it, its family (which forgetting clock governs it),
the decay modes it allows, whether K runs of it can train as one stacked model, the hyperparameters it trains the
small networks with, the settings it adds to :class:`~initmem.run.config.RunConfig`, and where its builder is.
Every list of optimizers derives from :data:`REGISTRY`: config validation and the decay mode
(:mod:`initmem.run.config`), the builders (:func:`initmem.run.optim.build.build_optimizer`), the stacked trainer, the
figures' labels and colours, the claims' optimizer parts (C2, C7), the GPU column and the smoke preset.

Adding an optimizer
-------------------
1. Its update and ``build(model, config) -> torch.optim.Optimizer`` in a module of :mod:`initmem.run.optim`
   (:mod:`initmem.run.optim.lion` is an example), with its ``automodule`` in ``book/api/run.md``.
2. Its record at the end of :data:`REGISTRY`. Its own settings (:class:`Setting`) become RunConfig fields, with a
   command-line flag each; they enter a run's hash only when set (``ADDED_LATER``), so registering an optimizer
   leaves every committed run's hash as it was.
3. Its tests: ``tests/test_optim.py`` builds, steps, decays and round-trips every registered optimizer by itself;
   add a parity test of its update against a reference written by hand.

The smoke preset trains every registered optimizer at its :attr:`Optimizer.defaults`; the other presets train the
paper's (:data:`IN_PAPER`, their results are committed), a new optimizer is not one of them (``in_paper=False``). This module imports nothing (no torch): the study and
the command line's ``--help`` read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "Optimizer",
    "Setting",
    "REGISTRY",
    "NAMES",
    "SGD_FAMILY",
    "ADAPTIVE",
    "IN_PAPER",
    "LABELS",
    "COLOURS",
    "SETTINGS",
    "record",
]

#: The families: ``sgd`` (forgets on the clock T_SGD, or T_L2 with weight decay; its learning rate scales with the
#: batch size) and ``adaptive`` (its step has a size set by the learning rate, not by the gradient: T_adapt).
FAMILIES = ("sgd", "adaptive")


@dataclass(frozen=True)
class Setting:
    """A RunConfig field that one optimizer adds: a number, its default (which must be what the optimizer does
    without it) and its meaning (the ``--help`` text), allowed in ``[minimum, below)``."""

    name: str
    default: float
    doc: str
    minimum: float = 0.0
    below: float = float("inf")

    @property
    def annotation(self) -> str:
        """The field's type as RunConfig's annotations write it (``float`` or ``int``)."""
        return type(self.default).__name__


@dataclass(frozen=True)
class Optimizer:
    """One optimizer, as every part of the package sees it."""

    name: str
    """``RunConfig.optimizer``: the name in configs, on the command line and in the results' coordinates."""
    label: str
    """How figures, tables and the ledger write it (the paper's spelling)."""
    family: str
    """``sgd`` or ``adaptive`` (:data:`FAMILIES`): which forgetting clock governs it."""
    colour: str
    """Its colour on every page."""
    builder: str
    """``module:function`` in :mod:`initmem.run.optim`: ``function(model, config)`` returns the torch optimizer."""
    decay_modes: tuple[str, ...] = ("l2", "decoupled")
    """The weight-decay modes it allows; the first is what ``decay_mode: auto`` means."""
    elementwise: bool = True
    """Whether its update acts on each parameter entry alone, so that K runs can train as one stacked model
    (:mod:`initmem.run.stacked`); an update over whole matrices (Muon's orthogonalisation) trains run by run."""
    defaults: Mapping[str, float] = field(default_factory=dict)
    """RunConfig values (``lr``, ``weight_decay``, ``aux_lr``) it trains the small networks with: the smoke preset's."""
    settings: tuple[Setting, ...] = ()
    """The RunConfig fields it adds (its own hyperparameters), added after cache format 2."""
    in_paper: bool = True
    """Whether the paper trains it: the presets beyond smoke compare the paper's optimizers (:data:`IN_PAPER`)."""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"{self.name}: family must be one of {', '.join(FAMILIES)}, got {self.family!r}")
        if not self.decay_modes or not set(self.decay_modes) <= {"l2", "decoupled"}:
            raise ValueError(f"{self.name}: decay_modes must be 'l2' and/or 'decoupled', got {self.decay_modes!r}")
        object.__setattr__(self, "defaults", MappingProxyType(dict(self.defaults)))


#: Every optimizer, in the order tables and figures list them.
# fmt: off
REGISTRY: tuple[Optimizer, ...] = (
    Optimizer("sgd", "SGD", "sgd", "#1f77b4", "build:build_sgd", defaults={"lr": 0.05}),
    Optimizer("sgd_momentum", "SGD+momentum", "sgd", "#17becf", "build:build_sgd_momentum", defaults={"lr": 0.005}),
    Optimizer("adam", "Adam", "adaptive", "#d62728", "build:build_adam", defaults={"lr": 0.005}),
    Optimizer("adamw", "AdamW", "adaptive", "#ff7f0e", "build:build_adamw", decay_modes=("decoupled",),
              defaults={"lr": 0.005, "weight_decay": 0.05}),
    Optimizer("muon", "Muon", "adaptive", "#2ca02c", "build:build_muon", decay_modes=("decoupled", "l2"),
              elementwise=False, defaults={"lr": 0.02, "aux_lr": 0.005}),
    # Lion's paper: an lr 3-10x below AdamW's, a decay as many times above (the same shrink lr * lambda per step)
    Optimizer("lion", "Lion", "adaptive", "#9467bd", "lion:build", decay_modes=("decoupled",), in_paper=False,
              defaults={"lr": 0.001, "weight_decay": 0.25},
              settings=(Setting("lion_beta1", 0.9, "Lion's update is the sign of lion_beta1 m + (1 - lion_beta1) g.",
                                below=1.0),
                        Setting("lion_beta2", 0.99, "Lion's momentum: m <- lion_beta2 m + (1 - lion_beta2) g.",
                                below=1.0))),
)
# fmt: on

_BY_NAME = {r.name: r for r in REGISTRY}
if len(_BY_NAME) != len(REGISTRY):
    raise ValueError("two optimizer records share a name")

#: The optimizers' names, in registry order.
NAMES: tuple[str, ...] = tuple(_BY_NAME)
#: The SGD family (clock T_SGD, or T_L2 with weight decay) and the adaptive optimizers (T_adapt).
SGD_FAMILY: tuple[str, ...] = tuple(r.name for r in REGISTRY if r.family == "sgd")
ADAPTIVE: tuple[str, ...] = tuple(r.name for r in REGISTRY if r.family == "adaptive")
#: The optimizers the paper trains, in registry order.
IN_PAPER: tuple[str, ...] = tuple(r.name for r in REGISTRY if r.in_paper)
#: Each optimizer's name as the paper writes it, and its colour.
LABELS: dict[str, str] = {r.name: r.label for r in REGISTRY}
COLOURS: dict[str, str] = {r.name: r.colour for r in REGISTRY}
#: Every optimizer's own settings: RunConfig's fields after its own.
SETTINGS: tuple[Setting, ...] = tuple(s for r in REGISTRY for s in r.settings)


def record(name: str) -> Optimizer:
    """The record of optimizer ``name``; :class:`KeyError` naming the registered ones if there is none."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"optimizer: allowed values are {', '.join(NAMES)}; got {name!r}") from None

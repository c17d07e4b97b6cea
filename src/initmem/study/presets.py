"""Presets: the per-notebook parameters for each hardware budget.

A *preset* names a compute budget. Every experiment notebook has a cell tagged ``parameters`` whose
values are the defaults; a preset overrides some of them. The runner
(:func:`initmem.book.runner.run_notebooks`) starts from :func:`notebook_parameters` and then applies the
user's ``-p NAME VALUE`` overrides.

``smoke``
    Seconds to a few minutes on a laptop CPU. Tiny networks, a few hundred images, a handful of
    steps. It checks that every notebook runs end to end; its numbers mean nothing.
``cpu``
    Hours on a laptop-class CPU. Small networks and a subset of CIFAR-10. Its budgets are set in epochs
    (:mod:`initmem.study.preset_notes` gives each its reason), not in clock units: the forgetting clocks are what
    those epochs reach, and the chapters print them.
``gpu``
    Experiment 01 only, at the paper's data and network scale, one seed, on one GPU in minutes:
    ``benchmarks/gpu_oneshot.py`` runs it within a time budget (:func:`initmem.study.timed.run_timed_experiment`),
    training as many of the preset's epochs as fit. Its results are the ledger's "paper scale (GPU)" column
    (:mod:`initmem.study.gpu_results`). The other experiments are not defined at this preset.
``paper``
    The paper's protocol (full CIFAR-10, full-width ResNet-9, ResNet-20/56/110). A GPU job.

How to add an entry
-------------------
``NOTEBOOK_PARAMETERS`` holds one dict per preset, keyed by the notebook's name (the file name in
``notebooks/`` without ``.py``). Each value maps parameter names, which must be defined in that
notebook's ``parameters`` cell, to JSON-like values (numbers, strings, booleans, lists, dicts).
An experiment notebook's parameters cell declares every parameter as None, so its values come from here and only
from here (:func:`resolve_parameters`); every preset gives every experiment parameter a value (a test checks
it). A notebook missing from a preset's dict runs with its own defaults. What a preset's runs cost is read from
their result files (:func:`initmem.study.costs.measured_costs`) and shown in the book's Setup chapter.

Example::

    NOTEBOOK_PARAMETERS["cpu"]["04_batch_size"] = {"batch_sizes": [32, 128, 512], "width": 8}
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..run import optimizers
from ..run.config import RunConfig, shown
from .registry import ZIPPED

__all__ = [
    "PRESETS",
    "BOOK_PRESET",
    "BOOK_PRESET_BY_NOTEBOOK",
    "book_preset",
    "PRESET_DESCRIPTIONS",
    "NOTEBOOK_PARAMETERS",
    "NOTEBOOK_READS",
    "check_preset",
    "notebook_parameters",
    "resolve_parameters",
    "zipped_defaults",
]

#: The presets, from cheapest to most expensive.
PRESETS: tuple[str, ...] = ("smoke", "cpu", "gpu", "paper")

#: The preset ``initmem book`` renders a notebook at, unless :data:`BOOK_PRESET_BY_NOTEBOOK` names another.
BOOK_PRESET: str = "smoke"

#: Notebooks the book renders at another preset than :data:`BOOK_PRESET`. A notebook moves to ``cpu`` only once
#: every run of its ``cpu`` sweep (and of the sweeps it reads) is committed under ``results/cpu/``, so that
#: building the book reads results and never trains (tests/test_book_presets.py checks this). Every page prints
#: the preset it was executed at.
# fmt: off
BOOK_PRESET_BY_NOTEBOOK: dict[str, str] = {
    "00_presets": "cpu", "01_optimizers": "cpu", "02_long_training": "cpu", "03_lr_and_l2": "cpu",
    "04_batch_size": "cpu", "05_depth": "cpu", "06_norms": "cpu", "07_clocks": "cpu", "08_calibration": "cpu",
    "09_adaptive_lr": "cpu", "10_phase_diagram": "cpu", "99_reproduction": "cpu",
}
# fmt: on

#: One line per preset, shown by the CLI and the book.
PRESET_DESCRIPTIONS: dict[str, str] = {
    "smoke": "end-to-end check in minutes on a CPU; the numbers mean nothing",
    "cpu": "small networks and a CIFAR-10 subset, sized for a laptop CPU (hours)",
    "gpu": "01 only, at paper scale on one GPU in minutes: one seed, the epochs that fit (benchmarks/gpu_oneshot.py)",
    "paper": "the paper's protocol: full CIFAR-10 and full-width networks (a GPU job)",
}

#: Optimizers whose learning rate scales linearly with the batch size (their step is a gradient-noise average).
_LINEAR_IN_BATCH = optimizers.SGD_FAMILY


def _rescaled(source: Mapping[str, Any], batch_size: int, order: list[str]) -> dict[str, Any]:
    """01's optimizers of ``source`` (its zipped lists) in ``order``, their learning rates rescaled from the source's
    batch size to ``batch_size`` (linearly for :data:`_LINEAR_IN_BATCH`, unchanged for the adaptive optimizers)."""
    ratio = batch_size / source["batch_size"]
    index = [source["optimizers"].index(name) for name in order]
    return {
        "optimizers": list(order),
        "lrs": [source["lrs"][i] * (ratio if order[j] in _LINEAR_IN_BATCH else 1.0) for j, i in enumerate(index)],
        "weight_decays": [source["weight_decays"][i] for i in index],
        "aux_lrs": [source["aux_lrs"][i] for i in index],
    }


def _every_optimizer() -> dict[str, list[Any]]:
    """01's zipped lists at smoke: every registered optimizer (:mod:`initmem.run.optimizers`) at the hyperparameters
    its record trains the small networks with, RunConfig's defaults for the rest."""
    default, records = RunConfig(), optimizers.REGISTRY
    return {
        "optimizers": [r.name for r in records],
        **{
            key: [r.defaults.get(name, getattr(default, name)) for r in records]
            for key, name in (("lrs", "lr"), ("weight_decays", "weight_decay"), ("aux_lrs", "aux_lr"))
        },
    }


# ==============================================================================================
# The experiment notebooks (01-07, 99): their parameters at each preset
# ==============================================================================================
# Every value the paper does not state is a choice; each is listed with its reason in initmem.study.preset_notes
# (rendered as a table in the book's Setup chapter). The experiment notebooks declare their parameters as
# None and take these values (resolve_parameters); tests/test_notebooks_smoke.py checks that both list the same names.

# The tables stay as written, a group of settings a line, not one value a line (the formatter leaves them alone):
# fmt: off
# --- smoke: seconds per notebook on a CPU; synthetic data, a width-4 ResNet-9 ------------------
_SMOKE_RUN = {"executor": "serial", "workers": None, "num_threads": 1}
_SMOKE_DATA = {
    "data": "synthetic", "image_size": 16, "train_size": 200, "val_size": 100, "test_size": 100,
    "train_eval_size": 100, "augment": False,
}
#: 01 at smoke trains every registered optimizer, each at its record's hyperparameters.
_SMOKE_OPTIMIZERS = _every_optimizer()
_SMOKE_01 = {
    **_SMOKE_RUN, **_SMOKE_DATA, "model": "resnet9", "width": 4, "logit_scale": None, "batch_size": 50, "epochs": 3, "eval_every": 1,
    "warmup_epochs": 0.0, "sigma_ws": [0.5, 2.0], "seeds": [0], **_SMOKE_OPTIMIZERS,
}
_SMOKE = {
    "01_optimizers": _SMOKE_01,
    "02_long_training": {
        **_SMOKE_RUN, **_SMOKE_DATA, "model": "resnet9", "width": 4, "logit_scale": None, "batch_size": 50,
        "lr": 0.05, "epochs": 6, "checkpoint_every": 0,
        "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": [0.5, 2.0], "seeds": [0], "horizons": [2, 4, 6],
        "reference_horizon": 2,
    },
    "03_lr_and_l2": {
        **_SMOKE_RUN, **_SMOKE_DATA, "model": "resnet9", "width": 4, "logit_scale": None, "batch_size": 50,
        "epochs": 3, "eval_every": 1, "warmup_epochs": 0.0, "schedule": "step", "schedule_milestones": [0.8, 0.9], "schedule_gamma": 0.1,
        "sigma_ws": [0.5, 2.0], "seeds": [0], "lrs": [0.02, 0.1], "weight_decays": [0.0, 0.01],
    },
    # train_size 640 so that `-p batch_sizes "[32, 512]"` works at every preset.
    "04_batch_size": {
        **_SMOKE_RUN, **_SMOKE_DATA, "train_size": 640, "model": "resnet9", "width": 4, "logit_scale": None,
        "lr": 0.05, "steps": 10, "epochs_grid": None, "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": [0.5, 2.0],
        "seeds": [0], "batch_sizes": [32, 128],
    },
    "05_depth": {
        **_SMOKE_RUN, **_SMOKE_DATA, "models": ["resnet9", "resnet20"], "widths": [4, 4], "logit_scale": None,
        "batch_size": 50,
        "lr": 0.05, "epochs": 3, "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": [0.5, 2.0], "seeds": [0],
    },
    "06_norms": {},  # reads 01's results
    "07_clocks": {},
    "08_calibration": {
        **_SMOKE_RUN, **_SMOKE_DATA, "model": "resnet9", "width": 4, "batch_size": 50, "eval_every": 1,
        "warmup_epochs": 0.0, "lr": 0.05, "epochs": 3, "logit_scales": [0.125, 1.0], "sigma_ws": [0.5, 2.0],
        "seeds": [0],
    },
    "09_adaptive_lr": {
        **_SMOKE_RUN, **_SMOKE_DATA, "model": "resnet9", "width": 4, "logit_scale": None, "batch_size": 50,
        "epochs": 3, "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": [0.5, 2.0], "seeds": [0],
        "optimizers": ["adam", "adamw", "muon"], "lrs": [0.005, 0.02], "weight_decays": [0.0, 0.05, 0.0],
        "aux_lrs": [0.001, 0.001, 0.005],
    },
    # the phase diagram's page at a 3 x 3 grid (the cpu and paper presets use 5 x 5)
    "10_phase_diagram": {
        **_SMOKE_RUN, **_SMOKE_DATA, "model": "resnet9", "width": 4, "logit_scale": None, "batch_size": 50,
        "epochs": 3, "eval_every": 1, "warmup_epochs": 0.0, "schedule": "step", "schedule_milestones": [0.8, 0.9],
        "schedule_gamma": 0.1, "sigma_ws": [0.5, 2.0], "seeds": [0], "lrs": [0.02, 0.05, 0.1],
        "weight_decays": [0.0, 0.005, 0.02], "extra_cells": [{"lrs": [0.02], "weight_decays": [0.05]}],
    },
    "99_reproduction": {},
}

# --- cpu: a reduced-scale reproduction for a 2-core CPU, about 25 core-hours for all notebooks (estimated) -----
# Every run of this preset comes from one clean commit, run from a separate git worktree (see book/reproduce.md).
_CPU_RUN = {"executor": "processes", "workers": 2, "num_threads": 1}
_CPU_DATA = {
    "data": None, "image_size": 32, "train_size": 5000, "val_size": 2000, "test_size": 2000,
    "train_eval_size": 1000, "augment": False,
}
#: The sigma_w grid of the cpu preset: the paper's range [0.1, 2.5] in roughly equal ratios (x3).
_CPU_SIGMAS = [0.1, 0.3, 0.9, 2.5]
_CPU_SEEDS = [0, 1, 2]
#: Five seeds where the verdicts need them (seeds 3 and 4 trained later from the same frozen commit as 0-2): 01, which
#: decides C1 and C2; 05, whose C6 was inconclusive at three (the ledger asked for 5).
_CPU_FIVE_SEEDS = [0, 1, 2, 3, 4]
#: Ten seeds for 03 (seeds 5-9 trained later from the same frozen commit): its "larger lr" lever of C4 was
#: inconclusive at three seeds (the ledger asked for 4), its "L2" lever at five (the ledger asked for 10).
_CPU_TEN_SEEDS = list(range(10))
#: ResNet-9's logit factor for this preset, chosen by 08_calibration (plain SGD does not interpolate at large
#: sigma_w within the budget with the architecture's own 0.125).
_CPU_LOGIT_SCALE = 1.0
_CPU_NET = {"model": "resnet9", "width": 8, "logit_scale": _CPU_LOGIT_SCALE, "batch_size": 64, "eval_every": 2,
            "warmup_epochs": 1.0}
_CPU_01 = {
    **_CPU_RUN, **_CPU_DATA, **_CPU_NET, "epochs": 40, "sigma_ws": _CPU_SIGMAS, "seeds": _CPU_FIVE_SEEDS,
    "optimizers": ["sgd", "sgd_momentum", "adam", "adamw", "muon"],
    "lrs": [0.02, 0.002, 0.008, 0.008, 0.02],
    "weight_decays": [0.0, 0.0, 0.0, 0.05, 0.0],
    "aux_lrs": [0.001, 0.001, 0.001, 0.001, 0.008],
}
_CPU_03 = {
    **_CPU_RUN, **_CPU_DATA, **_CPU_NET, "epochs": 40, "schedule": "step", "schedule_milestones": [0.8, 0.9],
    "schedule_gamma": 0.1, "sigma_ws": [0.1, 2.5], "seeds": _CPU_TEN_SEEDS, "lrs": [0.02, 0.1],
    "weight_decays": [0.0, 0.01],
}
_CPU = {
    "01_optimizers": _CPU_01,
    "02_long_training": {
        **_CPU_RUN, **_CPU_DATA, **_CPU_NET, "lr": 0.02, "epochs": 160, "sigma_ws": [0.1, 2.5], "seeds": _CPU_SEEDS,
        "horizons": [10, 20, 40, 80, 160], "reference_horizon": 40, "checkpoint_every": 10,
    },
    "03_lr_and_l2": _CPU_03,
    # A grid of two lengths, so that C5 compares batch sizes that all interpolate both ways: every pair meets at
    # equal epochs, and b meets 4b at equal steps (b at 30 epochs, 4b at 123: 9,360 and 9,594 steps for 16 and 64).
    # At equal steps alone (2,340), b = 16 got 8 epochs and did not interpolate (59-76 % train accuracy).
    "04_batch_size": {
        **_CPU_RUN, **_CPU_DATA, **{k: v for k, v in _CPU_NET.items() if k != "batch_size"}, "lr": 0.02,
        "steps": None, "epochs_grid": [30, 123], "sigma_ws": [0.1, 2.5], "seeds": _CPU_SEEDS,
        "batch_sizes": [16, 64, 256],
    },
    "05_depth": {
        **_CPU_RUN, **_CPU_DATA, "image_size": 16, "train_size": 2000, "val_size": 1000, "test_size": 1000,
        "train_eval_size": 1000, "models": ["resnet9", "resnet20", "resnet56", "resnet110"], "widths": [8, 8, 8, 8],
        "logit_scale": _CPU_LOGIT_SCALE, "batch_size": 64, "lr": 0.02, "epochs": 40, "eval_every": 2,
        "warmup_epochs": 1.0, "sigma_ws": [0.1, 0.9, 2.5], "seeds": _CPU_FIVE_SEEDS,
    },
    "06_norms": {},
    "07_clocks": {},
    "08_calibration": {
        **_CPU_RUN, **_CPU_DATA, "model": "resnet9", "width": 8, "batch_size": 64, "eval_every": 2,
        "warmup_epochs": 1.0, "lr": 0.02, "epochs": 50, "logit_scales": [0.125, 1.0], "sigma_ws": [0.1, 2.5],
        "seeds": _CPU_SEEDS,
    },
    # 01's adaptive optimizers at 2.5x and 6.25x their lr and at each other's: lr 0.008 and 0.02 are 01's own
    # (their runs are 01's), 0.05 is new for all three.
    "09_adaptive_lr": {
        **{k: v for k, v in _CPU_01.items() if k not in ("optimizers", "lrs", "weight_decays", "aux_lrs", "sigma_ws")},
        "seeds": _CPU_SEEDS, "sigma_ws": [0.1, 2.5], "optimizers": ["adam", "adamw", "muon"], "lrs": [0.008, 0.02, 0.05],
        "weight_decays": [0.0, 0.05, 0.0], "aux_lrs": [0.001, 0.001, 0.008],
    },
    # 03's sweep on a 5 x 5 grid, log-spaced, that holds 03's four cells: the clocks' predicted boundary
    # T_L2 = ln(|W0| / |W*|) (T5) runs diagonally through it (notebooks/10_phase_diagram.py says how it was chosen);
    # beside it, 8 cells of stronger decay at the two smallest learning rates, where x crosses 0 at low T_SGD (so the
    # L2 clock can be told from the noise clock), at five seeds (the grid's own cells are at three until their
    # seeds 3 and 4 are trained).
    "10_phase_diagram": {
        **_CPU_03, "lrs": [0.02, 0.03, 0.045, 0.067, 0.1], "weight_decays": [0.0, 0.0025, 0.005, 0.01, 0.02],
        "extra_cells": [{"lrs": [0.02, 0.03], "weight_decays": [0.03, 0.045, 0.07, 0.1], "seeds": _CPU_FIVE_SEEDS}],
        "seeds": _CPU_SEEDS,
    },
    "99_reproduction": {},
}

# --- paper: the paper's protocol as far as it is known; a GPU job ---------------------------------
_PAPER_RUN = {"executor": "serial", "workers": None, "num_threads": None}
_PAPER_DATA = {
    "data": None, "image_size": 32, "train_size": None, "val_size": 5000, "test_size": None,
    "train_eval_size": 5000, "augment": False,
}
_PAPER_SIGMAS = [0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5]
#: ResNet-9's logit factor at paper scale: the cpu calibration's choice (08_calibration), not yet checked at
#: full scale.
_PAPER_LOGIT_SCALE = 1.0
_PAPER_01 = {
    **_PAPER_RUN, **_PAPER_DATA, "model": "resnet9", "width": 64, "logit_scale": _PAPER_LOGIT_SCALE,
    "batch_size": 128, "epochs": 200,
    "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": _PAPER_SIGMAS, "seeds": [0, 1, 2],
    "optimizers": ["sgd", "sgd_momentum", "adam", "adamw", "muon"],
    "lrs": [0.01, 0.001, 0.001, 0.001, 0.02],
    "weight_decays": [0.0, 0.0, 0.0, 0.05, 0.0],
    "aux_lrs": [0.001, 0.001, 0.001, 0.001, 0.001],
}
_PAPER = {
    "01_optimizers": _PAPER_01,
    "02_long_training": {
        **_PAPER_RUN, **_PAPER_DATA, "model": "resnet9", "width": 64, "logit_scale": _PAPER_LOGIT_SCALE,
        "batch_size": 128, "lr": 0.01, "epochs": 5000,
        "eval_every": 25, "warmup_epochs": 0.0, "sigma_ws": [0.1, 0.5, 1.0, 1.5, 2.5], "seeds": [0, 1],
        "horizons": [50, 100, 200, 500, 1000, 2000, 5000], "reference_horizon": 200, "checkpoint_every": 50,
    },
    "03_lr_and_l2": {
        **_PAPER_RUN, **_PAPER_DATA, "model": "resnet9", "width": 64, "logit_scale": _PAPER_LOGIT_SCALE,
        "batch_size": 128, "epochs": 200, "eval_every": 1, "warmup_epochs": 0.0, "schedule": "step", "schedule_milestones": [0.8, 0.9],
        "schedule_gamma": 0.1, "sigma_ws": _PAPER_SIGMAS, "seeds": [0, 1, 2], "lrs": [0.01, 0.05, 0.1],
        "weight_decays": [0.0, 0.0005, 0.005],
    },
    "04_batch_size": {
        **_PAPER_RUN, **_PAPER_DATA, "model": "resnet9", "width": 64, "logit_scale": _PAPER_LOGIT_SCALE, "lr": 0.01,
        "steps": None, "epochs_grid": [50, 200], "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": _PAPER_SIGMAS,
        "seeds": [0, 1, 2],
        "batch_sizes": [16, 32, 64, 128, 256],
    },
    "05_depth": {
        **_PAPER_RUN, **_PAPER_DATA, "models": ["resnet9", "resnet20", "resnet56", "resnet110"],
        "widths": [64, 16, 16, 16], "logit_scale": _PAPER_LOGIT_SCALE, "batch_size": 128, "lr": 0.01, "epochs": 200,
        "eval_every": 1, "warmup_epochs": 0.0, "sigma_ws": _PAPER_SIGMAS, "seeds": [0, 1],
    },
    "06_norms": {},
    "07_clocks": {},
    "08_calibration": {
        **_PAPER_RUN, **_PAPER_DATA, "model": "resnet9", "width": 64, "batch_size": 128, "eval_every": 1,
        "warmup_epochs": 0.0, "lr": 0.01, "epochs": 100, "logit_scales": [0.125, 1.0], "sigma_ws": [0.1, 2.5],
        "seeds": [0, 1, 2],
    },
    "09_adaptive_lr": {
        **{k: v for k, v in _PAPER_01.items() if k not in ("optimizers", "lrs", "weight_decays", "aux_lrs", "sigma_ws")},
        "sigma_ws": [0.1, 2.5], "optimizers": ["adam", "adamw", "muon"], "lrs": [0.001, 0.003, 0.02],
        "weight_decays": [0.0, 0.05, 0.0], "aux_lrs": [0.001, 0.001, 0.001],
    },
    "10_phase_diagram": {
        **_PAPER_RUN, **_PAPER_DATA, "model": "resnet9", "width": 64, "logit_scale": _PAPER_LOGIT_SCALE,
        "batch_size": 128, "epochs": 200, "eval_every": 1, "warmup_epochs": 0.0, "schedule": "step",
        "schedule_milestones": [0.8, 0.9], "schedule_gamma": 0.1, "sigma_ws": [0.1, 2.5], "seeds": [0, 1, 2],
        "lrs": [0.01, 0.018, 0.032, 0.056, 0.1], "weight_decays": [0.0, 0.0001, 0.0003, 0.001, 0.003],
        "extra_cells": [],
    },
    "99_reproduction": {},
}

# --- gpu: 01 at paper scale on one GPU within minutes (benchmarks/gpu_oneshot.py); no other experiment --------------
#: The order 01 trains its optimizers in at this preset: SGD and an adaptive optimizer first, so that a sweep stopped
#: at its deadline still measures C1 and C2.
_GPU_ORDER = ["sgd", "muon", "adam", "adamw", "sgd_momentum"]
_GPU_01 = {
    "executor": "stacked", "workers": None, "num_threads": None, **_PAPER_DATA, "model": "resnet9", "width": 64,
    "logit_scale": _PAPER_LOGIT_SCALE, "batch_size": 128, "epochs": 200, "eval_every": 1, "warmup_epochs": 1.0,
    "sigma_ws": [0.1, 0.25, 1.0, 2.5], "seeds": [0], **_rescaled(_CPU_01, 128, _GPU_ORDER),
}
#: Only 01 (the readers 00, 06, 07 and 99 read its results): the other experiments are not defined at this preset.
_GPU = {"01_optimizers": _GPU_01, "06_norms": {}, "07_clocks": {}, "99_reproduction": {}}

#: Per-preset parameter overrides, keyed by notebook name. Theory notebooks (``T*``) have none:
#: they are cheap at every preset.
NOTEBOOK_PARAMETERS: dict[str, dict[str, dict[str, Any]]] = {
    "smoke": _SMOKE,
    "cpu": _CPU,
    "gpu": _GPU,
    "paper": _PAPER,
}

#: Notebooks that read the results of other notebooks (besides their own): the runner's digest of a
#: reader should cover these results too, so that it re-executes when they change.
NOTEBOOK_READS: dict[str, tuple[str, ...]] = {
    "00_presets": ("01_optimizers", "02_long_training", "03_lr_and_l2", "04_batch_size", "05_depth", "08_calibration",
                   "09_adaptive_lr"),
    "06_norms": ("01_optimizers",),
    "09_adaptive_lr": ("01_optimizers",),  # 01's learning rates, read off its results
    "10_phase_diagram": ("03_lr_and_l2",),  # how the grid was placed: 03's equilibrium norms
    "07_clocks": ("01_optimizers", "02_long_training", "03_lr_and_l2", "04_batch_size", "05_depth"),
    "99_reproduction": ("01_optimizers", "02_long_training", "03_lr_and_l2", "04_batch_size", "05_depth",
                        "09_adaptive_lr", "10_phase_diagram"),
}
# fmt: on


def book_preset(name: str) -> str:
    """The preset the book renders notebook ``name`` at."""
    return BOOK_PRESET_BY_NOTEBOOK.get(name, BOOK_PRESET)


def check_preset(preset: str) -> str:
    """Return ``preset`` if it is known, else raise ``ValueError`` naming the allowed presets."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; allowed presets: {', '.join(PRESETS)}")
    return preset


def notebook_parameters(preset: str, name: str) -> dict[str, Any]:
    """The parameter overrides of notebook ``name`` under ``preset`` (a fresh copy; may be empty).

    >>> notebook_parameters("smoke", "T1_scale_invariance")
    {}
    """
    check_preset(preset)
    return copy.deepcopy(NOTEBOOK_PARAMETERS.get(preset, {}).get(name, {}))


def resolve_parameters(name: str, preset: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of experiment notebook ``name`` at ``preset``, each replaced by its value in ``given`` unless
    that is None.

    An experiment notebook's ``parameters`` cell declares every parameter as None ("the preset's value"): the values
    live here, once. A reader (or papermill, or ``initmem experiments -p``) sets some; the notebook passes its
    ``globals()`` as ``given`` and gets the complete set back. Names the preset does not define are ignored.

    >>> resolve_parameters("01_optimizers", "smoke", {"seeds": [0, 1], "width": None})["seeds"]
    [0, 1]
    """
    values = notebook_parameters(preset, name)
    if not values:
        defined = [n for n, v in NOTEBOOK_PARAMETERS[preset].items() if v]
        elsewhere = [p for p in PRESETS if NOTEBOOK_PARAMETERS[p].get(name)]
        raise ValueError(
            f"preset: {name} is not defined at preset {preset!r} (it defines {', '.join(defined)}); "
            f"presets that define it: {', '.join(elsewhere) or 'none'}"
        )
    values.update({key: copy.deepcopy(given[key]) for key in values if given.get(key) is not None})
    values.update(zipped_defaults(name, preset, given))
    return values


def zipped_defaults(name: str, preset: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The zipped parameters of experiment ``name`` (:data:`initmem.study.registry.ZIPPED`) that ``given`` leaves
    unset (missing or None) while it sets the list they follow: each entry the preset's value for that configuration,
    so that ``-p optimizers "[sgd, adam]"`` alone trains each optimizer at its own learning rate, decay and aux lr.

    >>> zipped_defaults("01_optimizers", "smoke", {"optimizers": ["adam", "sgd"], "lrs": None})
    {'lrs': [0.005, 0.05], 'weight_decays': [0.0, 0.0], 'aux_lrs': [0.001, 0.001]}

    Raises:
        ValueError: a configuration the preset gives no value for, e.g. ``optimizers: 'lion' has no entry in lrs at
            preset 'smoke' (it has sgd, adam, ...); give lrs too, one entry per entry of optimizers``.
    """
    found: dict[str, Any] = {}
    for key, followers in ZIPPED.get(name, {}).items():
        chosen = given.get(key)
        if not isinstance(chosen, (list, tuple)):  # unset, or not a list (the sweep's validation says so)
            continue
        for follower in followers:
            if given.get(follower) is None:
                found[follower] = [_zipped_entry(name, preset, key, follower, entry) for entry in chosen]
    return found


def _zipped_entry(name: str, preset: str, key: str, follower: str, entry: Any) -> Any:
    """``follower``'s entry for configuration ``entry`` of ``key`` at ``preset``: from experiment ``name``'s own lists
    there, else from those of another experiment that zips the same two (09's optimizers take their decays from 01's
    where 09 lacks one)."""
    sources = [name, *(other for other, zipped in ZIPPED.items() if other != name and follower in zipped.get(key, ()))]
    known: list[Any] = []
    for source in sources:
        values = NOTEBOOK_PARAMETERS[preset].get(source, {})
        keys, entries = list(values.get(key) or []), list(values.get(follower) or [])
        if entry in keys and len(keys) == len(entries):
            return copy.deepcopy(entries[keys.index(entry)])
        known += [k for k in keys if k not in known]
    raise ValueError(
        f"{key}: {shown(entry)} has no entry in {follower} at preset {preset!r} (it has "
        f"{', '.join(map(str, known)) or 'none'}); give {follower} too, one entry per entry of {key}"
    )

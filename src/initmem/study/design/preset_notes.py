"""The choices the paper does not state, per preset, and why each was made: the Setup chapter's table.

:data:`PRESET_NOTES` holds one :class:`~initmem.study.experiments.Note` per choice: the preset parameters that hold it and the reason; the
choices of one experiment are in its module (:mod:`initmem.study.experiments`), those of several here.
:func:`notes_table` renders them with every value read from :mod:`initmem.study.design.presets`, so the table shows what
runs and cannot drift from it; only the reasons are prose.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import experiments
from ..experiments import TRAINED, Note, in_group, judged_by
from .layout import PRESETS
from .presets import NOTEBOOK_PARAMETERS, check_preset

__all__ = ["PRESET_NOTES", "notes_table", "scale_comparison"]


def _numbered(*numbers: str) -> tuple[str, ...]:
    """The experiments whose names begin with ``numbers`` (``"01"``), as the Setup chapter's table names them."""
    return tuple(name for name in experiments.names() if name[:2] in numbers)


#: The choices that concern several experiments, per preset (each experiment's own are in its module).
_SHARED: dict[str, list[Note]] = {
    "smoke": [
        Note(
            "data",
            ("data", "train_size", "val_size", "test_size", "image_size"),
            "no dataset needed: the preset checks that every notebook runs end to end in seconds",
        ),
        Note("network", ("model", "width", "models", "widths"), "the smallest networks that exercise every code path"),
        Note(
            "budget",
            ("epochs", "seeds", "sigma_ws"),
            "seconds per run; the numbers mean nothing and no verdict should be read from them",
        ),
    ],
    "cpu": [
        Note(
            "provenance",
            (),
            "training is chaotic: memory layout, thread count or code changes move a seed's "
            "accuracy by points, so the preset's runs are produced by one commit, run from a separate git worktree "
            "while work goes on (the commit is in every run file)",
            notebooks=in_group(TRAINED),
            fact="every run from one clean commit",
        ),
        Note(
            "network",
            ("model", "width"),
            "width 64 is a GPU job; width 8 (~0.1 M parameters) still fits 5,000 images (how many runs of each "
            "optimizer reach the interpolation threshold is counted below this list)",
        ),
        Note(
            "logit_scale",
            ("logit_scale",),
            "ResNet-9's own factor is 0.125 (the CIFAR ResNets': 1). Chosen by the calibration, 08 (committed runs): the "
            "factor multiplies every gradient, and with 0.125 plain SGD at the headline learning rate does not "
            "interpolate at sigma_w 2.5 within 50 epochs, while with 1 it does at both ends of the grid. C1's premise "
            "needs interpolation; adaptive optimizers normalise the gradient's scale and barely feel the factor",
        ),
        Note(
            "image_size",
            ("image_size",),
            "CIFAR-10's own size; 05 measures interpolation only and keeps 16 px for its deep networks",
        ),
        Note(
            "train_size",
            ("train_size",),
            "class-balanced subsets; the budget is counted in steps (clocks), not in "
            "images; 5,000 images still take tens of epochs to interpolate",
        ),
        Note(
            "val_size / test_size / train_eval_size",
            ("val_size", "test_size", "train_eval_size"),
            "2,000 test images give a standard error of about 1 pp per accuracy, below the spreads of interest; "
            "2,000 validation images make the best-validation-loss selection stable",
        ),
        Note(
            "eval_every",
            ("eval_every",),
            "20-80 measurements per run keep evaluation a small part of the cost and "
            "still resolve early selected checkpoints",
        ),
        Note(
            "augment",
            ("augment",),
            "off, as in the paper preset: the paper's summary mentions none; without it the network can fit the "
            "5,000 images, so the spread of runs that interpolate is memory, not plain undertraining (not every run "
            "does: counted below this list; a claim that presupposes interpolation checks it). The price: "
            "validation losses bottom out early, so every table shows the final predictor beside the selected one",
        ),
        Note(
            "batch_size", ("batch_size", "batch_sizes"), "twice the steps per image at the same cost (the paper: 128)"
        ),
        Note(
            "epochs (01, 03)",
            ("epochs",),
            "the calibration's table (08) gives the epoch at which plain SGD interpolated at "
            "sigma_w 2.5 (the slowest end); 40 epochs (3,120 steps) leave a margin above it for the other seeds. "
            "Adam/AdamW at 8e-3 then reach T_adapt = 3,120 x 0.008 = 25, Muon 62",
            notebooks=_numbered("01", "03"),
        ),
        Note(
            "warmup_epochs",
            ("warmup_epochs",),
            "a short linear warm-up keeps the first steps of small-sigma_w runs "
            "(effective lr eta/sigma_w^2) stable; it does not depend on the run length, so 02's horizons remain "
            "exact prefixes",
        ),
        Note(
            "sigma_w grid",
            ("sigma_ws",),
            "the paper's range 0.1-2.5 in steps of about x3; 02-04 keep the two ends, "
            "which bound the spread where accuracy falls monotonically with sigma_w (01 shows whether it does)",
        ),
        Note(
            "seeds",
            ("seeds",),
            "three seeds give a Student-t interval for every effect (t_0.975,2 = 4.3, so "
            "intervals are still wide); more where a verdict needed them: five for 01 (C1, C2) and 05 (C6, "
            "undecided at three), ten for 03 (C4: its larger-lr lever was undecided at three, its L2 lever at five). "
            "A seed sets the initial directions and the data order (data_seed = seed)",
        ),
        Note(
            "executor",
            ("executor", "workers", "num_threads"),
            "on 2 cores two single-thread runs beat one "
            "two-thread run; the thread count is part of every run's hash, so a run with another count is another "
            "run",
        ),
    ],
    "gpu": [
        Note(
            "data and network",
            ("data", "train_size", "val_size", "test_size", "image_size", "augment", "model", "width", "batch_size"),
            "the paper preset's: the full training set minus 5,000 validation images, "
            "ResNet-9 at width 64, batch 128, no augmentation",
        ),
        Note(
            "learning rates",
            ("optimizers", "lrs", "weight_decays", "aux_lrs"),
            "the cpu preset's rates rescaled "
            "from its batch 64 to 128: SGD and SGD+momentum linearly with the batch size, which keeps SGD's "
            "per-epoch clock (n/b)(1/b) lr^2 and its noise scale lr/b; the adaptive optimizers (Adam, AdamW, Muon and "
            "its AdamW group) keep theirs (their step does not scale with the gradient's noise); the decay strengths "
            "are the cpu preset's. SGD and Muon train first, so a sweep cut short at its deadline still measures C1 "
            "and C2",
        ),
        Note(
            "epochs",
            ("epochs", "warmup_epochs"),
            "at most the paper preset's 200: benchmarks/gpu_oneshot.py trains "
            "as many as its measured throughput fits into its time budget (initmem.sweeps.budget), and every run "
            "file records how many; the warm-up is the cpu preset's",
        ),
        Note(
            "sigma_w grid and seeds",
            ("sigma_ws", "seeds"),
            "both ends of the paper's [0.1, 2.5] and two values "
            "between, one seed: one stack per optimizer in minutes. With one seed there is no interval, so every "
            "ledger row is inconclusive and the ledger's GPU column shows the raw spreads",
        ),
        Note(
            "executor",
            ("executor",),
            "the sigma_w runs of an optimizer train as one vmapped model (Muon one at a "
            "time); the one-shot script trains them one by one where stacking was slower or its parity check failed",
        ),
    ],
    "paper": [
        Note(
            "data",
            ("data", "train_size", "val_size", "test_size", "image_size", "augment"),
            "the paper's split "
            "size is not stated; 5,000 validation images is the usual hold-out; the summary mentions no augmentation",
        ),
        Note(
            "epochs",
            ("epochs",),
            "not stated; 200 epochs = 70,000 steps at b = 128, which puts Adam at lr 1e-3 at "
            "T_adapt = 70, the order the paper's Adam runs must reach",
        ),
        Note(
            "logit_scale",
            ("logit_scale",),
            "the cpu calibration's choice (08), not yet checked at full scale",
        ),
        Note("seeds", ("seeds",), "not stated; three seeds give intervals for the headline spreads"),
        Note(
            "executor", ("executor",), "use executor 'dask' or 'processes' to spread runs over several GPUs or machines"
        ),
    ],
}


#: Every choice the paper does not state, per preset, with its reason (the book's Setup chapter renders
#: :func:`notes_table`, which reads each value from the preset): the shared ones, then each experiment module's
#: :attr:`~initmem.study.experiments.Experiment.notes` (a note naming no notebook concerns its own experiment).
PRESET_NOTES: dict[str, list[Note]] = {
    preset: [
        *_SHARED.get(preset, []),
        *(
            dataclasses.replace(note, notebooks=note.notebooks or (e.name,))
            for e in experiments.DISCOVERED
            for note in e.notes.get(preset, ())
        ),
    ]
    for preset in PRESETS
}


def _value_text(value: Any) -> str:
    """A preset value as the Setup chapter prints it: ``[0.1, 0.3]``, ``None``, ``false``, ``sgd``."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value_text(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _short(name: str) -> str:
    """``NN_name`` -> ``NN``; other notebook names unchanged."""
    return name[:2] if name[:2].isdigit() else name


def notes_table(preset: str) -> list[dict[str, str]]:
    """The rows ``{"setting", "value", "notebooks", "reason"}`` of :data:`PRESET_NOTES` at ``preset``, each value
    read from the preset: per parameter, ``name: value``, followed by the notebooks in parentheses where they differ
    (``epochs: 40 (01, 03); 160 (02)``).

    Raises:
        ValueError: an unknown preset, or a note naming a parameter that none of its notebooks defines.
    """
    check_preset(preset)
    defined = NOTEBOOK_PARAMETERS[preset]
    rows = []
    for note in PRESET_NOTES[preset]:
        if not note.parameters:
            rows.append(
                {
                    "setting": note.setting,
                    "value": note.fact,
                    "reason": note.reason,
                    "notebooks": ", ".join(_short(n) for n in note.notebooks if defined.get(n)) or "all",
                }
            )
            continue
        names = note.notebooks or tuple(n for n, p in defined.items() if any(q in p for q in note.parameters))
        parts, used = [], set()
        for parameter in note.parameters:
            by_value: dict[str, list[str]] = {}
            for name in names:
                if parameter in defined.get(name, {}):
                    by_value.setdefault(_value_text(defined[name][parameter]), []).append(_short(name))
                    used.add(name)
            if len(by_value) == 1:
                parts.append(f"{parameter}: {next(iter(by_value))}")
            elif by_value:
                parts.append(f"{parameter}: " + "; ".join(f"{v} ({', '.join(n)})" for v, n in by_value.items()))
        if not parts:
            raise ValueError(
                f"PRESET_NOTES[{preset!r}]: {note.setting!r} names {', '.join(note.parameters)}, which "
                f"no notebook of the preset defines"
            )
        rows.append(
            {
                "setting": note.setting,
                "value": "; ".join(parts),
                "reason": note.reason,
                "notebooks": ", ".join(_short(n) for n in names if n in used),
            }
        )
    return rows


def scale_comparison(preset: str = "cpu", against: str = "paper", name: str | None = None) -> str:
    """One line saying how ``preset`` is smaller than ``against`` for experiment ``name`` (None: the one that judges
    C1, the headline), read from both presets:
    ``"width 8 vs 64, 5,000 vs 45,000 training images, 40 vs 200 epochs, batch 64 vs 128"`` (a ``train_size`` of
    None is CIFAR-10's 50,000 training images less the validation split)."""
    name = name or judged_by("C1")
    a, b = (NOTEBOOK_PARAMETERS[check_preset(p)][name] for p in (preset, against))

    def images(p: dict[str, Any]) -> int:
        return p["train_size"] or 50_000 - p["val_size"]

    return (
        f"width {a['width']} vs {b['width']}, {images(a):,} vs {images(b):,} training images, "
        f"{a['epochs']} vs {b['epochs']} epochs, batch {a['batch_size']} vs {b['batch_size']}"
    )

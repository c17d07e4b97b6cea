"""Words for the names in the results: optimizers, networks, recorded variables, swept fields, clocks.

The figures label axes and legends with words and units (``test accuracy (%)``, ``learning rate η``), never with
the variable names of the Datasets (``test_acc``, ``lr``); ``tests/test_plots.py`` checks that no raw name is drawn.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

import xarray as xr

from ....run import optimizers

__all__ = [
    "VAR_LABELS",
    "PREDICTORS",
    "SPREAD_VARS",
    "SPREAD_LABEL",
    "FIELD_LABELS",
    "FIELD_SYMBOLS",
    "CLOCK_FORMULAS",
    "HE_NOTE",
    "label",
    "var_label",
    "field_label",
    "var_title",
    "hue_label",
    "wrap_words",
]

_MODEL_LABELS = {"resnet9": "ResNet-9"}
#: Axis labels of the recorded variables (with units).
VAR_LABELS = {
    "selected_test_acc": "selected test accuracy (%)",
    "final_test_acc": "final-epoch test accuracy (%)",
    "final_train_acc": "final training accuracy (%)",
    "tau_interp": r"$\tau_{\mathrm{interp}}$ (epoch)",
    "test_acc": "test accuracy (%)",
    "train_acc": "training accuracy (%)",
    "val_acc": "validation accuracy (%)",
    "val_loss": "validation loss",
    "weight_norm": r"kernel norm $\|W\|_F$",
    "dist_from_init": r"$\|W - W_0\|_F$",
}
#: The two predictors whose test accuracy the spreads are of.
PREDICTORS = {"selected_test_acc": "validation-selected", "final_test_acc": "final epoch"}
SPREAD_VARS = tuple(PREDICTORS)
#: The y label of every spread.
SPREAD_LABEL = r"cross-fitted spread over $\sigma_w$ (pp)"
#: Axis labels of the swept fields and the clocks, and the symbols that name their values in a legend.
FIELD_LABELS = {
    "sigma_w": r"$\sigma_w$",
    "lr": r"learning rate $\eta$",
    "weight_decay": r"L2 strength $\lambda$",
    "batch_size": "batch size $b$",
    "logit_scale": "logit factor",
    "epoch": "epoch",
    "horizon": "training horizon $T$ (epochs)",
    "T_SGD": r"$T_{\mathrm{SGD}}$",
    "T_L2": r"$T_{\mathrm{L2}}$",
    "T_adapt": r"$T_{\mathrm{adapt}}$",
}
FIELD_SYMBOLS = {
    "sigma_w": r"$\sigma_w$",
    "lr": r"$\eta$",
    "weight_decay": r"$\lambda$",
    "batch_size": "$b$",
    "logit_scale": "logit factor",
}
CLOCK_FORMULAS = {
    "T_SGD": r"$T_{\mathrm{SGD}} = \frac{1}{b}\sum_k \eta_k^2$",
    "T_L2": r"$T_{\mathrm{L2}} = \lambda\sum_k \eta_k$",
    "T_adapt": r"$T_{\mathrm{adapt}} = \sum_k \eta_k$",
}
#: The caption's note on the dashed line of :func:`~initmem.study.presentation.plots.style.sigma_axis`.
HE_NOTE = r"dashed: He initialization ($\sigma_w = \sqrt{2}$)"


def label(name: Any) -> str:
    """A readable label for an optimizer (its record's, :func:`initmem.run.optimizers.label`) or model name
    (unchanged otherwise)."""
    text = str(name)
    if text in _MODEL_LABELS:
        return _MODEL_LABELS[text]
    if text.startswith("resnet"):
        return "ResNet-" + text.removeprefix("resnet")
    return optimizers.label(text)


def var_label(var: str) -> str:
    """The axis label of recorded variable ``var``, with its unit."""
    return VAR_LABELS.get(var, var.replace("_", " "))


def field_label(name: str) -> str:
    """The axis label of a swept field or a clock."""
    return FIELD_LABELS.get(name, name.replace("_", " "))


def var_title(var: str) -> str:
    """``var``'s label without its unit, capitalised: a title ("Test accuracy")."""
    text = re.sub(r" \([^()]*\)$", "", var_label(var))
    return text[:1].upper() + text[1:]


def hue_label(hue: str | None, value: Any, ds: xr.Dataset | None = None) -> str:
    """The legend (or panel title) of one value of the field ``hue``: ``SGD (η = 0.02)``, ``b = 64``, ``ResNet-20``."""
    if hue is None:
        return ""
    if hue == "optimizer":
        text = label(value)
        if ds is not None and "lr" in ds.coords and ds["lr"].dims == ("optimizer",):
            text += rf" ($\eta$ = {float(ds['lr'].sel(optimizer=value)):g})"
        return text
    if hue == "model":
        return label(value)
    symbol = FIELD_SYMBOLS.get(hue, hue.replace("_", " "))
    return f"{symbol} = {value:g}" if isinstance(value, (int, float)) else f"{symbol} = {value}"


def wrap_words(text: str, chars: int) -> str:
    """``text`` in lines of at most ``chars`` characters (a longer word keeps its line), never broken inside
    ``$math$``."""
    nbsp = "\u00a0"
    protected = "$".join(part.replace(" ", nbsp) if i % 2 else part for i, part in enumerate(text.split("$")))
    lines = textwrap.wrap(protected, max(1, chars), break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines).replace(nbsp, " ")

"""06: the weight norms of 01's runs against their accuracy; it trains nothing."""

from __future__ import annotations

from . import Experiment

__all__ = ["EXPERIMENT"]

EXPERIMENT = Experiment(
    name="06_norms",
    presets={preset: {} for preset in ("smoke", "cpu", "gpu", "paper")},
    glue=("e06_fig_norm_scatter", "e06_table", "e06_slope_sgd", "e06_slope_adam"),
    reads_claims=("C7",),  # 01's runs, whose norms decide C7
    book_preset="cpu",
)

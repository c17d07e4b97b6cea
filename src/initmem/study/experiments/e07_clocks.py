"""07: the clock collapse over the results of every experiment of the clocks group; it trains nothing."""

from __future__ import annotations

from . import CLOCKS, Experiment

__all__ = ["EXPERIMENT"]

EXPERIMENT = Experiment(
    name="07_clocks",
    presets={preset: {} for preset in ("smoke", "cpu", "gpu", "paper")},
    glue=("e07_fig_spread_vs_clocks", "e07_collapse", "e07_table", "e07_clocks_table"),
    reads_groups=(CLOCKS,),
    book_preset="cpu",
)

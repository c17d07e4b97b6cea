"""99: the ledger, every claim's verdict, over the results of the clocks and the ledger groups."""

from __future__ import annotations

from . import CLOCKS, LEDGER, Experiment

__all__ = ["EXPERIMENT"]

EXPERIMENT = Experiment(
    name="99_reproduction",
    presets={preset: {} for preset in ("smoke", "cpu", "gpu", "paper")},
    glue=(
        "r_table",
        "r_rules",
        "r_definitions",
        "r_glance",
        "r_answer",
        "r_band",
        "r_forest",
        "r_c1_verdict",
        "r_c7_verdict",
        "r_b1_verdict",
    ),
    reads_groups=(CLOCKS, LEDGER),
    book_preset="cpu",
)

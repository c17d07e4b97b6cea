"""00: the Setup chapter: every preset's values, their reasons and what the trained experiments cost."""

from __future__ import annotations

from . import TRAINED, Experiment

__all__ = ["EXPERIMENT"]

EXPERIMENT = Experiment(
    name="00_presets",
    reads_groups=(TRAINED,),
    book_preset="cpu",
    glue=("p00_paper_cost", "p00_scale"),  # pasted by the landing page, the Reproduce chapter and 99
)

"""B1's judge (beyond the paper): does the L2 clock move the memory, and does half of it go where ``T_L2`` reaches
``ln(|W0|/|W*|)``? The phase diagram's cells (:func:`initmem.study.verdicts.phase.cell_table`) are read by the tests of
:mod:`initmem.study.verdicts.boundary`; :func:`judge_b1` turns them into the ledger's row. :data:`initmem.study.verdicts.judges.RULES`
lists it with the paper's claims.
"""

from __future__ import annotations

import math
from typing import Any

import xarray as xr

from ..statistics.nulls import NullTest
from ..statistics.stats import Interval
from . import rules
from .ledger import Row, scale_text
from .rules import IN_DIRECTION, IN_SIZE, INCONCLUSIVE, NOT_REPRODUCED, PREMISE_NOT_MET, SIZE_CONTRADICTED, Verdict

__all__ = ["judge_b1"]


def _alternatives(ds: xr.Dataset, table: Any) -> str:
    """x0 under other defensible choices than the rule's (the rule's own is not among them), as text."""
    from .boundary import x0_alternatives

    decays = table.index.get_level_values("weight_decay")
    at_selection = ds["selected_T_L2"].mean(["sigma_w", "seed"]).to_series().reindex(table.index)
    rates = sorted(set(table.index.get_level_values("lr")))[:2]
    choices = {
        "cells with decay only": table[decays > 0],
        f"lr {' and '.join(f'{lr:g}' for lr in rates)} only (the smallest T_SGD)": table[
            table.index.get_level_values("lr").isin(rates)
        ],
        "the final predictor": table.assign(selected_gap=table["final_gap"]),
        "T_L2 at the selected checkpoint": table.assign(x=at_selection - table["log_ratio"]),
    }
    return ", ".join(f"{name} {x0:.2f}" for name, x0 in x0_alternatives(choices).items())


def judge_b1(ds: xr.Dataset) -> list[Row]:
    """B1's row from the phase diagram's results ``ds`` (chapter 10), by the rule printed in
    :data:`initmem.study.verdicts.ledger.RULES`: premise (the gap of the least-forgetting cell at least the margin), then the
    L2 clock's trend within learning rates, then where x0's profile interval (all three parameters fitted) lies
    against :data:`~initmem.study.verdicts.rules.BOUNDARY_BAND`."""
    from .boundary import fit_boundary, lack_of_fit, memory_to_forget, stratified_trend  # imported by B1's page only
    from .phase import cell_table
    from .rules import BOUNDARY_BAND

    table = cell_table(ds)
    l2 = stratified_trend(table, "weight_decay", "lr")
    across = stratified_trend(table, "lr", "weight_decay")
    plateau, (lr0, _) = memory_to_forget(table)
    fit = fit_boundary(table)
    x0 = fit.midpoint
    band = f"[{BOUNDARY_BAND[0]:g}, {BOUNDARY_BAND[1]:g}]"
    where = (
        f"the L2 clock: {l2.format()}; across learning rates at fixed lambda (both clocks move): "
        f"{across.format()}; memory to forget {plateau:.1f} pp (the gap at lr {lr0:g}, lambda 0); "
        f"x0 = {x0.estimate:.2f} [{x0.low:.2f}, {x0.high:.2f}] (profile interval over {fit.cells} cells, plateau "
        f"{fit.plateau:.1f} pp and width {fit.width:.2f} fitted; lack of fit {lack_of_fit(fit, table).format()}); "
        f"x0 under other choices: {_alternatives(ds, table) if fit.cells else 'none'}"
    )
    if not (math.isfinite(plateau) and plateau >= rules.MARGIN_PP):
        verdict = Verdict(
            PREMISE_NOT_MET,
            f"premise not met: no memory to forget (the gap without decay at the smallest lr is {plateau:.1f} pp, "
            f"below the margin {rules.MARGIN_PP:g}); a smaller learning rate would meet it",
        )
    elif l2.strata == 0:
        verdict = Verdict(INCONCLUSIVE, "no learning rate with 3 cells: the L2 clock cannot be tested")
    elif l2.p_greater < rules.ALPHA:
        verdict = Verdict(NOT_REPRODUCED, f"the memory rises with lambda at fixed lr ({l2.format()})")
    elif not l2.p_less < rules.ALPHA:
        verdict = Verdict(
            INCONCLUSIVE, f"the fall of the memory with lambda at fixed lr is not beyond the null ({l2.format()})"
        )
    else:
        falls = f"the memory falls with lambda at fixed lr (p = {l2.p_less:.2g})"
        if not fit.identified:
            verdict = Verdict(
                IN_DIRECTION,
                f"{falls}; x0 is not identified: its profile interval [{x0.low:.2f}, {x0.high:.2f}] reaches the "
                "searched range",
            )
        elif BOUNDARY_BAND[0] <= x0.low and x0.high <= BOUNDARY_BAND[1]:
            verdict = Verdict(IN_SIZE, f"{falls} and x0's interval [{x0.low:.2f}, {x0.high:.2f}] lies inside {band}")
        elif x0.high < BOUNDARY_BAND[0] or x0.low > BOUNDARY_BAND[1]:
            below = x0.high < BOUNDARY_BAND[0]
            verdict = Verdict(
                SIZE_CONTRADICTED,
                f"{falls}, but x0's interval [{x0.low:.2f}, {x0.high:.2f}] lies wholly "
                f"{'below' if below else 'above'} the band {band}: half the memory is gone "
                f"{'before' if below else 'only after'} T_L2 reaches ln(|W0|/|W*|)",
            )
        else:
            verdict = Verdict(
                IN_DIRECTION, f"{falls}; x0's interval [{x0.low:.2f}, {x0.high:.2f}] straddles an edge of {band}"
            )
    return [
        Row(
            "B1",
            "",
            verdict,
            Interval(l2.rho, math.nan, math.nan, l2.cells, "mean Spearman rho within lr"),
            NullTest(l2.rho, l2.p_less, math.nan, math.nan, l2.draws, False, 1.0 / (l2.draws + 1)),
            size=x0,
            band=BOUNDARY_BAND,
            ours=where,
            scale=scale_text(ds),
            margin=math.nan,
            seeds=ds.sizes["seed"],
        )
    ]

# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   mystnb:
#     render_markdown_format: myst
# ---

# %% [markdown]
# # 07. Does each optimizer family collapse on its own clock?
#
# The paper's organising idea is that forgetting is measured by accumulated "forgetting time", not by epochs.
# Three clocks, summed over the optimisation steps $k$ with learning rate $\eta_k$, batch size $b$ and L2
# strength $\lambda$: If the idea is right, each optimizer family should **collapse on its own clock**: its spread should fall
# with that clock alone, whatever learning rate, batch size or length produced it.

# %% tags=["parameters"]
preset = "smoke"
results_dir = "results"

# %% tags=["hide-input"]
from myst_nb import glue

from initmem.book import page
from initmem.study import analysis, plots, results

plots.use_book_style()  # SVG figures, legible in the book

experiments = results.load_results(results_dir, preset)
print(f"preset {preset}: results of {', '.join(experiments) or 'no experiment'}")
table = analysis.clock_table(experiments)
source = page.source_note("07_clocks", preset, list(experiments), results_dir=results_dir)  # under every figure
glue("e07_n_configs", len(table), display=False)
glue("e07_experiments", ", ".join(name[:2] for name in experiments), display=False)

# %% tags=["hide-input"]
page.figure(plots.spread_vs_clocks(table, source=experiments), "e07_fig_spread_vs_clocks", source)

# %% [markdown]
# ## How this page measures it
#
# The three clocks, summed over the optimisation steps $k$ with learning rate $\eta_k$, batch size $b$ and L2
# strength $\lambda$:
#
# | clock | formula | mechanism |
# |---|---|---|
# | $T_{SGD}$ | $\frac1b\sum_k\eta_k^2$ | the stochastic, finite-step part of SGD (minibatch noise, discretisation) |
# | $T_{L2}$ | $\lambda\sum_k\eta_k$ | explicit norm decay pulling the kernel norms to an equilibrium |
# | $T_{adapt}$ | $\sum_k\eta_k$ | adaptive preconditioning: steps whose size does not shrink with the gradient |
#
# If the idea is right, each optimizer family should **collapse on its own clock**: the spread of plain SGD
# should be a decreasing function of $T_{SGD}$ alone, whatever learning rate, batch size or length produced it;
# that of SGD with L2 a function of $T_{L2}$; that of the adaptive optimizers a function of $T_{adapt}$. This
# notebook puts every configuration of every sweep of the preset (notebooks 01-05, whatever has been run) on
# the three clocks, once each (notebook 02 at its longest horizon only: its shorter horizons are prefixes of the same
# runs), using the clocks of the predictor whose spread is shown: at the validation-selected checkpoint. SGD with
# momentum is placed by its effective step $\eta/(1-\mu)$ (the runs record their clocks of that step), so that it
# shares plain SGD's axes.

# %% [markdown]
# ## Does each family collapse on its own clock?
#
# For each family, the Spearman rank correlation between the spread and each clock over all its configurations
# (NaN with fewer than three), and for the family's own clock a one-sided permutation p-value (the spreads shuffled
# against the clock) and a 95 % bootstrap interval over configurations. The paper's picture predicts a negative
# correlation with the family's own clock: more forgetting time, less spread. The prediction counts as **held** only
# when that correlation is negative with p < 0.05.

# %% tags=["hide-input"]
collapse = analysis.collapse_table(table)
page.table(
    collapse,
    "e07_collapse",
    [
        "own clock",
        "configurations",
        "rho(T_SGD)",
        "rho(T_L2)",
        "rho(T_adapt)",
        "p (rho < 0)",
        "rho low",
        "rho high",
        "prediction",
    ],
    labels={"p (rho < 0)": "p (rho < 0, own clock)", "rho low": "own clock: rho 95 % CI low", "rho high": "high"},
    intervals=False,
)
for family, key in (("SGD", "sgd"), ("SGD+L2", "sgd_l2"), ("adaptive", "adaptive")):
    own = analysis.FAMILY_CLOCK[family]
    glue(f"e07_rho_{key}_own", float(collapse.loc[family, f"rho({own})"]), display=False)
    glue(f"e07_n_{key}", int(collapse.loc[family, "configurations"]), display=False)
    glue(f"e07_prediction_{key}", str(collapse.loc[family, "prediction"]), display=False)

# %% [markdown]
# Over {glue:text}`e07_n_configs` configurations (experiments {glue:text}`e07_experiments`), the rank correlation
# between spread and the family's own clock is {glue:text}`e07_rho_sgd_own:.2f` for plain SGD
# ({glue:text}`e07_n_sgd` configurations, against $T_{SGD}$), {glue:text}`e07_rho_sgd_l2_own:.2f` for SGD with
# L2 ({glue:text}`e07_n_sgd_l2`, against $T_{L2}$) and {glue:text}`e07_rho_adaptive_own:.2f` for the adaptive
# optimizers ({glue:text}`e07_n_adaptive`, against $T_{adapt}$). The prediction (a negative correlation with the family's
# own clock): plain SGD {glue:text}`e07_prediction_sgd`; SGD with L2 {glue:text}`e07_prediction_sgd_l2`; adaptive
# {glue:text}`e07_prediction_adaptive`. Over a handful of configurations even a perfect rank order is not
# significant (three configurations give p = 1/6 at best), so "cannot tell" is the honest reading of a small family.
#
# Two cautions. The clocks are organising principles derived from linear and scale-invariant arguments (the
# paper says so itself), not laws with universal constants, so only the ordering within a family is tested
# here. And configurations that differ in architecture or data size (notebook 05) sit on the same axes only
# approximately.

# %% [markdown]
# ## All configurations

# %% tags=["hide-input"]
if len(table):
    page.table(
        table,
        "e07_table",
        [
            "experiment",
            "family",
            "optimizer",
            "model",
            "lr",
            "weight_decay",
            "batch_size",
            "epochs",
            "selected_spread_pp",
            "selected_ci95_low",
            "selected_ci95_high",
            "min_final_train_acc",
            "T_SGD",
            "T_L2",
            "T_adapt",
        ],
    )
else:
    glue("e07_table", table)

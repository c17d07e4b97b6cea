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
# # 06. Does the final weight norm remember the initial one?
#
# **Claim C7.** The paper finds that under SGD the **final kernel norm stays coupled
# to the initial one** (radial memory), whereas the adaptive optimizers **converge to a common norm scale**
# whatever $\sigma_w$ was.

# %% tags=["parameters"]
preset = "smoke"
results_dir = "results"

# %% tags=["hide-input"]
from myst_nb import glue

from initmem.book import page
from initmem.run import optimizers
from initmem.study.costs import results
from initmem.study.presentation.plots import figures, style
from initmem.study.statistics import analysis

style.use_book_style()  # SVG figures, legible in the book

# Notebook 01's runs at this preset (run 01 first; nothing is trained here).
ds = results.read_results(results_dir, preset, "01_optimizers", reader="06_norms")
source = page.source_note("06_norms", preset, ["01_optimizers"], results_dir=results_dir)  # under every figure

# %% tags=["remove-input"]
page.verdict_line("01_optimizers", ds, ["C7"], label="verdict-06_norms")

# %% tags=["hide-input"]
page.figure(figures.norm_scatter(ds, hue="optimizer"), "e06_fig_norm_scatter", source)

# %% [markdown]
# (verdict-06_norms)=
# ## The verdict at this preset

# %% tags=["remove-input"]
page.verdict_box("01_optimizers", ds, ["C7"])

# %% [markdown]
# ## How this page measures it
#
# Under BatchNorm the norm of a kernel does not change the function, only the effective learning
# rate of its direction (theory chapter T1). Where the norm ends up is therefore a direct record of what the
# optimizer did with the initialization.
#
# This notebook analyses the runs of notebook 01 at the same preset: it reads 01's results file and trains
# nothing (re-execute 01 with new parameters, then this notebook, to see those). It plots, per optimizer, the
# final total Frobenius norm of the kernels against the initial one on log-log axes with the identity line,
# and the distance travelled from the initialization,
# $\|W_T - W_0\|_F$, relative to the initial norm. One number summarises the coupling: the slope $s$ of
# $\log\|W_T\|$ against $\log\|W_0\|$ across $\sigma_w$ (`initmem.study.statistics.analysis.norm_coupling`): $s = 1$ means the
# final norm is proportional to the initial one, $s = 0$ a common final norm.

# %% [markdown]
# ## The coupling slope per optimizer
#
# Mean over seeds of the per-seed slope, with its 95 % interval (two or more seeds), and the ratio of the
# largest to the smallest final norm across $\sigma_w$ next to the same ratio of the initial norms.

# %% tags=["hide-input"]

table = analysis.norm_table(ds)
page.table(table, "e06_table")
for opt in dict.fromkeys([*optimizers.in_paper(), *table.index]):  # the paper's (NaN where 01 did not train) and 01's
    present = opt in table.index
    glue(f"e06_slope_{opt}", float(table.loc[opt, "slope"]) if present else float("nan"), display=False)
    glue(
        f"e06_final_ratio_{opt}", float(table.loc[opt, "final_norm_ratio"]) if present else float("nan"), display=False
    )
glue("e06_initial_ratio", float(table["initial_norm_ratio"].iloc[0]), display=False)

# %% [markdown]
# The initial norms differ by a factor {glue:text}`e06_initial_ratio:.1f` across the $\sigma_w$ grid. At the end
# of training SGD's final norms still differ by a factor {glue:text}`e06_final_ratio_sgd:.1f` (coupling slope
# {glue:text}`e06_slope_sgd:.2f`); Adam's by {glue:text}`e06_final_ratio_adam:.1f` (slope
# {glue:text}`e06_slope_adam:.2f`), AdamW's by {glue:text}`e06_final_ratio_adamw:.1f` (slope
# {glue:text}`e06_slope_adamw:.2f`) and Muon's by {glue:text}`e06_final_ratio_muon:.1f` (slope
# {glue:text}`e06_slope_muon:.2f`). The paper's SGD keeps the coupling and its adaptive optimizers lose it.
#
# Under plain SGD with BatchNorm the gradient is orthogonal to each scale-invariant kernel, so every step can
# only *grow* the norm, by $\eta^2\|\nabla L\|^2$: a kernel that starts large stays large, and its effective learning
# rate $\eta/\|W\|^2$ stays small. Adam's steps have a size set by $\eta$ rather than by the gradient, so the kernels move
# by up to $T_{adapt} = \sum_k\eta_k$ per coordinate. In practice the steps are mostly noise, and the norm grows like a
# random walk, $\sqrt{\sum_k\eta_k^2}$ per coordinate (theory T6): on the log-log axes below its slope against $T_{adapt}$ is
# well below 1. Either way it soon dwarfs the initial norm, and the final norm no longer follows $\sigma_w$. AdamW's
# decoupled decay adds an equilibrium norm set by $\eta$ and $\lambda$ (T6, check 3).

# %% [markdown]
# ## Norms against the clocks
#
# Kernel norm during training with the adaptive clock $T_{adapt} = \sum_k\eta_k$ on the horizontal axis.

# %% tags=["hide-input"]
page.figure(
    figures.norm_trajectories(
        ds, col="optimizer", x="T_adapt", title=r"Kernel norm against the $T_{\mathrm{adapt}}$ clock"
    ),
    "e06_fig_norm_vs_T_adapt",
    source,
)

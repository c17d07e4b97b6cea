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
# # 04. Do larger batches forget more slowly?
#
# **Claim C5.** The paper finds that **larger batches leave a larger spread** across $\sigma_w$
# ($b \in \{16, 32, 64, 128, 256\}$).

# %% tags=["parameters"]
# Every parameter left at None takes its value from `preset` (initmem.study.presets), where each preset's values are
# defined once; set one to change it, e.g. `sigma_ws = [0.1, 2.5]`. The table at the end of the page lists the values
# the page was computed with and what each means. train_missing = True trains the runs that are not in results_dir
# (`initmem experiments` does that by itself); None refuses to start more than a minute of training.
preset = "smoke"
results_dir = "results"
train_missing = None
executor = None
workers = None
num_threads = None
data = None
image_size = None
train_size = None
val_size = None
test_size = None
train_eval_size = None
augment = None
model = None
width = None
logit_scale = None
lr = None
steps = None
eval_every = None
warmup_epochs = None
sigma_ws = None
seeds = None
batch_sizes = None

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display
from myst_nb import glue

from initmem.book import page
from initmem.study import analysis, claims, plots, registry, results, stats

plots.use_book_style()  # SVG figures, legible in the book

ds, p = results.notebook_experiment("04_batch_size", globals())  # parameters (None: the preset's) -> sweep -> results
source = page.source_note("04_batch_size", preset, results_dir=results_dir)  # under every figure

# %% tags=["remove-input"]
page.verdict_line("04_batch_size", ds)

# %% tags=["hide-input"]
page.figure(plots.spread_vs(ds, dim="batch_size", clock="T_SGD"), "e04_fig_spread_vs_batch", source)

# %% [markdown]
# Left: the spread against $b$; right: the same spreads against the $T_{SGD}$ clock each batch size reached.

# %% [markdown]
# (verdict-04_batch_size)=
# ## The verdict at this preset

# %% tags=["remove-input"]
page.verdict_box("04_batch_size", ds)

# %% [markdown]
# ## How this page measures it
#
# The clock explains why: SGD's stochastic finite-step clock
# $T_{SGD} = \frac1b\sum_k\eta_k^2$ counts the noise injected per step, so at the same learning rate and the same
# number of steps $S$ it is $S\eta^2/b$: a larger batch takes less noisy steps and forgets more slowly.
#
# A comparison at a fixed number of *epochs* mixes this with a second effect: a large batch then also takes fewer
# steps and is simply less trained. This notebook therefore gives every batch size about the same number of
# steps (parameter `steps`; each batch size trains `round(steps / (n // b))` epochs) at one learning rate, so the
# batch sizes differ only in their noise: $T_{SGD}$ falls like $1/b$. Every batch size must fit in the training
# set: the notebook stops with a clear message otherwise.

# %% [markdown]
# ## The spread at each batch size

# %% tags=["hide-input"]
table = analysis.spread_points(ds, "04_batch_size").set_index("batch_size")
columns = ["selected_spread_pp", "selected_ci95_low", "selected_ci95_high", "final_spread_pp", "final_ci95_low",
           "final_ci95_high", "selected_train_acc", "final_train_acc", "min_final_train_acc", "T_SGD", "final_T_SGD", "T_adapt", "final_T_adapt"]  # fmt: skip
table = table[[c for c in columns if c in table]]
glue("e04_table", table.round(4))
b_small, b_large = min(p["batch_sizes"]), max(p["batch_sizes"])
glue("e04_b_small", b_small, display=False)
glue("e04_b_large", b_large, display=False)
glue("e04_spread_small_b", float(table.loc[b_small, "selected_spread_pp"]), display=False)
glue("e04_spread_large_b", float(table.loc[b_large, "selected_spread_pp"]), display=False)
glue("e04_final_spread_small_b", float(table.loc[b_small, "final_spread_pp"]), display=False)
glue("e04_final_spread_large_b", float(table.loc[b_large, "final_spread_pp"]), display=False)
glue("e04_T_SGD_small_b", float(table.loc[b_small, "T_SGD"]), display=False)
glue("e04_T_SGD_large_b", float(table.loc[b_large, "T_SGD"]), display=False)
rho = stats.rank_correlation(list(table.index), list(table["selected_spread_pp"]))
glue("e04_spearman", rho, display=False)

# %% [markdown]
# With $b$ = {glue:text}`e04_b_small` the selected spread is {glue:text}`e04_spread_small_b:.1f` pp (final
# epoch {glue:text}`e04_final_spread_small_b:.1f` pp, $T_{SGD}$ = {glue:text}`e04_T_SGD_small_b:.2g`); with
# $b$ = {glue:text}`e04_b_large` it is {glue:text}`e04_spread_large_b:.1f` pp (final epoch
# {glue:text}`e04_final_spread_large_b:.1f` pp, $T_{SGD}$ = {glue:text}`e04_T_SGD_large_b:.2g`). The rank
# correlation between $b$ and the spread is {glue:text}`e04_spearman:.2f` (NaN with fewer than three batch
# sizes). The paper's direction is a positive correlation.
#
# Every batch size takes about the same number of steps here, so a larger batch has seen more images; the final
# training accuracies in the table say whether each one interpolates. The $T_{SGD}$ panel puts all batch sizes on
# the clock that the theory says matters.

# %% tags=["hide-input"]
page.figure(plots.acc_vs_sigma(ds, hue="batch_size", title="Test accuracy against the initialization scale, per batch size"), "e04_fig_acc_vs_sigma", source)


# %% [markdown]
# ## The parameters of this page
#
# The values this page was computed with (its preset's, and any the reader set), and what each means.

# %% tags=["hide-input"]
page.parameters(preset, p)

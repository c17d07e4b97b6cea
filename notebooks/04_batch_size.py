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
# ---

# %% [markdown]
# # 04. Do larger batches forget more slowly?
#
# **Claim C5.** The paper finds that **larger batches leave a larger spread** across $\sigma_w$
# ($b \in \{16, 32, 64, 128, 256\}$). The clock explains why: SGD's stochastic finite-step clock
# $T_{SGD} = \frac1b\sum_k\eta_k^2$ counts the noise injected per step, so at the same learning rate and the same
# number of steps $S$ it is $S\eta^2/b$: a larger batch takes less noisy steps and forgets more slowly.
#
# A comparison at a fixed number of *epochs* mixes this with a second effect: a large batch then also takes fewer
# steps and is simply less trained. This notebook therefore gives every batch size about the same number of
# steps (parameter `steps`; each batch size trains `round(steps / (n // b))` epochs) at one learning rate, so the
# batch sizes differ only in their noise: $T_{SGD}$ falls like $1/b$. Every batch size must fit in the training
# set: the notebook stops with a clear message otherwise.

# %% tags=["parameters"]
preset = "smoke"
results_dir = "results"
executor = "serial"
workers = None
num_threads = 1
model = "resnet9"
width = 4
logit_scale = None
data = "synthetic"
image_size = 16
train_size = 640
val_size = 100
test_size = 100
train_eval_size = 100
augment = False
lr = 0.05
steps = 10
eval_every = 1
warmup_epochs = 0.0
sigma_ws = [0.5, 2.0]
seeds = [0]
batch_sizes = [32, 128]

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
from IPython.display import Markdown, display
from myst_nb import glue

from initmem.study import analysis, claims, plots, registry, results, stats

spec = registry.experiment_spec("04_batch_size", globals())  # this notebook's parameters -> its sweep
ds = results.run_experiment(
    "04_batch_size", spec, preset=preset, results_dir=results_dir, executor=executor, workers=workers
)
print(plots.caption(ds))

# %% [markdown]
# ## The verdict at this preset
#
# The claim, the paper's number, ours (the mean over seeds with its 95 % t-interval, for the validation-selected and
# the final predictor) and the verdict by the rule printed below it: the same numbers and rules as the ledger
# (Paper vs this reproduction).

# %% tags=["remove-input"]
display(Markdown(claims.chapter_box("04_batch_size", ds)))

# %% [markdown]
# ## The spread against the batch size
#
# Left: the spread against $b$; right: the same spreads against the $T_{SGD}$ clock each batch size reached.

# %% tags=["hide-input"]
fig = plots.spread_vs(ds, dim="batch_size", clock="T_SGD")
glue("e04_fig_spread_vs_batch", fig, display=False)
plt.show()

# %% tags=["hide-input"]
table = analysis.spread_points(ds, "04_batch_size").set_index("batch_size")
columns = ["selected_spread_pp", "selected_ci95_low", "selected_ci95_high", "final_spread_pp", "final_ci95_low",
           "final_ci95_high", "selected_train_acc", "final_train_acc", "min_final_train_acc", "T_SGD", "final_T_SGD", "T_adapt", "final_T_adapt"]  # fmt: skip
table = table[[c for c in columns if c in table]]
glue("e04_table", table.round(4))
b_small, b_large = min(batch_sizes), max(batch_sizes)
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
fig = plots.acc_vs_sigma(ds, hue="batch_size", title="Test accuracy against the initialisation scale, per batch size")
glue("e04_fig_acc_vs_sigma", fig, display=False)
plt.show()

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
# # 05. Do deeper networks fail to train at large initialization scales?
#
# **Claim C6.** In ResNet-9, low-learning-rate SGD at a large $\sigma_w$ still interpolates the training set but
# generalises worse. In the deeper CIFAR ResNets of He et al. (ResNet-56 and ResNet-110) the paper sees the
# same poor forgetting dynamics take another form: at large $\sigma_w$ the networks **fail to interpolate**.

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
models = None
widths = None
logit_scale = None
batch_size = None
lr = None
epochs = None
eval_every = None
warmup_epochs = None
sigma_ws = None
seeds = None

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display
from myst_nb import glue

from initmem.study import claims, plots, registry, results, stats

plots.use_book_style()  # SVG figures, legible in the book

ds, p = results.notebook_experiment("05_depth", globals())  # parameters (None: the preset's) -> sweep -> results
source = plots.source_note("05_depth", preset, results_dir=results_dir)  # under every figure

# %% tags=["remove-input"]
display(Markdown(claims.chapter_verdicts("05_depth", ds)))

# %% tags=["hide-input"]
fig = plots.depth_panels(ds)
glue("e05_fig_depth", fig, display=False)
plt.show()
display(Markdown(source))

# %% [markdown]
# (verdict-05_depth)=
# ## The verdict at this preset
#
# The claim, the paper's number, ours (the mean over seeds with its 95 % t-interval, for the validation-selected and
# the final predictor) and the verdict by the rule printed below it: the same numbers and rules as the ledger
# (Paper vs this reproduction).

# %% tags=["remove-input"]
display(Markdown(claims.chapter_box("05_depth", ds)))

# %% [markdown]
# ## How this page measures it
#
# The mechanism is the effective learning rate again: under BatchNorm, SGD at scale $\sigma_w$ moves the kernels'
# directions like SGD at scale 1 with rate $\eta/\sigma_w^2$, and a deep network trained at a tiny effective
# rate does not reach zero training error in the budget.
#
# This notebook trains ResNet-9 and the CIFAR ResNets (depth $6n+2$: 20, 56, 110) with the same SGD recipe over
# the $\sigma_w$ grid and reports, per depth, the final training accuracy and $\tau_{interp}$, the first epoch
# with training accuracy $\geq 99.5\,\%$ (never, if it stays below).

# %% [markdown]
# ## Per model and $\sigma_w$

# %% tags=["hide-input"]
frame = ds[["final_train_acc", "tau_interp", "selected_test_acc", "final_test_acc", "best_epoch"]]
frame = stats.seed_mean(frame)
table = frame.to_dataframe()
table = table.drop(columns=[c for c in table.columns if c not in frame.data_vars]).round(2)
glue("e05_table", table)

train, tau = stats.seed_mean(ds["final_train_acc"]), stats.seed_mean(ds["tau_interp"])
sig_lo, sig_hi = float(ds["sigma_w"].min()), float(ds["sigma_w"].max())
glue("e05_sigma_low", sig_lo, display=False)
glue("e05_sigma_high", sig_hi, display=False)
for m in ("resnet9", "resnet20", "resnet56", "resnet110"):
    present = m in ds["model"].values
    for tag, s in (("low", sig_lo), ("high", sig_hi)):
        value = float(train.sel(model=m, sigma_w=s)) if present else float("nan")
        glue(f"e05_train_{m}_{tag}_sigma", value, display=False)
        value = float(tau.sel(model=m, sigma_w=s)) if present else float("nan")
        glue(f"e05_tau_{m}_{tag}_sigma", value, display=False)
interpolated = (train >= 99.5).sum().item()
glue("e05_n_interpolated", int(interpolated), display=False)
glue("e05_n_configs", int(np.prod(train.shape)), display=False)
deepest = max(map(str, ds["model"].values), key=lambda m: 9 if m == "resnet9" else int(m.removeprefix("resnet")))
glue("e05_deepest", deepest, display=False)
glue("e05_train_deepest_high_sigma", float(train.sel(model=deepest, sigma_w=sig_hi)), display=False)
glue("e05_train_deepest_low_sigma", float(train.sel(model=deepest, sigma_w=sig_lo)), display=False)

# %% [markdown]
# {glue:text}`e05_n_interpolated` of the {glue:text}`e05_n_configs` (model, $\sigma_w$) configurations reach
# 99.5 % training accuracy. The deepest network here, {glue:text}`e05_deepest`, ends at
# {glue:text}`e05_train_deepest_low_sigma:.1f` % training accuracy at $\sigma_w$ = {glue:text}`e05_sigma_low:g`
# and {glue:text}`e05_train_deepest_high_sigma:.1f` % at $\sigma_w$ = {glue:text}`e05_sigma_high:g`; ResNet-9
# ends at {glue:text}`e05_train_resnet9_low_sigma:.1f` % and {glue:text}`e05_train_resnet9_high_sigma:.1f` %.
# The paper's deep networks fail to interpolate at large $\sigma_w$ while ResNet-9 does.
#
# The budget matters more here than anywhere else: a CPU preset trains the deep networks for far fewer steps
# than the paper, and a network that fails to interpolate at every $\sigma_w$ says nothing about $\sigma_w$.
# Compare each model's large-$\sigma_w$ accuracy with its own small-$\sigma_w$ one.


# %% [markdown]
# ## The parameters of this page
#
# The values this page was computed with (its preset's, and any the reader set), and what each means.

# %% tags=["hide-input"]
with pd.option_context("display.max_colwidth", None):  # each meaning in full
    display(registry.parameter_table({"preset": preset, **p}))

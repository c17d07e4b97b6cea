# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   mystnb:
#     render_markdown_format: myst
# ---

# %% [markdown]
# # Measure it on your own model
#
# The paper's metric is one call away for any PyTorch model and any labelled tensors:
# {py:func}`initmem.sweeps.measure.measure_init_memory` trains a fresh copy of your model at every initialization scale
# $\sigma_w$ and seed, with the training loop, the metrics and the clocks that every experiment of this book uses,
# and returns one `xarray.Dataset` with the variables of a built-in sweep. Here a small BatchNorm MLP learns a
# 10-class Gaussian mixture that the page generates; the whole example below is under 20 lines and runs in seconds
# on a laptop CPU. Each code cell of this page runs as it is with `initmem` installed, in a notebook or pasted in
# order into a script (`python own_model.py`): each ends with what it shows, a `print` or the figure saved to a file
# beside it, and none holds any of the book's own plumbing. To install it, run {wheel}`pip install {}` in the
# folder where you saved the wheel this book offers (the command links to it), or `pip install .` in a clone of
# the repository.
#
# **What $\sigma_w$ means for your model.** The kernel $W$ of every `nn.Linear` and convolution is drawn from
# $\mathcal N(0,\sigma_w^2/\text{fan-in})$, its bias is 0 and normalization layers start at gain 1 and shift 0.
# Embeddings and any other parameters keep what your constructor gave them (the same at every $\sigma_w$ of a seed);
# `include=[...]` and `exclude=[...]` add or remove named parameters. So a seed fixes the *directions* of the
# kernels and $\sigma_w$ only their *radius*. Behind a BatchNorm the radius does not change the function at
# initialization: whatever the trained model remembers of $\sigma_w$ comes from the training dynamics (see
# [T1](T1_scale_invariance.ipynb)).

# %% tags=["parameters"]
preset = "smoke"  # not used: the page has one size (seconds on a CPU)
results_dir = "results"

# %% tags=["remove-cell"]
# The book's side of the page (not the example): SVG figures, legible in the book, and
# a scratch folder for the figure file the example saves (the book's kernel runs in the
# checkout, which it must leave as it is).
import os
import tempfile

from initmem.study.presentation.plots import style

style.use_book_style()
os.chdir(tempfile.mkdtemp(prefix="initmem-U1-"))

# %%
import torch
from torch import nn

from initmem import measure_init_memory, spread, spread_lines, summary_table

g = torch.Generator().manual_seed(0)
centres = torch.randn(10, 32, generator=g)  # a 10-class Gaussian mixture in 32 dims


def draw(n):  # inputs (n, 32), integer labels (n,): the classes interleaved
    y = torch.arange(n) % 10
    return centres[y] + 1.2 * torch.randn(n, 32, generator=g), y


def mlp():  # your model: any () -> nn.Module
    def hidden(n_in):  # a linear layer of 64 units, BatchNorm, ReLU
        return [nn.Linear(n_in, 64), nn.BatchNorm1d(64), nn.ReLU()]

    return nn.Sequential(*hidden(32), *hidden(64), nn.Linear(64, 10))


train, val, test = draw(1000), draw(500), draw(500)
grid = dict(sigma_ws=[0.25, 1.0, 4.0], seeds=[0, 1, 2], epochs=12, progress=False)
sgd = measure_init_memory(mlp, train, val, test, optimizer="sgd", lr=0.02, **grid)
per_seed = spread(sgd)  # per seed: max - min over sigma_w of the selected test acc (pp)
print("spread of each seed:", ", ".join(f"{v:.1f} pp" for v in per_seed.values))

# %% [markdown]
# On CIFAR-10 instead, take shuffled, class-balanced tensors of the sizes you want (the images of the archive are
# sorted by class, so a first slice of them would hold one class):
#
# ```python
# from initmem import cifar10_tensors
#
# train, val, test = cifar10_tensors(5000, 1000, 1000, seed=0)  # (x, y) pairs, x (n, 3, 32, 32)
# ```

# %% [markdown]
# `sgd` has the dimensions `sigma_w`, `seed` and `epoch`, the variables of every experiment in this book
# (`selected_test_acc`, `final_test_acc`, `tau_interp`, `weight_norm`, `dist_from_init`, the clocks `T_SGD`,
# `T_L2`, `T_adapt`, ...) and attributes that say what was measured (the model's repr and parameter count, the
# data sizes, the settings, the commit). `spread_lines` says the result in one line per configuration: the
# cross-fitted spread (each seed read at the $\sigma_w$ that the other seeds rank best and worst, so that seed noise
# alone does not make it positive) with its 95 % interval over the seeds:

# %%
n, kernels = sgd.attrs["n_parameters"], sgd.attrs["kernels"]
print(f"{sgd.attrs['model_class']}: {n:,} parameters; sigma_w sets {kernels}")
print("data sizes:", sgd.attrs["data_sizes"])
print(*spread_lines(sgd))

# %% [markdown]
# ## Does an adaptive optimizer forget?
#
# The same call with Adam. Under SGD a large $\sigma_w$ is a small effective learning rate $\eta/\sigma_w^2$ on
# every kernel behind a BatchNorm; under Adam it is only $\eta/\sigma_w$, and the clock $T_{\rm adapt}=\sum_k\eta_k$
# runs much faster than $T_{\rm SGD}=\frac1b\sum_k\eta_k^2$ ([T6](T6_adaptive.ipynb)). The two results combine into one
# Dataset along an `optimizer` dimension: one line per optimizer, then the summary table in its reader's view
# (`view="reader"`: a few columns with units; the default view has every column, with machine names, for code).

# %%
import pandas as pd
import xarray as xr

adam = measure_init_memory(mlp, train, val, test, optimizer="adam", lr=0.01, **grid)
optimizer = pd.Index(["sgd", "adam"], name="optimizer")
both = xr.concat([sgd, adam], dim=optimizer, combine_attrs="drop_conflicts")
table = summary_table(both)  # every column, for code (machine names)
print(*spread_lines(table), sep="\n")
print(summary_table(both, view="reader").to_string())

# %% [markdown]
# The book's own figure draws the result, saved as `own_model.png` beside the script or notebook:

# %%
from initmem.study.presentation.plots import figures

title = r"Your own model: test accuracy against $\sigma_w$"
fig = figures.acc_vs_sigma(both, hue="optimizer", title=title)
fig.savefig("own_model.png", dpi=150)

# %% tags=["remove-cell"]
# The book's side of the page, not part of the example: the figure, glued as every
# figure of the book is (other pages can paste it), and the numbers of the text below.
from myst_nb import glue

glue("u1_fig_acc_vs_sigma", fig, display=False)
glue("u1_spread_sgd", float(table.loc["sgd", "selected_spread_pp"]), display=False)
glue("u1_spread_adam", float(table.loc["adam", "selected_spread_pp"]), display=False)
glue("u1_T_adapt_adam", float(adam["final_T_adapt"].mean()), display=False)
glue("u1_T_SGD_sgd", float(sgd["final_T_SGD"].mean()), display=False)

# %% [markdown]
# The figure: the test accuracy of the validation-selected and the final predictor of the BatchNorm MLP against
# $\sigma_w$, the mean over three seeds as a line, each seed a point beside it.

# %% tags=["remove-input"]
from IPython.display import Markdown, display

from initmem.book import page

display(Markdown(page.source_note("U1_own_model", sources=[])))

# %% [markdown]
# ## What the result means
#
# The spread is the paper's measure of *initialization memory*: how many percentage points of test accuracy the
# validation-selected predictor still owes to the scale it started from. Here SGD keeps a spread of
# {glue:text}`u1_spread_sgd:.1f` pp and Adam {glue:text}`u1_spread_adam:.1f` pp. The clocks say why: after the same
# 12 epochs SGD's $T_{\rm SGD}$ is {glue:text}`u1_T_SGD_sgd:.2g`, while Adam's $T_{\rm adapt}$ is
# {glue:text}`u1_T_adapt_adam:.2g`. The large-$\sigma_w$ SGD runs train with a much smaller effective step, so the
# checkpoint that validation selects still depends on where they started.
#
# How to read your own numbers:
#
# * a spread whose 95 % interval includes 0 is within seed noise: your model and recipe have forgotten
#   $\sigma_w$ (or never cared about it);
# * a spread that stays when you train longer (`epochs`), and shrinks with a larger `lr` or `weight_decay` (the
#   clocks $T_{\rm SGD}$ and $T_{\rm L2}$), is the memory the paper describes;
# * `final_test_acc` against `selected_test_acc` separates memory that training would repair from memory that
#   model selection locks in; `tau_interp` says whether and when each run interpolated;
# * `weight_norm` at the last epoch against epoch 0 shows the radial memory of claim C7.
#
# Everything else in this book works on the result: `figures.training_curves(sgd, col=None)`, the cross-fitted
# spread with its interval (`spread_lines`, `summary_table`), or a cache (`cache_dir=...`) so that a rerun reads the runs back.
# With a built-in ResNet, `measure_init_memory` gives exactly the numbers of `sweep` for the same settings (the
# test `tests/test_measure.py` checks it). Larger grids run in parallel on the package's own executors:
# `executor="processes", workers=4` (or `"dask"` with a `client`), given a `model_fn` defined at module level (a
# function or class, which the worker processes can import; a lambda cannot be sent to them) — the numbers are the
# serial ones.

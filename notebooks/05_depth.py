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
# Every parameter left at None takes its value from `preset` (initmem.study.design.presets), where each preset's values are
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
from myst_nb import glue

from initmem.base.prose import in_words
from initmem.book import page
from initmem.study.presentation.plots import figures
from initmem.study.statistics import stats

# the figure style, the results at these parameters (None: the preset's), the line under every figure and
# the committed record to draw beside an exploration (None on the record)
ds, p, source, _ = page.open_experiment("05_depth", globals())

# %% tags=["remove-input"]
page.verdict_line("05_depth", ds)

# %% tags=["hide-input"]
page.figure(figures.depth_panels(ds), "e05_fig_depth", source)

# %% [markdown]
# (verdict-05_depth)=
# ## The verdict at this preset

# %% tags=["remove-input"]
page.verdict_box("05_depth", ds)

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
frame = stats.seed_mean(ds[["final_train_acc", "tau_interp", "selected_test_acc", "final_test_acc"]])
table = frame.to_dataframe()
runs = (ds["final_train_acc"] >= 99.5).sum("seed").to_dataframe(name="runs_interpolating")
table["runs_interpolating"] = runs["runs_interpolating"].astype(str) + f" of {ds.sizes['seed']}"
page.table(
    table,
    "e05_table",
    ["final_train_acc", "runs_interpolating", "tau_interp", "selected_test_acc", "final_test_acc"],
    labels={"final_train_acc": "final train acc, seed mean (%)"},
)

train = stats.seed_mean(ds["final_train_acc"])
sig_lo, sig_hi = float(ds["sigma_w"].min()), float(ds["sigma_w"].max())
glue("e05_sigma_low", sig_lo, display=False)
glue("e05_sigma_high", sig_hi, display=False)
for m in ("resnet9", "resnet20", "resnet56", "resnet110"):
    present = m in ds["model"].values
    for tag, s in (("low", sig_lo), ("high", sig_hi)):
        value = float(train.sel(model=m, sigma_w=s)) if present else float("nan")
        glue(f"e05_train_{m}_{tag}_sigma", value, display=False)
runs_total = int(ds["final_train_acc"].size)
failed = ds["final_train_acc"].where(ds["final_train_acc"] < 99.5).to_dataframe().dropna()
failed = failed.reorder_levels(["model", "sigma_w", "seed"]).sort_index()
glue("e05_n_interpolated", runs_total - len(failed), display=False)
glue("e05_n_runs", runs_total, display=False)
glue(
    "e05_failed_runs",
    "; ".join(f"{m} at σ_w {s:g}, seed {seed}: {row.final_train_acc:.1f} %" for (m, s, seed), row in failed.iterrows())
    or "none",
    display=False,
)
# the (model, sigma_w) cell whose seeds lie furthest apart: what its seed mean hides
acc = ds["final_train_acc"]
ranges = (acc.max("seed") - acc.min("seed")).to_series()
wide = dict(zip(ranges.index.names, ranges.idxmax()))
m_wide, s_wide = str(wide["model"]), float(wide["sigma_w"])
seeds_wide = sorted(map(float, acc.sel(model=m_wide, sigma_w=s_wide).values), reverse=True)
glue(
    "e05_mean_example",
    f"a mean of {sum(seeds_wide) / len(seeds_wide):.1f} % ({m_wide} at σ_w {s_wide:g}) is seeds at "
    + in_words(f"{v:.1f}" for v in seeds_wide)
    + " %"
    if len(seeds_wide) > 1
    else "each cell has one seed, so they hide nothing",
    display=False,
)
deepest = max(map(str, ds["model"].values), key=lambda m: 9 if m == "resnet9" else int(m.removeprefix("resnet")))
glue("e05_deepest", deepest, display=False)

# %% [markdown]
# {glue:text}`e05_n_interpolated` of the {glue:text}`e05_n_runs` runs reach 99.5 % training accuracy. Every run that
# does not, by name: {glue:text}`e05_failed_runs`. The means in the table hide which seed failed: here
# {glue:text}`e05_mean_example`.
#
# The paper's deep networks fail to interpolate at large $\sigma_w$ while ResNet-9 does. Here ResNet-9 ends at
# {glue:text}`e05_train_resnet9_low_sigma:.1f` % (seed mean) at $\sigma_w$ = {glue:text}`e05_sigma_low:g` and
# {glue:text}`e05_train_resnet9_high_sigma:.1f` % at $\sigma_w$ = {glue:text}`e05_sigma_high:g`. The budget matters more
# here than anywhere else: a CPU preset trains the deep networks for far fewer steps than the paper, and a failure at
# a *small* $\sigma_w$ is a failure of the budget, not of the initialization scale. Compare each model's
# large-$\sigma_w$ runs with its own small-$\sigma_w$ ones.


# %% [markdown]
# ## The parameters of this page
#
# The values this page was computed with (its preset's, and any the reader set), and what each means.

# %% tags=["hide-input"]
page.parameters(preset, p)

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
# # 02. Does training longer make SGD forget?
#
# **Claim C3.** If low-learning-rate SGD remembers its initialization only because it has not trained long
# enough, training much longer should shrink the spread. The paper extends its low-learning-rate SGD runs to
# **5,000 epochs** and finds the spread across $\sigma_w$ **essentially unchanged**.

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
model = None
width = None
logit_scale = None
batch_size = None
lr = None
epochs = None
checkpoint_every = None
eval_every = None
warmup_epochs = None
sigma_ws = None
seeds = None
horizons = None
reference_horizon = None

# %% tags=["hide-input"]
from myst_nb import glue

from initmem.book import page
from initmem.study.presentation.plots import figures, spreads
from initmem.study.statistics import analysis

# the figure style, the results at these parameters (None: the preset's), the line under every figure and
# the committed record to draw beside an exploration (None on the record)
ds, p, source, _ = page.open_experiment("02_long_training", globals())

# %% tags=["remove-input"]
page.verdict_line("02_long_training", ds)

# %% tags=["hide-input"]
h = analysis.within_horizons(ds, p["horizons"])
page.figure(spreads.spread_vs_horizon(h, paper_epochs=5000), "e02_fig_spread_vs_horizon", source)

# %% [markdown]
# (verdict-02_long_training)=
# ## The verdict at this preset

# %% tags=["remove-input"]
page.verdict_box("02_long_training", ds)

# %% [markdown]
# ## How this page measures it
#
# The clock that governs SGD's own
# forgetting, $T_{SGD} = \frac1b\sum_k \eta_k^2$, grows linearly with the number of steps, but at a small learning rate its
# rate $\eta^2/b$ is tiny; and once the network interpolates the gradients that drive forgetting nearly vanish (theory T4),
# so the norms that carry the memory stop moving even as the clock keeps ticking.
#
# **How this notebook measures it.** One long run per $\sigma_w$ and seed, at a constant learning rate. With a
# constant schedule and batches that depend only on the data seed and the epoch, the first $T$ epochs of a long
# run *are* a $T$-epoch run. So the validation-selected predictor of a $T$-epoch run is the checkpoint with the
# lowest validation loss among the epochs $\leq T$ of the long run (`initmem.study.statistics.analysis.within_horizons`), and one
# long sweep gives the spread at every horizon $T$. The final-epoch accuracy at horizon $T$ is the accuracy at
# epoch $T$.

# %% [markdown]
# ## The spread at each horizon

# %% tags=["hide-input"]
table = analysis.horizon_table(ds, p["horizons"])
page.table(
    table,
    "e02_table",
    [
        "selected_spread_pp",
        "selected_ci95_low",
        "selected_ci95_high",
        "final_spread_pp",
        "final_ci95_low",
        "final_ci95_high",
        "final_raw_spread_pp",
        "selected_train_acc",
        "min_final_train_acc",
        "T_SGD",
        "final_T_SGD",
    ],
)

# %% tags=["hide-input"]
first, last = p["reference_horizon"], max(p["horizons"])
glue("e02_reference_epochs", first, display=False)
glue("e02_longest_epochs", last, display=False)
glue("e02_spread_reference", float(table.loc[first, "selected_spread_pp"]), display=False)
glue("e02_spread_longest", float(table.loc[last, "selected_spread_pp"]), display=False)
glue("e02_final_spread_reference", float(table.loc[first, "final_spread_pp"]), display=False)
glue("e02_final_spread_longest", float(table.loc[last, "final_spread_pp"]), display=False)
# the clock of each predictor: the selected one stops where validation picks it, the final one runs to the end
glue("e02_T_SGD_selected", float(table.loc[last, "T_SGD"]), display=False)
glue("e02_T_SGD_final_reference", float(table.loc[first, "final_T_SGD"]), display=False)
glue("e02_T_SGD_final_longest", float(table.loc[last, "final_T_SGD"]), display=False)
glue("e02_min_train_longest", float(table.loc[last, "min_final_train_acc"]), display=False)
glue("e02_latest_selected", int(h["best_epoch"].sel(horizon=last).max()), display=False)
same = bool((h["best_epoch"].sel(horizon=first) == h["best_epoch"].sel(horizon=last)).all())
glue(
    "e02_selection",
    "selects the same checkpoints at both horizons, so the selected spread cannot change and only "
    "the final predictor can show what the extra training does"
    if same
    else "selects later checkpoints at the longer horizon, so both predictors can show what the extra training does",
    display=False,
)

# %% [markdown]
# The selected predictor: a cross-fitted spread of {glue:text}`e02_spread_reference:.1f` pp at
# {glue:text}`e02_reference_epochs` epochs and {glue:text}`e02_spread_longest:.1f` pp at {glue:text}`e02_longest_epochs`.
# Its checkpoints are picked early: at the longest horizon the latest validation-selected checkpoint of any run is at
# epoch {glue:text}`e02_latest_selected`, where $T_{SGD}$ = {glue:text}`e02_T_SGD_selected:.3g`. Validation
# {glue:text}`e02_selection`.
#
# The final predictor: {glue:text}`e02_final_spread_reference:.1f` pp at {glue:text}`e02_reference_epochs` epochs and
# {glue:text}`e02_final_spread_longest:.1f` pp at {glue:text}`e02_longest_epochs`, while its clock $T_{SGD}$ grows
# from {glue:text}`e02_T_SGD_final_reference:.3g` to {glue:text}`e02_T_SGD_final_longest:.3g`. The lowest final
# training accuracy at the longest horizon is {glue:text}`e02_min_train_longest:.1f` %. The paper's spread is
# "essentially unchanged" at 5,000 epochs; this preset reaches only the horizons in the table.
#
# Why time alone does not help: under BatchNorm, SGD at scale $\sigma_w$ and learning rate $\eta$ moves the
# kernels' directions like SGD at scale 1 and rate $\eta/\sigma_w^2$ (theory chapter T1). At a large $\sigma_w$
# and a small $\eta$ the directions barely move, and the norm that would have to shrink to speed them up only
# grows under plain SGD.

# %% [markdown]
# ## Curves of the long runs

# %% tags=["hide-input"]
page.figure(
    figures.training_curves(ds, var="test_acc", col=None, title="Test accuracy during the long runs"),
    "e02_fig_curves",
    source,
)


# %% [markdown]
# ## The parameters of this page
#
# The values this page was computed with (its preset's, and any the reader set), and what each means.

# %% tags=["hide-input"]
page.parameters(preset, p)

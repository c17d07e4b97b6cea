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
lr = None
steps = None
epochs_grid = None
eval_every = None
warmup_epochs = None
sigma_ws = None
seeds = None
batch_sizes = None

# %% tags=["hide-input"]
from myst_nb import glue

from initmem.book import page
from initmem.study.presentation import batch_plots
from initmem.study.presentation.plots import figures
from initmem.study.statistics import analysis, batches

# the figure style, the results at these parameters (None: the preset's), the line under every figure and
# the committed record to draw beside an exploration (None on the record)
ds, p, source, record = page.open_experiment("04_batch_size", globals())

# %% tags=["remove-input"]
page.verdict_line("04_batch_size", ds)

# %% tags=["hide-input"]
fig = batch_plots.batch_spreads(ds, record=record)  # record: on explorations
page.figure(fig, "e04_fig_spread_vs_batch", source)
page.against_record("04_batch_size", ds, record)

# %% [markdown]
# Left: the cross-fitted spread against $b$, one line per training length; right: the same spreads against the
# $T_{SGD}$ clock each point reached. A hollow point has a run that does not interpolate: it cannot enter the verdict.

# %% [markdown]
# (verdict-04_batch_size)=
# ## The verdict at this preset

# %% tags=["remove-input"]
page.verdict_box("04_batch_size", ds)

# %% [markdown]
# ## How this page measures it
#
# The clock explains why: SGD's stochastic finite-step clock $T_{SGD} = \frac1b\sum_k\eta_k^2$ counts the noise
# injected per step, so at the same learning rate and the same number of steps $S$ it is $S\eta^2/b$: a larger batch
# takes less noisy steps and forgets more slowly. At the same number of *epochs* $E$ on $n$ images it is
# $E n \eta^2/b^2$: the larger batch takes fewer steps as well, and forgets more slowly still.
#
# Both comparisons are fair only between batch sizes that fit the training set: a batch size whose runs end below
# 99.5 % training accuracy has not finished training, and its spread says more about the budget than about the noise.
# The verdict therefore compares, in each design, the widest pair of batch sizes whose runs all interpolate: runs of
# equal length in steps (within 5 %) and runs of equal length in epochs. With `epochs_grid` the sweep trains every
# batch size for each listed length, so batch sizes meet at equal epochs along each length, and at equal steps where
# their ratio matches the ratio of two lengths ($b$ at $E$ epochs and $4b$ at $4E$). Without it, each batch size trains
# about `steps` steps. The design matches the runs' lengths, so the verdict judges the predictors at those lengths:
# each run's final predictor. The validation-selected checkpoints are picked inside the runs, so two runs of equal
# length can select checkpoints far apart in steps and in $T_{SGD}$; those are printed below the table, beside the
# verdict, not judged.

# %% [markdown]
# ## Every (batch size, length) point

# %% tags=["hide-input"]
points = batches.batch_points(ds)
frame = analysis.spread_points(ds, "04_batch_size")
keys = [c for c in ("batch_size", "epochs") if c in frame.columns]
frame = frame.drop_duplicates(keys).set_index(keys)
frame["steps"] = [
    next(pt.steps for pt in points if pt.batch_size == b and (len(keys) == 1 or pt.epochs == e))
    for b, e in (idx if isinstance(idx, tuple) else (idx, None) for idx in frame.index)
]
page.table(
    frame,
    "e04_table",
    [
        "steps",
        "selected_spread_pp",
        "selected_ci95_low",
        "selected_ci95_high",
        "final_spread_pp",
        "final_ci95_low",
        "final_ci95_high",
        "min_final_train_acc",
        "T_SGD",
        "final_T_SGD",
    ],
    labels={"steps": "steps"},
)
comparisons = batches.batch_comparisons(ds)
for design, pair in comparisons.items():
    key = design.replace(" ", "_")
    glue(
        f"e04_{key}",
        "no two batch sizes whose runs all interpolate"
        if pair is None
        else f"b = {pair[0].batch_size} ({pair[0].epochs} epochs, {pair[0].steps:,} steps) against b = "
        f"{pair[1].batch_size} ({pair[1].epochs} epochs, {pair[1].steps:,} steps)",
        display=False,
    )
    glue(
        f"e04_{key}_selected",
        "none"
        if pair is None
        else f"{pair[0].selected_steps:,.0f} against {pair[1].selected_steps:,.0f} steps (means over the runs), "
        f"T_SGD {pair[0].selected_T_SGD:.3g} against {pair[1].selected_T_SGD:.3g}",
        display=False,
    )
b_small, b_large = min(p["batch_sizes"]), max(p["batch_sizes"])
glue("e04_b_small", b_small, display=False)
glue("e04_b_large", b_large, display=False)
small = frame.xs(b_small, level="batch_size") if len(keys) > 1 else frame.loc[[b_small]]
large = frame.xs(b_large, level="batch_size") if len(keys) > 1 else frame.loc[[b_large]]
glue("e04_spread_small_b", float(small["selected_spread_pp"].iloc[-1]), display=False)
glue("e04_spread_large_b", float(large["selected_spread_pp"].iloc[-1]), display=False)
glue("e04_min_train_small_b", float(small["min_final_train_acc"].min()), display=False)
glue(
    "e04_min_train_small_b_at",
    f"its {int(small['min_final_train_acc'].idxmin())}-epoch runs" if len(keys) > 1 else "its runs",
    display=False,
)

# %% [markdown]
# The comparison at equal steps (final predictors): {glue:text}`e04_equal_steps`; the selected checkpoints of the same
# runs, not judged, sit at {glue:text}`e04_equal_steps_selected`. At equal epochs: {glue:text}`e04_equal_epochs`;
# selected checkpoints at
# {glue:text}`e04_equal_epochs_selected`. The smallest batch, $b$ = {glue:text}`e04_b_small`, has a cross-fitted
# spread of {glue:text}`e04_spread_small_b:.1f` pp at its longest run; its lowest final training accuracy over the
# runs of every length is {glue:text}`e04_min_train_small_b:.1f` % ({glue:text}`e04_min_train_small_b_at`). The
# largest, $b$ = {glue:text}`e04_b_large`, has {glue:text}`e04_spread_large_b:.1f` pp at its longest run. The paper's
# direction is a larger spread with a larger batch.

# %% tags=["hide-input"]
first = ds.isel(epochs=-1) if "epochs" in ds.dims else ds
page.figure(
    figures.acc_vs_sigma(
        first, hue="batch_size", title="Test accuracy against the initialization scale, per batch size"
    ),
    "e04_fig_acc_vs_sigma",
    source,
)


# %% [markdown]
# ## The parameters of this page
#
# The values this page was computed with (its preset's, and any the reader set), and what each means.

# %% tags=["hide-input"]
page.parameters(preset, p)

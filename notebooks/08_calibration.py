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
# # 08. Calibration: which logit factor lets plain SGD interpolate?
#
# The paper's headline (claim C1) is that low-learning-rate SGD **interpolates** (reaches $\geq 99.5\,\%$ training
# accuracy) at every $\sigma_w$ and still keeps a large test-accuracy spread. A reproduction at reduced scale
# must first make that premise true within its budget, or every spread it reports is partly plain undertraining.

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
batch_size = None
eval_every = None
warmup_epochs = None
lr = None
epochs = None
logit_scales = None
sigma_ws = None
seeds = None

# %% tags=["hide-input"]
from myst_nb import glue

from initmem.book import page
from initmem.study.presentation.plots import figures
from initmem.study.statistics import analysis

# the figure style, the results at these parameters (None: the preset's), the line under every figure and
# the committed record to draw beside an exploration (None on the record)
ds, p, source, _ = page.open_experiment("08_calibration", globals())

# %% tags=["hide-input"]
fig = figures.training_curves(
    ds, var="train_acc", col="logit_scale", interpolation=True, title="Plain SGD: training accuracy per logit factor"
)
page.figure(fig, "e08_fig_train_acc", source)

# %% [markdown]
# One panel per logit factor, one line per $\sigma_w$; the dashed line is the interpolation threshold.

# %% [markdown]
# ## How this page measures it
#
# ResNet-9 as published (Page's DAWNBench network) multiplies its logits by a fixed factor 0.125. The factor also
# scales every gradient, so under plain SGD it acts like a smaller learning rate, while Adam, AdamW and Muon,
# which normalise their updates, barely notice it. This notebook trains plain SGD at the two ends of the
# $\sigma_w$ grid with each candidate factor (parameter `logit_scales`) and the learning rate of the headline
# experiment, and records when each run interpolates. The preset then uses the smallest factor that interpolates
# at both ends within the budget of experiment 01; the choice and these numbers are listed in the Setup chapter.

# %% [markdown]
# ## When each run interpolates
#
# $\tau_{interp}$ is the first recorded epoch with training accuracy $\geq 99.5\,\%$ (NaN: never within the
# budget). The table also gives the final training accuracy and the test accuracy of the selected and the final
# predictor.

# %% tags=["hide-input"]
table = analysis.calibration_table(ds)
page.table(table, "e08_table")
choice = analysis.calibrated_logit_scale(ds)
glue("e08_choice", "none of them" if choice is None else f"{choice:g}", display=False)
glue("e08_epochs", int(ds["epoch"].max()), display=False)

# %% [markdown]
# The smallest factor with which plain SGD interpolates at every $\sigma_w$ of this grid within
# {glue:text}`e08_epochs` epochs: **{glue:text}`e08_choice`**.


# %% [markdown]
# ## The parameters of this page
#
# The values this page was computed with (its preset's, and any the reader set), and what each means.

# %% tags=["hide-input"]
page.parameters(preset, p)

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
# # 09. Calibration: the adaptive optimizers' learning rates
#
# Claim C2 says that Adam, AdamW and Muon largely erase the memory of $\sigma_w$ that SGD keeps: the paper
# reports about 4 pp for Muon. Experiment 01 trains each adaptive optimizer at one learning rate (the reasons are
# in the Setup chapter's table of choices). At that rate the validation-selected checkpoints come early in training,
# before the clock $T_{adapt} = \sum_k \eta_k$ has run far, so part of the memory that training would erase is still
# there when validation picks the predictor. The learning rate is the knob that moves the clock: this page trains
# every adaptive optimizer of 01 at each learning rate of a small grid, at the two ends of the $\sigma_w$ grid, and
# reports the spread of the validation-selected and of the final predictor at each, with the clock at each.
#
# Every point of this grid at an optimizer's own learning rate in 01 is one of 01's runs (the same configuration,
# the same hash): its spread here is over the two ends of the $\sigma_w$ grid only, so it can be smaller than 01's
# spread over all four values.

# %% tags=["parameters"]
# Every parameter left at None takes its value from `preset` (initmem.study.design.presets), where each preset's values are
# defined once; set one to change it, e.g. `lrs = [0.01, 0.1]`. The table at the end of the page lists the values
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
epochs = None
eval_every = None
warmup_epochs = None
sigma_ws = None
seeds = None
optimizers = None
lrs = None
weight_decays = None
aux_lrs = None

# %% tags=["hide-input"]
import pandas as pd
from IPython.display import Markdown, display
from myst_nb import glue

from initmem.base import numbers
from initmem.book import page
from initmem.study.costs import results
from initmem.study.presentation.plots import captions, labels, spreads
from initmem.study.statistics import analysis

# the figure style, the results at these parameters (None: the preset's), the line under every figure and
# the committed record to draw beside an exploration (None on the record)
ds, p, source, _ = page.open_experiment("09_adaptive_lr", globals())
print(captions.caption(ds))
table = analysis.spread_points(ds, "09_adaptive_lr")
best = analysis.smallest_spread(table, by="optimizer", var="selected")

# %% [markdown]
# ## The spread at each learning rate
#
# For each optimizer: the cross-fitted spread over $\sigma_w$ (mean over seeds, with its 95 % interval, calibrated as the ledger's) of the
# validation-selected and of the final predictor against the learning rate (left), and against
# the clock $T_{adapt}$ of that predictor (right: at the selected checkpoint for the selected predictor, at the end
# for the final one).

# %% tags=["hide-input"]
for optimizer in ds["optimizer"].values:
    fig = spreads.spread_vs(
        ds.sel(optimizer=optimizer),
        dim="lr",
        clock="T_adapt",
        title=f"{labels.label(optimizer)}: spread against the learning rate",
    )
    page.figure(fig, f"e09_fig_{optimizer}", source)

# %% [markdown]
# ## Every configuration
#
# One row per optimizer and learning rate: the spreads with their intervals; then, in a second table, the clocks at
# the selected checkpoint and at the end, and the final training accuracy.

# %% tags=["hide-input"]
page.table(
    table.set_index(["optimizer", "lr"]),
    "e09_table",
    [
        "selected_spread_pp",
        "selected_ci95_low",
        "selected_ci95_high",
        "selected_null_p",
        "final_spread_pp",
        "final_ci95_low",
        "final_ci95_high",
        "diverged_runs",
    ],
)
page.table(table.set_index(["optimizer", "lr"]), "e09_clocks_table", ["T_adapt", "final_T_adapt", "final_train_acc"])
for _, row in best.iterrows():
    key = row["optimizer"]
    glue(f"e09_best_lr_{key}", float(row["lr"]), display=False)
    glue(f"e09_best_spread_{key}", float(row["selected_spread_pp"]), display=False)
    glue(f"e09_best_low_{key}", float(row["selected_ci95_low"]), display=False)
    glue(f"e09_best_high_{key}", float(row["selected_ci95_high"]), display=False)
    glue(f"e09_best_T_adapt_{key}", float(row["T_adapt"]), display=False)
    glue(f"e09_best_final_{key}", float(row["final_spread_pp"]), display=False)

# %% [markdown]
# The learning rate of this grid with the smallest selected spread: Adam {glue:text}`e09_best_lr_adam:g`
# ({glue:text}`e09_best_spread_adam:.1f` pp, 95 % CI {glue:text}`e09_best_low_adam:.1f` to
# {glue:text}`e09_best_high_adam:.1f`, at $T_{adapt}$ {glue:text}`e09_best_T_adapt_adam:.3g` when selected; final
# predictor {glue:text}`e09_best_final_adam:.1f` pp); AdamW {glue:text}`e09_best_lr_adamw:g`
# ({glue:text}`e09_best_spread_adamw:.1f` pp, {glue:text}`e09_best_low_adamw:.1f` to
# {glue:text}`e09_best_high_adamw:.1f`, $T_{adapt}$ {glue:text}`e09_best_T_adapt_adamw:.3g`; final
# {glue:text}`e09_best_final_adamw:.1f` pp); Muon {glue:text}`e09_best_lr_muon:g`
# ({glue:text}`e09_best_spread_muon:.1f` pp, {glue:text}`e09_best_low_muon:.1f` to
# {glue:text}`e09_best_high_muon:.1f`, $T_{adapt}$ {glue:text}`e09_best_T_adapt_muon:.3g`; final
# {glue:text}`e09_best_final_muon:.1f` pp). With three seeds a spread's interval is wide ($t_{0.975,2} = 4.3$): read
# the learning rates against each other through their intervals, not their point estimates alone. With only the two
# ends of the $\sigma_w$ grid, the raw spread's noise null has 8 permutations and cannot give p below 0.25.

# %% [markdown]
# ## What the learning rate changed
#
# Claim C2's verdict is decided by experiment 01, at each optimizer's learning rate there. The lines below set
# that configuration beside the one of this grid with the smallest selected spread, and give the final training
# accuracy at the largest learning rate: a larger step runs the clock further but can keep the final predictor
# from interpolating. The smallest of three noisy estimates is biased low, so a best learning rate that does not
# separate from 01's by its interval is no evidence that the knob helped.

# %% tags=["hide-input"]
reference = results.read_results(results_dir, preset, "01_optimizers", reader="09_adaptive_lr")
knob = analysis.against_reference(table, analysis.learning_rates_of(reference))  # 01's lr against the smallest
largest_lr = table["lr"].max()
lines = []
for _, row in knob.iterrows():
    best = f"{row.best_spread_pp:.1f} pp (95 % CI {row.best_low:.1f} to {row.best_high:.1f}) at lr {row.best_lr:g}"
    if row.best_lr == row.reference_lr:
        change = f"the smallest of this grid is {best}, 01's own learning rate"
    elif pd.isna(row.reference_lr):
        change = f"the smallest of this grid is {best}"
    else:
        change = (
            f"at 01's learning rate {row.reference_spread_pp:.1f} pp (95 % CI {row.reference_low:.1f} to "
            f"{row.reference_high:.1f}) at lr {row.reference_lr:g}; the smallest of this grid {best}, an "
            f"interval {'entirely below' if row.measurably_lower else 'that overlaps'} 01's"
        )
    at_largest = table[(table["optimizer"] == row.optimizer) & (table["lr"] == largest_lr)]["final_train_acc"]
    lines.append(
        f"- **{labels.label(row.optimizer)}**: {change}. At lr {largest_lr:g} the final predictor trains "
        f"to {at_largest.iloc[0]:.1f} %."
    )
helped = [labels.label(o) for o in knob.loc[knob["measurably_lower"], "optimizer"]]
verdict = (
    f"The learning rate lowered the selected spread measurably for {', '.join(helped)} only."
    if helped
    else "No learning rate of this grid lowers an adaptive optimizer's selected spread measurably below its spread "
    "at 01's learning rate: at this preset the knob does not decide C2, and 01's spreads stand."
)
display(Markdown(numbers.typeset("\n".join(lines) + "\n\n" + verdict)))

# %% [markdown]
# ## The parameters of this page
#
# The values this page was computed with (its preset's, and any the reader set), and what each means.

# %% tags=["hide-input"]
page.parameters(preset, p)

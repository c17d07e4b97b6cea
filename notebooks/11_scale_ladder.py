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
# # 11. Does the gap to the paper close as the network and the data grow?
#
# The cpu record trains ResNet-9 at width 8 on 5,000 images; the paper trains width 64 on 45,000. Where chapter 01's
# spreads differ from the paper's (SGD's 26.5 pp, Adam's "minimal"), is it the reduced scale? This chapter climbs a
# ladder of rungs, each a network width and a number of training images, with chapter 01's SGD and Adam at the two
# ends of its $\sigma_w$ grid, and asks on each rung how far each optimizer's spread lies from the paper's number, and
# whether climbing moved it there.

# %% tags=["parameters"]
# Every parameter left at None takes its value from `preset` (initmem.study.presets), where each preset's values are
# defined once; set one to change it, e.g. `rungs = [[8, 5000], [16, 5000]]`. The table at the end of the page lists
# the values the page was computed with and what each means. train_missing = True trains the runs that are not in
# results_dir (`initmem experiments` does that by itself); None refuses to start more than a minute of training.
preset = "smoke"
results_dir = "results"
train_missing = None
executor = None
workers = None
num_threads = None
data = None
image_size = None
val_size = None
test_size = None
train_eval_size = None
augment = None
model = None
logit_scale = None
batch_size = None
epochs = None
eval_every = None
warmup_epochs = None
sigma_ws = None
seeds = None
bf16 = None
rungs = None
optimizers = None
lrs = None
weight_decays = None
aux_lrs = None

# %% tags=["hide-input"]
from myst_nb import glue

from initmem.book import page
from initmem.study import costs, ladder, plots

# the figure style, the results at these parameters (None: the preset's), the line under every figure and
# the committed record to draw beside an exploration (None on the record)
ds, p, source, _ = page.open_experiment("11_scale_ladder", globals())
climbed = ladder.rungs(ds)

# %% [markdown]
# ## The spread on every rung

# %% tags=["hide-input"]
page.figure(plots.spread_ladder(climbed, ds), "e11_fig_ladder", source)

# %% tags=["hide-input"]
page.table(ladder.ladder_frame(climbed), "e11_table")


def _said(optimizer: str) -> str:
    """One sentence on ``optimizer``'s climb: where it starts and ends against the paper, and each shift's reading."""
    mine = [r for r in climbed if r.optimizer == optimizer]
    paper, (low, high) = ladder.target(optimizer)
    first, last = mine[0], mine[-1]
    where = "inside" if last.in_band else "not wholly inside"
    steps = "; ".join(f"width {r.width} on {r.train_size:,} images {r.shift.format()}, {r.moves}" for r in mine[1:])
    return (
        f"{plots.label(optimizer)} keeps {first.spread.format()} on the first rung against the paper's {paper:g} pp "
        f"(band {low:g} to {high:g}); on the last it is {last.spread.format()}, {where} the band"
        + (f". From the first rung: {steps}." if steps else ".")
    )


glue(
    "e11_precision",
    "The runs train under bf16 autocast (`bf16 = true`): read them against chapter 01's parity study."
    if p["bf16"]
    else "The runs train in fp32 (`bf16 = false`), as the record does.",
    display=False,
)
glue("e11_closes", " ".join(_said(o) for o in dict.fromkeys(r.optimizer for r in climbed)), display=False)
measured = sum(r.core_seconds for r in climbed)
value, unit = costs.amount(measured)
glue(
    "e11_costs",
    "; ".join(
        f"width {w} on {n:,} images {sum(r.core_seconds for r in climbed if (r.width, r.train_size) == (w, n)) / 60:.0f}"
        " core-min"
        for w, n in dict.fromkeys((r.width, r.train_size) for r in climbed)
    )
    + f" (in all {value:.1f} core-{unit}, {'bf16' if p['bf16'] else 'fp32'}, the runs' recorded wall time on one thread each)",
    display=False,
)

# %% [markdown]
# {glue:text}`e11_closes`
#
# The rule for a shift: the spread on a rung minus the first rung's, paired by seed (the same seeds draw the same
# initial directions on every rung), with the calibrated 95 % interval of a contrast; "towards the paper" when that
# interval lies wholly on the paper's side of 0, "away" when wholly on the other, and otherwise the seeds cannot
# tell. A rung is "in the paper's band" when its spread's whole interval lies inside the band the ledger uses (page 99).
#
# What the rungs cost, measured: {glue:text}`e11_costs`.
#
# ## What the ladder can and cannot say
#
# Three seeds and two $\sigma_w$ values are the smallest design with a calibrated interval, so a shift of a few
# points goes untold. The rungs change the width and the training set, not the rest of the paper's protocol (200
# epochs, batch 128, all seven $\sigma_w$): a spread that reaches the paper's band on a rung says the reduced scale
# explains the gap so far, not that the paper's number is reproduced. {glue:text}`e11_precision`

# %% [markdown]
# ## The parameters of this page
#
# The values this page was computed with (its preset's, and any the reader set), and what each means.

# %% tags=["hide-input"]
page.parameters(preset, p)

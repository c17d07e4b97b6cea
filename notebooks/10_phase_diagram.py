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
# # 10. Where does SGD forget? The phase diagram of the L2 clock
#
# **Beyond the paper (row B1 of the ledger).** The paper's theory says that with L2 decay, SGD forgets its
# initialization once the clock $T_{L2} = \lambda\sum_k\eta_k$ has covered the relaxation of the kernel norms to their
# equilibrium: $T_{L2} > \ln(\|W_0\|/\|W^*\|)$ (theory chapter T5). The paper shows points: a few optimizers, one L2
# setting. This chapter maps the whole $(\eta, \lambda)$ plane and asks whether the memory ends where the clock says.
# It is the test that can fail: if the measured boundary is not at $x = T_{L2} - \ln(\|W_0\|/\|W^*\|) = 0$, this page says
# where it is instead.

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
epochs = None
eval_every = None
warmup_epochs = None
schedule = None
schedule_milestones = None
schedule_gamma = None
sigma_ws = None
seeds = None
lrs = None
weight_decays = None
extra_cells = None

# %% tags=["hide-input"]
from pathlib import Path

from IPython.display import Markdown, display
from myst_nb import glue

from initmem.book import page
from initmem.study.costs import costs, results
from initmem.study.design import presets
from initmem.study.presentation import phase_plots
from initmem.study.verdicts import boundary, boundary_coverage, phase, preregistration

# the figure style, the results at these parameters (None: the preset's), the line under every figure and
# the committed record to draw beside an exploration (None on the record)
ds, p, source, record = page.open_experiment("10_phase_diagram", globals())
cells = phase.cell_table(ds)
# B1's tests (initmem.study.verdicts.boundary): the L2 clock within each learning rate, and the logistic boundary in x
l2_trend = boundary.stratified_trend(cells, "weight_decay", "lr")
lr_trend = boundary.stratified_trend(cells, "lr", "weight_decay")
memory, (memory_lr, _) = boundary.memory_to_forget(cells)
fit = boundary.fit_boundary(cells)

# %% tags=["remove-input"]
page.verdict_line("10_phase_diagram", ds)

# %% tags=["hide-input"]
fig = phase_plots.phase_heatmaps(ds, record=record)  # record: on explorations
page.figure(fig, "e10_fig_heatmaps", source)
page.against_record("10_phase_diagram", ds, record)

# %% [markdown]
# Each cell is one recipe: plain SGD at learning rate $\eta$ with coupled L2 of strength $\lambda$, everything else at
# chapter 01's settings, with chapter 03's step schedule. The number in a cell is its **memory gap**: the test accuracy
# at the smallest $\sigma_w$ minus at the largest (mean over seeds). With the two ends of the $\sigma_w$ grid, the gap is
# the spread with its sign: positive where the small initialization wins, about 0 where the scale is forgotten. The
# red line is the predicted boundary $x = 0$, where $T_{L2} = \ln(\|W_0\|/\|W^*\|)$ with both norms measured in the
# cell's own runs; the white dotted line is a contour of the noise clock $T_{SGD} = \frac1b\sum_k\eta_k^2$ (its value
# in the legend), which depends on the learning rate only.

# %% [markdown]
# ## Which clock moves the memory?
#
# Across the grid the two clocks grow together: a larger learning rate raises the L2 clock $T_{L2} = \lambda\sum_k\eta_k$
# and the noise clock $T_{SGD} = \frac1b\sum_k\eta_k^2$ at once, so a memory that falls from the lower-left corner to
# the upper-right one could be either clock at work. Along one row of the grid (one learning rate) $T_{SGD}$ is fixed
# (it does not depend on $\lambda$) and only $T_{L2}$ grows. B1 therefore asks its question **within each learning
# rate**: Spearman's $\rho$ of the gap against $\lambda$ in each row, averaged over the rows, against a null that
# shuffles $\lambda$ within every row (10,000 draws, fixed seed).

# %% tags=["hide-input"]
glue("e10_l2_rho", l2_trend.rho, display=False)
glue("e10_l2_p", l2_trend.p_less, display=False)
glue("e10_l2_rows", l2_trend.strata, display=False)
glue("e10_lr_rho", lr_trend.rho, display=False)
glue("e10_lr_p", lr_trend.p_less, display=False)

# %% [markdown]
# Within a learning rate, the gap falls with $\lambda$ with a mean $\rho$ of {glue:text}`e10_l2_rho:.2f` over
# {glue:text}`e10_l2_rows` rows (one-sided p = {glue:text}`e10_l2_p:.2g`): this is the L2 clock alone. Within one
# $\lambda$, the gap falls with the learning rate with a mean $\rho$ of {glue:text}`e10_lr_rho:.2f` (p =
# {glue:text}`e10_lr_p:.2g`); that comparison moves both clocks and is reported, not judged.
#
# ## The collapse: memory against the clock's margin
#
# If the clock decides, every cell's gap is one function of $x = T_{L2} - \ln(\|W_0\|/\|W^*\|)$, whatever $\eta$ and
# $\lambda$ produced it, and it falls from its plateau to 0 around $x = 0$. Every quantity comes from the cell's own runs:
# $\|W_0\|$ is the initial kernel norm at the largest $\sigma_w$; $\|W^*\|$ the final kernel norm at the smallest
# $\sigma_w$, which rises to the equilibrium from below within a few epochs (small norms mean large effective steps); $T_{L2}$
# is the clock at the end of the run. The right panel sets the measured $\|W^*\|$ against T5's law
# $\|W^*\|^4 \approx \eta\bar G/(2\lambda)$, i.e. $\|W^*\| = c\,(\eta/\lambda)^{1/4}$ with one constant $c$ fitted over the
# cells.
#
# One logistic, $\text{gap}(x) = A/(1 + e^{(x - x_0)/w})$, is fitted through all cells with its plateau $A$, its
# midpoint $x_0$ (where half the memory is gone) and its width $w$ all free, by least squares on the cells' seed means.
# $x_0$ gets a profile interval: every $x_0$ whose best fit (over $A$ and $w$) stays within an F-test's reach of the best
# one. An interval that reaches the searched range means the cells do not identify $x_0$.

# %% tags=["hide-input"]
page.figure(phase_plots.boundary_collapse(ds, fit), "e10_fig_collapse", source)
glue("e10_plateau", fit.plateau, display=False)
glue("e10_memory", memory, display=False)
glue("e10_memory_lr", memory_lr, display=False)
glue("e10_x0", fit.midpoint.estimate, display=False)
glue("e10_x0_low", fit.midpoint.low, display=False)
glue("e10_x0_high", fit.midpoint.high, display=False)
glue("e10_width", fit.width, display=False)
glue("e10_identified", "it is identified" if fit.identified else "it is not identified by these cells", display=False)
glue("e10_lack_of_fit", boundary.lack_of_fit(fit, cells).format(), display=False)
scaling = phase.equilibrium_scaling(cells)
glue("e10_exponent", scaling["exponent"], display=False)
glue("e10_exponent_low", scaling["exponent_low"], display=False)
glue("e10_exponent_high", scaling["exponent_high"], display=False)

# %% [markdown]
# The boundary lies at $x_0$ = {glue:text}`e10_x0:.2f` (95 % profile interval {glue:text}`e10_x0_low:.2f` to
# {glue:text}`e10_x0_high:.2f`; {glue:text}`e10_identified`), with a plateau of {glue:text}`e10_plateau:.1f` pp and a
# width of {glue:text}`e10_width:.2f` in $x$; the memory to forget, the gap of plain SGD at lr
# {glue:text}`e10_memory_lr`, is {glue:text}`e10_memory:.1f` pp (B1's premise). The cells depart from the curve by
# more than their seeds explain (lack of fit {glue:text}`e10_lack_of_fit`), and the interval counts those departures as
# noise. B1's band, $x_0$ within $\pm 0.3$ of 0, is a convention (a 35 % error in the norm ratio), not T5's prediction:
# T5's own criterion that the start's share of $\|W\|^4$ has fallen to 10 % would put complete forgetting of the norm
# at $x = \ln(10)/4 = 0.58$. The measured equilibrium norms scale with $\eta/\lambda$ with the exponent
# {glue:text}`e10_exponent:.2f` ({glue:text}`e10_exponent_low:.2f` to {glue:text}`e10_exponent_high:.2f`; T5 predicts
# 0.25).
#
# ## Does the interval hold its 95 %?
#
# {glue:text}`e10_coverage_text`

# %% tags=["hide-input"]
coverage = results.read_if_present(Path(results_dir) / preset / "b1_coverage.nc")
if coverage is None:
    glue("e10_coverage_text", f"Not measured at preset {preset}: scripts/b1_coverage.py simulates it.", display=False)
else:
    glue("e10_coverage_text", boundary_coverage.coverage_text(coverage), display=False)
    page.table(boundary_coverage.coverage_frame(coverage), "e10_coverage")
# B1's rule against this chapter's runs (results/declarations/B1.json; the ledger's page lists every claim's)
(b1_rule,) = preregistration.ledger_statuses(results_dir, preset, {"10_phase_diagram": ds})
glue("e10_b1_declared", b1_rule.text(), display=False)

# %% [markdown]
# :::{dropdown} How the coverage is simulated, and the reading it replaced
# Each simulated record keeps these cells' $x$ and this fit's plateau and width, moves the true $x_0$, and adds three
# noises measured on the runs: a run's scatter about its cell's mean, a cell's departure from the logistic beyond
# what its seeds explain (the lack of fit), and a shift shared by every cell of one seed
# (`initmem.study.verdicts.boundary_coverage`, `scripts/b1_coverage.py`). Each record is fitted exactly as above.
#
# Until 2026-12-06 this chapter declared the plateau instead of fitting it: the gap of plain SGD at the smallest
# learning rate, with only $x_0$ and $w$ fitted. That interval ignored the declared cell's own noise, and the cell is
# itself partly forgotten when $x_0$ is low, which biases $x_0$; the table's right-hand column shows how often it
# covered the truth. The change was made after this chapter's runs, on the evidence of this simulation. The rule that
# judges B1 was {glue:text}`e10_b1_declared`.
# :::

# %% tags=["remove-input"]
caveats = boundary.fit_caveats(fit, cells)
display(
    Markdown(
        "What limits this reading: " + " ".join(caveats)
        if caveats
        else "Nothing in the cells limits this reading: without decay the memory does not fall with the learning "
        "rate by 5 pp or more beyond the null, and the logistic fits the cells within their noise "
        "(`initmem.study.verdicts.boundary.fit_caveats`)."
    )
)

# %% [markdown]
# (verdict-10_phase_diagram)=
# ## The verdict at this preset

# %% tags=["remove-input"]
page.verdict_box("10_phase_diagram", ds)

# %% [markdown]
# ## Every cell
#
# Per cell: the norms and the L2 clock that make $x$, with $T_{SGD}$ beside them,

# %% tags=["hide-input"]
page.table(
    cells,
    "e10_cells",
    labels={"T_L2": "T_L2, end", "T_SGD": "T_SGD, end", "x": "x = T_L2 (end) − ln(|W0|/|W*|)"},
    columns=["W0", "W_star", "W_top", "log_ratio", "T_L2", "T_SGD", "x"],
)

# %% [markdown]
# and the gap of the selected and of the final predictor with its 95 % t-interval over seeds, with the lowest final
# training accuracy (a cell that does not interpolate forgets by underfitting, not by the clock):

# %% tags=["hide-input"]
page.table(
    cells,
    "e10_gaps",
    columns=[
        "selected_gap",
        "selected_gap_low",
        "selected_gap_high",
        "final_gap",
        "final_gap_low",
        "final_gap_high",
        "min_final_train_acc",
    ],
)

# %% [markdown]
# ## How the grid was chosen, and what it cost
#
# The grid spans chapter 03's four cells and fills the square between them: five learning rates log-spaced between
# 03's two, and five L2 strengths, 0 and four log-spaced ones around 03's, so every run of 03 at the same preset is a
# run of this sweep (the same configuration and file). Cells beside the square (the page's `extra_cells`) add
# stronger decay where the square stops short of the boundary. T5's law, applied to 03's measured norms, put the predicted
# boundary where the next paragraph says, with plain SGD ($\lambda = 0$, its spread at its maximum) along one edge (the
# heat maps draw where the measured norms put it):

# %% tags=["hide-input"]
try:
    design = phase.predicted_decay_at(
        results.read_results(results_dir, preset, "03_lr_and_l2", reader="10_phase_diagram"), p["lrs"]
    )
except FileNotFoundError as missing:
    design = None
    print(f"03's results are not available at this preset ({missing}); the placement below cannot be recomputed.")
if design is not None:
    at = design["boundary"]
    glue(
        "e10_design",
        (
            f"03's cell at lr {design['lr_ref']:g}, lambda {design['weight_decay_ref']:g} ends with |W*| = "
            f"{design['W_star_ref']:.1f} (from |W0| = {design['W0']:.1f}); with the step schedule, sum_k eta_k = "
            f"{design['sum_eta_per_lr']:.0f} eta. T5's law |W*| ~ (eta/lambda)^(1/4) then puts x = 0 at "
            + ", ".join(f"lambda = {wd:.3g} for lr {lr:g}" for lr, wd in at.items())
        ),
        display=False,
    )
    beyond = [lr for lr, wd in at.items() if wd > max(p["weight_decays"])]
    added = [(lr, wd) for extra in p.get("extra_cells") or [] for lr in extra["lrs"] for wd in extra["weight_decays"]]
    reached = [lr for lr in beyond if any(a == lr and wd >= at[lr] for a, wd in added)]
    glue(
        "e10_beyond",
        (
            f"At lr {', '.join(f'{lr:g}' for lr in beyond)} that lies beyond the grid's largest lambda "
            f"({max(p['weight_decays']):g}): there the grid alone does not reach the predicted boundary, and its cells "
            "past x = 0 all sit at the larger learning rates, where T_SGD is large too. "
            + (
                f"So the sweep adds {len(added)} cells beside the grid, lambda "
                f"{', '.join(sorted({f'{wd:g}' for _, wd in added}, key=float))} at lr "
                f"{', '.join(sorted({f'{lr:g}' for lr, _ in added}, key=float))}, which cross it at lr "
                f"{', '.join(f'{lr:g}' for lr in reached) or 'none'} with the smallest T_SGD of the diagram"
                if added
                else "No cells beside the grid reach it at this preset"
            )
            if beyond
            else "Every learning rate's predicted boundary lies inside the grid"
        ),
        display=False,
    )
else:
    glue("e10_design", "not recomputable here", display=False)
    glue("e10_beyond", "", display=False)

# %% [markdown]
# {glue:text}`e10_design`. {glue:text}`e10_beyond`.

# %% tags=["hide-input"]
estimate = costs.estimate_cost(preset, "10_phase_diagram")
measured = costs.measured_costs(results_dir, preset, ["10_phase_diagram"])
glue("e10_runs", int(estimate["runs"]), display=False)
glue("e10_estimated_cost", costs.price(estimate, gpu=False), display=False)
glue("e10_measured_core_hours", float(measured["core_hours"].sum()) if len(measured) else float("nan"), display=False)
glue("e10_hardware", "; ".join(measured["hardware"]) if len(measured) else "no runs yet", display=False)
batch_sizes = presets.notebook_parameters(preset, "04_batch_size").get("batch_sizes", [])
batch_axis = costs.estimate_runs(phase.batch_axis_configs(p, batch_sizes))
glue("e10_batch_axis_runs", batch_axis["runs"], display=False)
glue("e10_batch_axis_cost", costs.price(batch_axis, gpu=False), display=False)
glue("e10_batch_axis_sizes", ", ".join(str(b) for b in sorted(batch_sizes)), display=False)

# %% [markdown]
# The sweep has {glue:text}`e10_runs` runs. The cost model (fitted to the CPU time of replays of the record's
# runs; the band is their spread around it) gives {glue:text}`e10_estimated_cost` of CPU time
# (`initmem.study.costs.costs.estimate_cost`); measured from its run files: {glue:text}`e10_measured_core_hours:.1f`
# core-hours (the sum of their wall times, taken while other work shared the cores: an upper bound), on
# {glue:text}`e10_hardware`.
#
# **The batch axis is not mapped here.** The same map over learning rate $\times$ batch size without L2, at equal
# epochs, against $T_{SGD}$ (every learning rate of this grid at $\lambda = 0$, batch sizes
# {glue:text}`e10_batch_axis_sizes` as in chapter 04, the same $\sigma_w$, seeds and epochs) would add
# {glue:text}`e10_batch_axis_runs` runs, {glue:text}`e10_batch_axis_cost` estimated at this
# preset (`initmem.study.verdicts.phase.batch_axis_configs`; the $\lambda = 0$ row of this grid is its column at this page's
# batch size). It was not run at this preset; chapter 04 compares batch sizes at one learning rate.

# %% [markdown]
# ## The parameters of this page
#
# The values this page was computed with (its preset's, and any the reader set), and what each means.

# %% tags=["hide-input"]
page.parameters(preset, p)

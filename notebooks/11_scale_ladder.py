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
# :::{container} answer
# {glue:text}`e11_answer`
#
# {glue:text}`e11_declared`
# :::

# %% tags=["parameters"]
# Every parameter left at None takes its value from `preset` (initmem.study.design.presets), where each preset's values are
# defined once; set one to change it, e.g. `rungs = [[8, 5000, 40], [16, 5000, 40]]`. The table at the end of the page lists
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
eval_every = None
warmup_epochs = None
sigma_ws = None
seeds = None
bf16 = None
rungs = None
lever_rungs = None
lever_lr = None
optimizers = None
lrs = None
weight_decays = None
aux_lrs = None

# %% tags=["hide-input"]
import pandas as pd
from myst_nb import glue

from initmem.base.numbers import decimal, typeset
from initmem.base.prose import in_words
from initmem.base.reads import note
from initmem.book import page
from initmem.study.costs import costs, reuse
from initmem.study.design.layout import results_paths
from initmem.study.design.registry import experiment_spec
from initmem.study.presentation.plots.ladder import spread_ladder
from initmem.study.verdicts import ladder, machine_control, preregistration
from initmem.sweeps.spec import SweepSpec

# the figure style, the results at these parameters (None: the preset's), the line under every figure and
# the committed record to draw beside an exploration (None on the record)
ds, p, source, _ = page.open_experiment("11_scale_ladder", globals())
runs_dir, _ = results_paths(results_dir, preset, "11_scale_ladder")
origin, rung_cpus = ladder.runs_origin(ds, runs_dir)
# the design record declared before the runs (an exploration without one of its own is read by the record's: the
# chapter's declared rules), and the rules amended since (each its own record and commit)
record = reuse.record_dir()
design_path = runs_dir.parent / "design.json"
if not note(design_path).is_file() and record is not None:
    design_path = results_paths(record, preset, "11_scale_ladder")[0].parent / "design.json"
amended = preregistration.amendments(design_path)
climbed = ladder.rungs(ds, rung_cpus, shift_premise=ladder.SHIFT_PREMISE in {a.name for a in amended})
trends = {c: t for c in ladder.CONDITIONS if (t := ladder.trend(ds, climbed, c)) is not None}
# what each trained rung cost (CPU time as its runs recorded it) and what the cost model estimated for it
rung_configs = {}
for _, config in SweepSpec.from_dict(experiment_spec("11_scale_ladder", p)).configs():
    rung_configs.setdefault((config.width, config.train_size, config.epochs), []).append(config)
spent = {}
for r in climbed:
    spent[r.name] = spent.get(r.name, 0.0) + r.core_seconds
estimated = {
    r.name: costs.estimate_runs(rung_configs.get((r.width, r.train_size, r.epochs), []))["core_seconds"]
    for r in {r.name: r for r in climbed}.values()  # once per rung, not per condition
}


def _rung(r: ladder.Rung) -> str:
    return f"width {r.width} on {r.train_size:,} images"


def _answer() -> str:
    """The page's first sentence: each condition's shift from the first rung to its last, with its reading (the
    table below gives every rung)."""
    last = [mine[-1] for c in ladder.CONDITIONS if len(mine := [r for r in climbed if r.condition == c]) > 1]
    seeds = len(p["seeds"])
    if not last:
        kept = "; ".join(
            f"{ladder.CONDITIONS[r.condition].label} keeps {r.spread.brief()} pp ({r.predictor} predictor), "
            f"{r.size} ({ladder.CONDITIONS[r.condition].row})"
            for r in climbed
            if (r.width, r.train_size, r.epochs) == _first_rung()
        )
        return f"On the first rung ({climbed[0].name}, {seeds} seeds), {kept}; no shift can be read before a second."
    predictors = {r.shift_predictor for r in last}
    targets = {_rung(r) for r in last}
    said = "; ".join(
        f"{ladder.CONDITIONS[r.condition].label} ({ladder.CONDITIONS[r.condition].row}) by {r.shift.brief()} pp"
        + ("" if len(targets) == 1 else f" to {_rung(r)}")
        + ("" if len(predictors) == 1 else f" ({r.shift_predictor} predictor)")
        + (
            ", premise not met: not every run interpolates there"
            if r.moves == ladder.PREMISE_NOT_MET
            else f", {r.moves}"
            + (" (premise not met there: not every run interpolates)" if r.size == ladder.PREMISE_NOT_MET else "")
        )
        for r in last
    )
    to = f" to {next(iter(targets))}" if len(targets) == 1 else ""
    on = f" on the {next(iter(predictors))} predictor" if len(predictors) == 1 else ""
    return (
        f"At the {preset} preset's noise, climbing from {_rung(climbed[0])}{to} moves the spread{on} (95 % "
        f"calibrated intervals over {seeds} seeds): {said}."
    )


def _rule_name(a: preregistration.Amendment) -> str:
    """The design's field an amendment changes, as a rule's name: "shift rule", "machine rule"."""
    field = a.record["amends"].replace("_", " ")
    return field if field.endswith("rule") else f"{field} rule"


def _first_rung() -> tuple[int, int, int]:
    r = climbed[0]
    return r.width, r.train_size, r.epochs


glue("e11_answer", typeset(_answer()), display=False)

# %% tags=["hide-input"]
if note(design_path).is_file():
    design = preregistration.read_design(design_path)
    declaration = preregistration.declared(design_path)
    early = preregistration.undeclared_runs(origin.created, declaration)
    shown_design = (
        design_path.relative_to(runs_dir.parents[3])
        if design_path.is_relative_to(runs_dir.parents[3])
        else f"the record's {design_path.relative_to(record.parent)}"
    )
    declared_at = (
        f"was declared at commit {declaration.when}"
        if declaration
        else "is not in this checkout's history as it is now, so its declaration cannot be dated"
    )
    held = {(r.width, r.train_size, r.epochs) for r in climbed}
    missing = [r for r in design["rungs"] if (r["width"], r["train_size"], r["epochs"]) not in held]
    ratios = [f"{spent[n] / estimated[n]:.1f}x" for n in spent if estimated[n] > 0]
    overruns = in_words(ratios)
    cpus = in_words(f"{m} ({n} runs)" for m, n in origin.cpu_models.items())
    declared = (
        f"The design ({shown_design}) {declared_at}; its runs were trained by "
        f"commit {', '.join(c[:7] for c in origin.commits)} from {origin.first[:16]} to {origin.last[:16]} UTC on "
        f"{cpus}. "
        + (
            (
                f"{early} runs are older than the declaration: their rule was not declared before their data. "
                if declaration
                else f"None of its {early} runs can be shown to be younger than it. "
            )
            if early
            else "No run is older than the declaration. "
        )
        + "".join(
            f"Its {_rule_name(a)} was amended ({a.name}, in full under 'How each rung is read') "
            + (
                f"at commit {a.declaration.when}: {preregistration.undeclared_runs(origin.created, a.declaration)} "
                "runs are older than the amendment, which was not declared before their data. "
                if a.declaration
                else "in a record not in this checkout's history as it is now, so no run can be shown to be younger "
                "than it. "
            )
            for a in amended
        )
        + (
            "Declared rungs not yet trained: "
            + ", ".join(
                f"width {r['width']} on {r['train_size']:,} images ({r['estimated_core_h']:g} core-h)" for r in missing
            )
            + " (estimates by the package's cost model; the trained rungs took "
            + overruns
            + " their estimates on the CPUs that trained them)."
            if missing
            else "Every declared rung is trained."
        )
    )
else:
    declared = f"No design was declared for the {preset} preset ({design_path.name} is absent)."
glue("e11_declared", typeset(declared), display=False)

# %% tags=["hide-input"]
# which CPU trained which runs, and the machine control's copies (the record's where an exploration has none)
controls_dir = runs_dir.parent / machine_control.CONTROLS_DIR
if not controls_dir.is_dir() and record is not None:
    controls_dir = design_path.parent / machine_control.CONTROLS_DIR
placed = machine_control.placed_runs(ds, origin.cpu_of)
where = machine_control.where_trained(placed, {(r.width, r.train_size, r.epochs): _rung(r) for r in climbed})
effects = machine_control.machine_effects(ds, machine_control.read_copies(controls_dir), placed)
machines = machine_control.effect_text(effects, where, rung_cpus.get(_first_rung(), ()))
glue("e11_machine", typeset(machines), display=False)

# %% [markdown]
# ## The spread on every rung

# %% tags=["hide-input"]
page.figure(spread_ladder(climbed, ds, trends), "e11_fig_ladder", source)

# %% tags=["hide-input"]
page.table(ladder.ladder_frame(climbed), "e11_table")

# %% [markdown]
# {glue:text}`e11_machine`

# %% [markdown]
# ## The trend, extrapolated
#
# {glue:text}`e11_trend_text`

# %% tags=["hide-input"]

rows = {}
for condition, t in trends.items():
    c = ladder.CONDITIONS[condition]
    rows[c.label] = {
        "ledger row": c.row,
        "predictor": t.predictor,
        "rungs": t.rungs,
        "slope (pp per doubling)": ", ".join(
            f"{name} {'+' if s > 0 else ''}{decimal(s)}" for name, s in zip(t.terms, t.slopes)
        ),
        "read at": f"w{t.at[0]}, {t.at[1]:,} img",
        "spread there (pp)": t.interval.brief(),
        "covers, straight (%)": f"{100 * t.coverage(0.0):.0f}",
        "covers, bent 5 pp (%)": f"{100 * t.coverage(5.0):.0f}",
    }
    held = ladder.leave_one_rung_out(ds, climbed, condition)
    if any(h.predicted is not None for h in held):  # the column appears once a rung can be predicted
        rows[c.label]["leave one rung out"] = ladder.held_out_text(held)
if rows:
    trend_table = pd.DataFrame.from_dict(rows, orient="index")
    trend_table.index.name = "condition"
    page.table(trend_table, "e11_trends")
identified = [t for t in trends.values() if t.reaches_paper_scale]
glue(
    "e11_trend_text",
    (
        "Each condition's per-seed spreads are fitted by a straight line in log2(width) and log2(training images), "
        "and the line is read at the paper's scale "
        + (
            "(width 64, 45,000 images). "
            if identified
            else "as far as the rungs allow: the committed rungs vary the width only, so the line is read at width 64 "
            "on the rungs' training set, not at the paper's 45,000 images (the 20,000-image rungs identify that "
            "slope). "
        )
        + "It is an extrapolation: the interval holds only if the spread keeps the straight course the rungs show; "
        "the two 'covers' columns say how often the interval covers the truth on ladders simulated like this one, with a "
        "straight trend and with one that bends away from the line by 5 pp at the extrapolated point. A column "
        "'leave one rung out' checks the line on the record itself once some rung lies where a line through the "
        "others reaches (from the fourth declared rung): each such rung is left out in turn, and its measured mean "
        "spread is read against the 95 % interval that line predicts for it."
    )
    if trends
    else "Nothing is extrapolated yet: a straight line in log2(width) and log2(training images) needs two rungs of a "
    "condition, and the committed ladder holds one. The declared rungs still to train are listed at the top.",
    display=False,
)

# %% tags=["hide-input"]
glue(
    "e11_precision",
    "The runs train under bf16 autocast (bf16 = true): read them against chapter 01's parity study."
    if p["bf16"]
    else "The runs train in fp32 (bf16 = false), as the record does.",
    display=False,
)
glue(
    "e11_rules",
    typeset(
        "These rules were declared in the design record before the first run."
        + "".join(
            f" {'Another' if k else 'One'} was amended after runs had begun ({a.name}; its commit and the runs older "
            f"than it are given at the top of the page): {a.record['rule']}. Its reason: {a.record['why']}."
            for k, a in enumerate(amended)
        )
    ),
    display=False,
)
value, unit = costs.amount(sum(spent.values()))
glue(
    "e11_costs",
    "; ".join(f"{name} {spent[name] / 60:.0f} core-min against {estimated[name] / 60:.0f} estimated" for name in spent)
    + f" by the package's cost model (in all {value:.1f} core-{unit} of CPU time, as the runs recorded it)",
    display=False,
)

# %% [markdown]
# :::{dropdown} How each rung is read
# Each condition is read on the predictor the ledger would carry it on: the validation-selected checkpoint where
# every run of the condition (and, for a contrast with SGD, every SGD run) interpolates (train accuracy ≥ 99.5 %),
# else the final one; the table prints both. A rung's spread is the mean of the per-seed cross-fitted spreads with
# the calibrated 95 % interval (page 08); it is "inside the band" when the whole interval lies in the ledger's band
# for the claim, "outside" when wholly outside, else "across the band's edge". A shift is a rung's per-seed spreads
# minus the first rung's, paired by seed, on one predictor for both rungs (the selected where it carries on both),
# with the calibrated interval of a contrast: "towards the paper" when it lies wholly on the paper's side of 0,
# "away" when wholly on the other, and otherwise the seeds cannot tell. {glue:text}`e11_rules`
# :::
#
# :::{dropdown} What the ladder can and cannot say
# The rungs change the width, the training set and the epochs, not the rest of the paper's protocol (batch 128, all
# seven $\sigma_w$, 200 epochs): a spread that reaches the paper's band on a rung says the reduced scale explains the
# gap so far, not that the paper's number is reproduced. The larger learning rate is C4's lever at this page's
# constant schedule (chapter 03 decays it). {glue:text}`e11_precision` What the rungs cost, measured:
# {glue:text}`e11_costs`.
# :::

# %% [markdown]
# ## The parameters of this page
#
# The values this page was computed with (its preset's, and any the reader set), and what each means.

# %% tags=["hide-input"]
page.parameters(preset, p)

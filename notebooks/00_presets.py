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
# # Presets and the choices the paper does not state
#
# Every experiment runs at a **preset**, a compute budget. The tables below are generated from
# `initmem.study.design.presets` (the one place where presets are defined) and from the result files, so they always show
# what the code does and what it cost: first the presets and the preset each chapter is rendered at, then the
# measured cost of this page's preset, then, for the preset selected by the `notes_preset` parameter, the
# estimated cost of each notebook and every setting the paper does not state, with the value chosen and the
# reason for it.

# %% tags=["parameters"]
notes_preset = "cpu"
preset = "smoke"
results_dir = "results"

# %% tags=["hide-input"]
import functools

import pandas as pd
from IPython.display import Markdown, display

from initmem.book import page
from initmem.book.runner import discover_notebooks
from initmem.study.costs import costs
from initmem.study.design import layout, preset_notes, presets, registry


def definitions(items):
    """A MyST definition list: one term and its text per item."""
    return Markdown("\n\n".join(f"{term}\n: {text}" for term, text in items))


@functools.cache
def measured_costs_of(name: str) -> pd.DataFrame:
    """What the runs of preset ``name`` in ``results_dir`` took (:func:`costs.measured_costs`), read once: each read
    verifies every run file's checksum (minutes for the cpu record)."""
    return costs.measured_costs(results_dir, name, registry.EXPERIMENT_SPECS)


display(definitions((f"**{p}**", presets.PRESET_DESCRIPTIONS[p]) for p in layout.PRESETS))

# %% [markdown]
# ## Which preset each chapter shows
#
# A chapter is rendered at the `cpu` preset once all of its `cpu` runs are committed; until then it shows the
# `smoke` preset, whose numbers mean nothing. Every chapter also prints its preset at the top.

# %% tags=["hide-input"]
names = list(discover_notebooks())
by_preset = {p: [n for n in names if presets.book_preset(n) == p] for p in layout.PRESETS}
display(definitions((f"**{p}**", ", ".join(f"`{n}`" for n in chosen)) for p, chosen in by_preset.items() if chosen))

# %% [markdown]
# ## What the results of this preset cost
#
# Read from the provenance of every cached run of the preset this page was executed at: the number of runs, the
# sum of their training wall times (each CPU run uses one thread, so this is core-hours; with two worker
# processes the wall-clock time is about half) and the hardware they ran on. A run that two experiments share (the
# same configuration, one file) was trained once and counts where it comes first (`shared_runs`). The cpu runs were
# trained while other work shared the two cores, so their hours are an upper bound.

# %% tags=["hide-input"]
measured = measured_costs_of(preset)
display(Markdown(f"Runs of the **{preset}** preset cached in `{results_dir}`:"))
COST_LABELS = {
    "runs": "runs",
    "shared_runs": "shared with an earlier experiment",
    "core_hours": "core-hours",
    "minutes_per_run": "minutes per run",
    "train_images": "images trained",
    "eval_images": "images evaluated",
    "wall_hours": "hours with the preset's workers",
}
if len(measured):
    page.table(measured, None, ["runs", "shared_runs", "core_hours", "minutes_per_run"], labels=COST_LABELS)
    trained = int(measured["runs"].sum() - measured["shared_runs"].sum())
    machines = sorted({h for cell in measured["hardware"] for h in cell.split("; ")})
    display(
        Markdown(
            f"In all: **{trained} runs trained, {measured['core_hours'].sum():.1f} core-hours**, on "
            f"{'; '.join(machines)} (torch {', '.join(sorted(set(measured['torch'])))})."
        )
    )
else:
    display(Markdown("none yet."))

# %% [markdown]
# ## Estimated cost at the selected preset
#
# `initmem.study.costs.costs.estimate_cost`: single-core seconds from a model fitted to the CPU time the committed cpu runs
# recorded (`scripts/fit_costs.py`, the table `initmem/study/costs/cost_model.json`): each run's FLOPs (trained and
# evaluated images, counted by hand per network) over an effective FLOP/s per network and image size, with a term per
# width (a wider network runs nearer the core's peak), one per doubling of the batch, one per optimizer and one per
# precision, plus a per-run overhead (what a run's timed part costs whatever its FLOPs). The record's older runs recorded wall time only, which counts whatever else shared the two cores (the
# same configuration took from 0.6x to 4.8x as long between quiet and busy hours), so the model is fitted to runs that
# record their CPU time: two runs of each of the record's cost configurations of up to 50 epochs trained again for it
# (`cost_replay`, `scripts/cost_replay_spec.py`; the 160- and 123-epoch runs of 02 and 04 cost per epoch what their
# shorter twins do), and 12 smoke-scale runs (width 4 at 16 px, 1-2 epochs, `--smoke`). It estimates what one otherwise idle core spends; the p10-p90 columns scale it by
# the p10 and p90 of those runs' recorded / estimated ratio. A width the record lacks takes the nearest recorded
# width's term (16 for the paper's 64: an upper bound), and the model knows this machine only. A100-hours are the
# FLOPs at airbench's published A100 rate (0.36 PFLOP in 3.83 s, arXiv:2404.00498), a lower bound.

# %% tags=["hide-input"]
COST_LABELS |= {"core_hours_p10": "p10", "core_hours_p90": "p90", "gpu_hours": "A100-hours"}
estimates = pd.DataFrame({name: costs.estimate_cost(notes_preset, name) for name in registry.EXPERIMENT_SPECS}).T
for seconds in ("wall_seconds", "core_seconds", "core_seconds_p10", "core_seconds_p90", "gpu_seconds"):
    estimates[seconds.replace("seconds", "hours")] = estimates.pop(seconds) / 3600.0
estimates = estimates.astype({"runs": int, "train_images": int, "eval_images": int})
total = costs.estimate_runs([c for n in registry.EXPERIMENT_SPECS for c in costs.preset_configs(notes_preset, n)])
fit, load = (costs.cost_model()[key] for key in ("calibration", "load"))
display(
    Markdown(
        f"Preset **{notes_preset}**: {total['runs']:,} runs, {costs.price(total)}. Over the {fit['runs']} runs that "
        f"record their CPU time, recorded / estimated CPU seconds has median {fit['median']:.2f}, "
        f"{fit['within_1_5x']:.0%} of runs within 1.5x, p10-p90 {fit['p10']:.2f}-{fit['p90']:.2f}."
        + (
            f" The record's {load['runs']} wall-timed runs took {load['median']:.2f}x the estimate in wall time "
            f"(median; p10-p90 {load['p10']:.2f}-{load['p90']:.2f}): the load the machine was under."
            if load
            else ""
        )
    )
)
columns = ["runs", "train_images", "eval_images", "wall_hours", "core_hours", "core_hours_p10", "core_hours_p90"]
page.table(estimates, None, [*columns, "gpu_hours"], labels=COST_LABELS)

# %% [markdown]
# ## What the paper's scale costs
#
# {glue:text}`p00_paper_cost`

# %% tags=["hide-input"]
from myst_nb import glue

paper = costs.estimate_runs([c for n in registry.EXPERIMENT_SPECS for c in costs.preset_configs("paper", n)])
record = measured_costs_of("cpu")
recorded = (
    f"the cpu record's runs took {record['core_hours'].sum():.1f} core-hours, measured"
    if len(record)
    else f"the cpu record's runs are not in {results_dir}"
)
glue(
    "p00_paper_cost",
    f"The paper preset (against the cpu preset: {preset_notes.scale_comparison('paper', 'cpu')}) trains "
    f"{paper['runs']:,} runs: "
    f"{costs.price(paper)} (its core-hours scale the width-8 record by FLOPs); {recorded}.",
    display=False,
)
glue("p00_scale", preset_notes.scale_comparison("cpu", "paper"), display=False)

# %% [markdown]
# ## What a replication check costs
#
# `initmem experiments --preset P --fresh` trains every run of the chapters it runs again, none read from the record:
# per preset, the runs of all its chapters, the cost model's estimate, and what the committed runs of that preset
# took, measured (the Reproduce chapter pastes this table).

# %% tags=["hide-input"]
fresh = {}
for name in presets.PRESET_DESCRIPTIONS:
    configs = [c for n in registry.EXPERIMENT_SPECS for c in costs.preset_configs(name, n)]
    committed = measured_costs_of(name)
    took, unit = costs.amount(committed["core_hours"].sum() * 3600)
    fresh[name] = {
        "runs": len(configs),
        "estimated (cost model)": costs.price(costs.estimate_runs(configs)),
        "the committed runs took": (
            f"{took:,.1f} core-{unit} over {int(committed['runs'].sum())} runs" if len(committed) else "none committed"
        ),
    }
page.table(pd.DataFrame(fresh).T.rename_axis("preset"), "p00_fresh_cost")

# %% [markdown]
# ## Choices at the selected preset
#
# Each value is read from `initmem.study.design.presets`, where the preset defines it; each reason is kept beside the
# parameters it explains in `initmem.study.design.preset_notes`.

# %% tags=["hide-input"]
display(Markdown(f"Preset **{notes_preset}**: {presets.PRESET_DESCRIPTIONS[notes_preset]}."))
display(
    definitions(
        (f"**{n['setting']}** = {n['value']} ({n['notebooks']})", n["reason"])
        for n in preset_notes.notes_table(notes_preset)
    )
)

# %% tags=["hide-input"]
from initmem.run.thresholds import INTERPOLATION_THRESHOLD
from initmem.study.costs import results

optimizers = results.load_results(results_dir, notes_preset, ["01_optimizers"]).get("01_optimizers")
if optimizers is None:
    interpolation = f"01's runs at the {notes_preset} preset are not in {results_dir}: nothing to count."
else:
    train = optimizers["final_train_acc"]
    counts = (train >= INTERPOLATION_THRESHOLD).sum([d for d in train.dims if d != "optimizer"])
    runs = train.size // train.sizes["optimizer"]
    lowest = train.min([d for d in train.dims if d != "optimizer"])
    interpolation = (
        f"Of 01's {runs} runs per optimizer at the {notes_preset} preset, those whose final training accuracy reaches "
        f"{INTERPOLATION_THRESHOLD:g} %: "
        + "; ".join(
            f"{name} {int(counts.sel(optimizer=name))} (lowest {float(lowest.sel(optimizer=name)):.1f} %)"
            for name in map(str, train["optimizer"].values)
        )
        + "."
    )
glue("p00_interpolation", interpolation, display=False)

# %% [markdown]
# **Interpolation.** {glue:text}`p00_interpolation`

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
# # Paper vs this reproduction: the ledger
#
# One row per claim of the paper (C1-C7), split where the paper makes one statement about several things (each
# adaptive optimizer of C2, each lever of C4, both designs of C5, both predictors of C3), and one row beyond the paper
# (B1: where the L2 clock says SGD should forget). Each row: the paper's statement and number, what this book's
# notebooks measured at this preset, and a verdict computed by the printed rule of the claim.

# %% tags=["parameters"]
preset = "smoke"
results_dir = "results"

# %% tags=["hide-input"]
from pathlib import Path

import numpy as np
import pandas as pd
from IPython.display import Markdown, display
from myst_nb import glue

from initmem.base.numbers import typeset
from initmem.book import page
from initmem.study.costs import replays, results
from initmem.study.design import layout, presets
from initmem.study.presentation import forest
from initmem.study.presentation.plots import style
from initmem.study.verdicts import (
    boundary_coverage,
    claims,
    error_rates,
    gpu_results,
    ladder,
    ledger_text,
    preregistration,
    row_power,
    rules,
)

style.use_book_style()  # the book's figure style: SVG, as on every page

experiments = results.load_results(results_dir, preset, presets.NOTEBOOK_READS["99_reproduction"])
table = claims.reproduction_table(experiments)
# each row's power if the paper were right, at its own noise (scripts/row_power.py; committed per preset)
power = results.read_if_present(Path(results_dir) / preset / "row_power.nc")
power_of = row_power.power_columns(power) if power is not None else {}
# B1's: the share "in size" with its boundary where T5 puts it (scripts/b1_coverage.py)
b1_coverage = results.read_if_present(Path(results_dir) / preset / "b1_coverage.nc")
if b1_coverage is not None:
    power_of["B1"] = boundary_coverage.power_column(b1_coverage)
table["power"] = [power_of.get(row, {}).get("power", "") for row in table.index]
table["seeds_80"] = [power_of.get(row, {}).get("seeds for 80 %", "") for row in table.index]
glue("r_preset", preset, display=False)
glue("r_experiments", ", ".join(experiments) or "none", display=False)
glue("r_answer", ledger_text.answer(table, preset), display=False)
glue("r_replays", typeset(replays.replay_summary(replays.replay_pairs(results_dir, preset))), display=False)
fig = forest.forest(
    table, title=None, caption=f"preset {preset}; the scale of each row is in its block below the table"
)
page.figure(fig, "r_forest", alt=forest.alt_text(table))  # glued only: pasted below and on the landing page
# the landing page's compact table (book/intro.md pastes it): claim | paper | ours [interval] | verdict
page.table(ledger_text.glance_table(table), "r_glance", show=False)
# the four verdicts as a definition list (pasted below with glue:md)
definitions = typeset("\n\n".join(f"**{v}**\n: {text}" for v, text in rules.VERDICT_DEFINITIONS.items()))
glue("r_definitions", Markdown(definitions), display=False)
glue("r_band", f"± max({rules.MARGIN_PP:g} pp, {100 * rules.BAND_SHARE:g} % of it)", display=False)
glue("r_margin", f"{rules.MARGIN_PP:g}", display=False)
# what noise alone does to a spread (the example in the text): 4 sigma_w values, 3 seeds, seed noise sd 2.5 pp
noise = np.random.default_rng(0).normal(0.0, 2.5, size=(100_000, 4, 3))  # (draw, sigma_w, seed)
glue("r_noise_raw", f"{np.ptp(noise.mean(axis=2), axis=1).mean():.1f}", display=False)
glue("r_noise_seed", f"{np.ptp(noise, axis=1).mean():.1f}", display=False)
# how often the rules err, measured by simulation through them (scripts/error_rates.py; committed per preset)
rates = results.read_if_present(Path(results_dir) / preset / "error_rates.nc")
glue(
    "r_error_rates",
    Markdown(error_rates.rates_table(rates) if rates is not None else "Not measured at this preset."),
    display=False,
)
if rates is not None:
    coverage = np.concatenate([rates[name].values.ravel() for name in ("coverage_spread", "coverage_contrast")])
    glue("r_coverage_low", f"{100 * np.nanmin(coverage):.1f}", display=False)
    glue("r_coverage_high", f"{100 * np.nanmax(coverage):.1f}", display=False)
    glue("r_false_direction_max", f"{100 * float(rates['false_positive_no_effect'].max()):.1f}", display=False)
    worst = rates["false_in_size_at_edge"].where(rates["false_in_size_at_edge"].notnull(), -1.0)
    at = worst.argmax(...)
    glue("r_false_size_max", f"{100 * float(worst.isel(at)):.1f}", display=False)
    glue(
        "r_false_size_where",
        f"{rates['design'].values[int(at['design'])]} at noise sd {float(rates['noise_sd'][int(at['noise_sd'])]):g} pp",
        display=False,
    )
else:
    for key in ("r_coverage_low", "r_coverage_high", "r_false_size_max", "r_false_size_where", "r_false_direction_max"):
        glue(key, "n/a", display=False)

# %% [markdown]
# {glue:text}`r_answer`
#
# ```{glue} r_forest
# ```
#
# ```{glue} r_glance
# ```
#
# ## How a claim is judged
#
# Every row reduces the claim to a **direction effect**: a paired contrast per seed, positive in the paper's direction
# (SGD's spread minus Adam's, the spread without L2 minus with it, ...), whose mean over seeds is printed with its 95 %
# interval (for cross-fitted spreads and their contrasts, an interval calibrated by simulation: below). Runs of one
# seed share their initial directions and their data order, so the contrast is paired.
# Where the paper gives a number, the quantity it is about (Adam's spread, say) is measured the same way, and its
# **band** is the paper's number {glue:text}`r_band` (unless the claim's rule prints another); for "minimal" and
# "near zero" the number is 0 and the band ± {glue:text}`r_margin` pp.
#
# **The spread is cross-fitted.** The spread over $\sigma_w$ is a maximum minus a minimum of noisy accuracies, and noise
# alone makes it positive: with 4 $\sigma_w$ values, 3 seeds and seed noise of 2.5 pp, the raw spread of the seed-mean
# curve (what the book tests) averages {glue:text}`r_noise_raw` pp, and one seed's own max - min
# {glue:text}`r_noise_seed` pp (both computed by simulation in this page). Two
# corrections were possible: subtract the mean of the noise null from the raw spread, or cross-fit. This book
# cross-fits: each seed's accuracy is read at the $\sigma_w$ that the *other* seeds find best and worst, so the points
# are chosen on noise that the measurement does not share. Without memory its expected value is 0 whatever the noise
# (subtracting the null mean is exact only if there is no memory at all, and too large a correction when there is);
# with memory it estimates the gap between the points the other seeds rank best and worst, a little below the true
# spread when they rank wrongly. Its per-seed values give the interval, but not a Student-t one: each seed's value is
# chosen with the other seeds, so the values are correlated, and a t-interval over them covers too little.
# The interval is $[m - c_{\text{low}}\, s/\sqrt{n},\ m + c_{\text{high}}\, s/\sqrt{n}]$ over the $n$ seeds' values
# (mean $m$, sd $s$), with critical values simulated for the design ($\sigma_w$ values x seeds; Gaussian noise, memory
# linear in the $\sigma_w$ index at 0 to 20 noise sds; `scripts/critical_values.py`, `initmem.study.statistics.calibration`):
# $c_{\text{high}}$ lets the upper bound fall below the true spread at most 2.5 % of the time at any of those memories
# (the estimate is pulled towards 0 when memory and noise are comparable), $c_{\text{low}}$ makes the coverage without
# memory 95 %; a contrast of two conditions' spreads gets one symmetric value covering at least 95 % for any shared
# profile.
# Intervals made this way are labelled "calibrated t, cross-fitted". With a single seed nothing can be cross-fitted,
# and tables show that seed's raw spread, labelled as such.
#
# :::{dropdown} How the critical values are simulated
# Measured by simulation, a Student-t interval over per-seed cross-fitted spreads covered 76-90 % without memory. The
# calibrated interval keeps the studentized form: with $\mu$ the true spread, $T = (m - \mu)/(s/\sqrt n)$ depends on
# the noise only through the ratio $r$ of the memory's spread to the noise sd, and without memory it is pivotal (the
# same at every noise level), so one simulation per design serves every noise sd. For a spread, $c_{\text{high}}$ is
# the largest 97.5 % quantile of $-T$ over $r$ from 0 to 20, so the upper bound falls below the truth at most 2.5 % of
# the time at any of these ratios, which bounds a false "in size" at a band's upper edge; $c_{\text{low}}$ then makes
# $P(-c_{\text{high}} \le T \le c_{\text{low}}) = 0.95$ at $r = 0$. $T$'s upper tail is largest at $r = 0$, so the
# lower bound exceeds the truth at most 5 % of the time at any ratio. The interval is wider above than below, because
# the estimate's bias is downwards. A contrast is the per-seed difference of two conditions' cross-fitted spreads,
# simulated independently with the same noise sd; with a common memory profile its distribution is symmetric, so one
# value, the largest 95 % quantile of $|T|$ over the profile's ratios, serves both sides. Two conditions with
# different noise levels, or the same runs at two horizons (C3), are outside what was calibrated. The values of the
# record's designs are committed with their provenance (`src/initmem/study/statistics/critical_values.json`, written by
# `scripts/critical_values.py`); another design is simulated the same way when a page needs it.
# :::
#
# **Every raw spread has a noise null.** The raw spread (max - min of the seed-mean curve) is set against the spreads
# that permuting the $\sigma_w$ labels within each seed produces (`scipy.stats.permutation_test`, exact where there are
# few permutations, else 10,000 draws with a fixed seed); a contrast against swapping the two conditions within each
# ($\sigma_w$, seed) cell, after centring each condition per seed (a difference in level is not a difference in
# memory). The p-value is one-sided. The null's mean and 95th percentile are the noise floor of that cell: there is no
# fixed 5 pp floor any more. Some designs cannot reach p < 0.05 at all: with two $\sigma_w$ values and three seeds the
# spread null has eight permutations and its smallest p is 0.25, and a contrast over one $\sigma_w$ value and three
# seeds has eight sign flips (smallest p 0.125).
#
# **The six verdicts**, applied in this order, follow the reference standards for judging replications: several
# criteria side by side (Errington et al. 2021), equivalence bands rather than "the interval contains the number"
# (Lakens 2017), and intervals over few runs (Agarwal et al. 2021). A verdict has two sides, the direction and the
# size, and each is decided only by an interval lying wholly inside or wholly outside something: a wider interval
# around the same estimate can only move a side towards undecided (a property test, `tests/test_rules.py`, checks this
# on random intervals and on the committed runs with their seed noise inflated). That is a property of the rules, not
# of their error rates: noise also moves the estimate, so how often a verdict errs was measured by simulation below.
#
# ```{glue:md} r_definitions
# :format: myst
# ```
#
# **How often these rules err.** Whether a 95 % interval errs 5 % of the time depends on the design (how many
# $\sigma_w$ values and seeds) and on the noise, so the rules' error rates were measured by simulation *through the
# ledger's own functions* (`scripts/error_rates.py`, `initmem.study.verdicts.error_rates`): per-seed accuracies with a known
# memory and Gaussian noise within each ($\sigma_w$, seed) cell, at the record's designs and at noise sd 1, 2.5, 5 and
# 8 pp, judged as the rows above are, with noise drawn independently of the calibration's. Measured so, the printed
# 95 % intervals of cross-fitted spreads and of their contrasts cover {glue:text}`r_coverage_low` to
# {glue:text}`r_coverage_high` % when there is no memory; a size sitting on a band's upper edge (the paper's number
# plus the band's half-width) earns "in size" at most
# {glue:text}`r_false_size_max` % of the time ({glue:text}`r_false_size_where`; an equivalence test at this level
# allows 2.5 %), and the direction holds with no effect at most {glue:text}`r_false_direction_max` % of the time (5 %
# allowed). The price is power: the calibrated intervals are wider than Student's, so at noise comparable to the
# memory a claim at the paper's number earns its best verdict less often (last column). These rates hold for Gaussian
# noise and a linear memory profile, the model the simulation draws from.
#
# ```{glue:md} r_error_rates
# :format: myst
# ```
#
# :::{dropdown} What each error rate counts
# Each replicate draws per-seed accuracies for a design ($\sigma_w$ values x seeds) whose memory is linear in the
# $\sigma_w$ index with a known spread, plus independent Gaussian noise in every ($\sigma_w$, seed) cell; a shift
# shared by all cells of one seed would cancel in every spread and contrast, so it is left out. The replicate is
# judged by the ledger's own functions, and the table counts:
#
# * coverage without memory: how often the printed 95 % interval of a cross-fitted spread contains 0 when no
#   $\sigma_w$ matters (its expectation is then exactly 0), and of a contrast's interval when the two conditions share
#   one profile (its expectation is then 0 whatever the profile);
# * false "in size" at a band's edge: the true size sits on the band's upper edge (5 pp when the paper's number is 0),
#   where an interval wholly inside the band should occur at most 2.5 % of the time;
# * false direction without an effect: any verdict whose direction holds ("in size", "in direction", "size
#   contradicted") when the direction effect is truly 0 (no memory for a single spread, the same profile in both
#   conditions of a contrast);
# * power at the paper's number: how often the claim earns its best verdict ("in size", or "in direction" where the
#   paper gives no number) when the truth is the paper's number (for C5, which has none, a 10 pp difference, twice
#   the margin).
#
# A rate over $n$ replicates has the Monte-Carlo standard error $\sqrt{p(1-p)/n}$, and a permutation null drawn
# rather than enumerated resolves a p-value only to about one over its number of draws.
# :::
#
# An inconclusive row says how many seeds would decide it if more seeds behaved like these (their observed mean and
# spread), counting the seeds a permutation test needs before it can reach p < 0.05. The count is projected with
# Student-t critical values (the calibrated ones are known only for the designs simulated), so for a cross-fitted
# row it is a lower bound. A row whose premise is not met says what would meet it. The table's power column says
# how often this row's design would earn its best verdict if the paper were right, simulated through these rules at
# the within-cell noise its own runs show (the residual of sigma_w plus seed effects; `scripts/row_power.py`), with
# the truth it assumed: the paper's number where it gives one ("in size"); no change for C3's "unchanged" claim
# ("in direction"); otherwise twice the row's margin ("in direction"); each cell names its truth. C3's two horizons
# are the same runs, so its noise is that of each cell's change between them. B1's is its coverage simulation's,
# with the boundary where T5 puts it. The next column gives the fewest seeds of those simulated that reach 80 %: an
# inconclusive row at low power is a design that cannot tell, one at high power a design that could.
#
# **When each rule was declared.** A rule is declared by committing its record (the rule as printed here and the
# paper's record it judges against, `results/declarations/`, written by `scripts/declare_rules.py`); a rule declared
# after its runs was not fixed before its data, and its row says so. {glue:text}`r_declared`
#
# **Replays and hardware.** {glue:text}`r_replays` Training is chaotic: another CPU instruction set or another oneDNN
# version changes the floating-point path from the first step. Run files written since commit b45793c record their CPU
# model and instruction set and their oneDNN and MKL versions; the committed cpu record was trained by an earlier
# commit (534d4b2), whose run files record only the architecture and the number of cores. A replay
# (`initmem train --config run.nc`) is bitwise only on the same CPU type. Every run of one experiment comes from one
# clean commit, but not always from one CPU: an experiment trained over several sessions spans their machines.
#
# ## The table
#
# Every row with its numbers; ours in full, the rules, reasons and notes are in the blocks below it.

# %% tags=["hide-input"]
page.table(
    table,
    "r_table",
    [
        "size",
        "size_low",
        "size_high",
        "effect",
        "effect_low",
        "effect_high",
        "seeds",
        "raw",
        "p_value",
        "verdict",
        "power",
        "seeds_80",
    ],
    labels={
        "size": "size: what the paper's number is about",
        "size_low": "size, 95 % low",
        "size_high": "size, 95 % high",
        "effect": "direction effect the verdict tests",
        "effect_low": "effect, 95 % low",
        "effect_high": "effect, 95 % high",
        "raw": "raw statistic: spread, or difference of spreads (pp)",
        "p_value": "noise p",
        "power": "power: its best verdict if the paper were right",
        "seeds_80": "seeds for 80 % power",
    },
)
# the ladder's GPU rung (benchmarks/gpu_oneshot.py), read as chapter 11 reads a rung; once it has run
gpu_rung = gpu_results.load_rung(results_dir) if preset != gpu_results.GPU_PRESET else None
if gpu_rung is not None:
    climbed = ladder.rungs(gpu_rung)
    declaration = gpu_results.rung_declaration(results_dir, gpu_rung).text()
    display(
        Markdown(f"{gpu_results.COLUMN}, at {gpu_results.rung_scale(gpu_rung, climbed)} (its design {declaration}):")
    )
    with pd.option_context("display.max_colwidth", None):
        gpu = gpu_results.ledger_column(climbed).reindex(table.index)
        display(gpu.fillna("not measured by the GPU check").to_frame())

# the scale ladder's extrapolations (chapter 11), once its runs are committed
ladder_ds = results.read_if_present(layout.results_paths(results_dir, preset, "11_scale_ladder")[1])
if ladder_ds is not None:
    display(Markdown(f"{ladder.PREDICTION_COLUMN} (chapter 11; an extrapolation, not a measurement):"))
    with pd.option_context("display.max_colwidth", None):
        display(ladder.prediction_column(ladder_ds).reindex(table.index).fillna("not on the ladder").to_frame())

# %% tags=["hide-input"]
declared = {status.subject: status for status in preregistration.ledger_statuses(results_dir, preset, experiments)}
blocks = []
for key, row in table.iterrows():
    lines = [
        ledger_text.judged_table(row),
        "",
        f"**Why:** {row['reason']}.",
        "",
        f"**Paper:** {row['paper']}.",
        "",
        f"**Ours:** {row['ours'] or 'not measured'}.",
        "",
        f"**Rule:** {row['rule']}.",
        "",
        f"**Scale:** {row['scale']}.",
    ]
    if row["clocks"]:
        lines += ["", f"**Clocks:** {row['clocks']}."]
    if row["note"]:
        lines += ["", f"**Note:** {row['note']}."]
    if row["claim"] in declared:
        lines += ["", f"**Declared:** {declared[row['claim']].text()}."]
    lines += ["", f"**Source in the paper:** {row['paper_source']}."]
    blocks.append(f":::{{dropdown}} {key}: {row['verdict']}\n" + "\n".join(lines) + "\n:::")
display(Markdown(typeset("\n\n".join(blocks))))
glue("r_rules", table[["rule", "reason", "note"]], display=False)

# %% tags=["hide-input"]
for key, row in table.iterrows():
    glue(f"r_{key.lower().replace(' ', '_')}_verdict", str(row["verdict"]), display=False)
glue("r_counts", ledger_text.count_sentence(table), display=False)
before = [claim for claim, status in declared.items() if status.current and status.declaration and not status.early]
glue(
    "r_declared",
    f"Of the {len(declared)} rules judged here, {len(before)} were declared before their runs"
    + (f" ({', '.join(before)})" if before else "")
    + "; each row's block gives its declaration and its runs' dates.",
    display=False,
)

# %% [markdown]
# At preset {glue:text}`r_preset`, with results of {glue:text}`r_experiments`. {glue:text}`r_counts`.
#
# The `smoke` preset's numbers mean nothing (a few steps of a tiny network on synthetic images, one seed, so every
# verdict is inconclusive): it only checks that the ledger is computed end to end. The `cpu` preset is a
# reduced-scale reproduction (a width-8 ResNet-9 on 5,000 CIFAR-10 images): its verdicts are about that scale. Any row
# can earn "in size" there if its whole interval falls inside the paper's band, but the bands are about the paper's
# networks and data, so a reduced scale that meets a band has matched the paper's number, not its setting.
# The [Setup chapter](00_presets.ipynb) prices the paper's scale: {glue:text}`00_presets.ipynb::p00_paper_cost:s`

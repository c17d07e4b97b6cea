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
# ---

# %% [markdown]
# # Paper vs this reproduction: the ledger
#
# One row per claim of the paper (C1-C7): the paper's statement (with where it comes from in the paper
# summary), what this book's notebooks measured at this preset, the scale it was measured at, and a verdict
# computed by the printed rule of the claim.
#
# **How a claim is judged** (`initmem.study.claims`). Each claim is reduced to one *effect*, oriented so that a positive
# value is the paper's direction, and measured per seed: runs of one seed share their initial directions and
# data order, so comparisons across $\sigma_w$ (or optimizers, batch sizes, depths) are paired. The number
# printed is the mean of the effect over seeds, and the interval beside it is the 95 % Student-t interval of that
# mean over the seeds (`initmem.study.stats.mean_interval`). Spreads are those of the validation-selected predictor
# (the paper's metric); the final (last-epoch) predictor and the training accuracy of each are shown beside them,
# and the clocks are given at the selected checkpoint (and at the end). A spread below 5 pp counts as within the
# noise of seeds and a 2,000-image test set.

# %% tags=["parameters"]
preset = "smoke"
results_dir = "results"

# %% tags=["hide-input"]
import pandas as pd
from myst_nb import glue

from initmem.study import analysis, claims, gpu_results, presets, results

experiments = results.load_results(results_dir, preset, presets.NOTEBOOK_READS["99_reproduction"])
table = claims.reproduction_table(experiments)
# The paper-scale check on one GPU (benchmarks/gpu_oneshot.py): C1 and C2 only, one seed; "not run yet" until
# results/gpu/ holds its results.
gpu = gpu_results.paper_scale_column(f"{results_dir}/{gpu_results.GPU_PRESET}")
table["paper scale (GPU)"] = [gpu.get(claim, "not measured by the GPU check") for claim in table.index]
glue("r_preset", preset, display=False)
glue("r_experiments", ", ".join(experiments) or "none", display=False)
definitions = pd.DataFrame({"verdict": list(claims.VERDICT_DEFINITIONS),
                            "definition": list(claims.VERDICT_DEFINITIONS.values())}).set_index("verdict")  # fmt: skip
with pd.option_context("display.max_colwidth", None):
    glue("r_definitions", definitions, display=False)
    # the landing page's table of results at a glance (book/intro.md pastes it)
    glue("r_glance", table[["question", "verdict", "scale", "note"]], display=False)

# %% [markdown]
# ## The four verdicts
#
# ```{glue} r_definitions
# ```
#
# ## The table

# %% tags=["hide-input"]
with pd.option_context("display.max_colwidth", None):
    glue("r_table", table[["paper", "ours", "verdict", "clocks", "scale", "paper scale (GPU)"]])

# %% [markdown]
# ## The rules, the sources and the notes

# %% tags=["hide-input"]
with pd.option_context("display.max_colwidth", None):
    glue("r_rules", table[["rule", "note", "paper_source"]])

# %% tags=["hide-input"]
for claim in table.index:
    glue(f"r_{claim.lower()}_verdict", str(table.loc[claim, "verdict"]), display=False)
counts = table["verdict"].value_counts()
for verdict in claims.VERDICTS:
    glue(f"r_n_{verdict.replace(' ', '_')}", int(counts.get(verdict, 0)), display=False)

# %% [markdown]
# At preset {glue:text}`r_preset`, with results of {glue:text}`r_experiments`: {glue:text}`r_n_reproduced_in_size`
# claims reproduced in size, {glue:text}`r_n_reproduced_in_direction` in direction only,
# {glue:text}`r_n_not_reproduced` not reproduced and {glue:text}`r_n_inconclusive` inconclusive.
#
# The `smoke` preset's numbers mean nothing (a few steps of a tiny network on synthetic images, one seed, so every
# verdict is inconclusive): it only checks that the ledger is computed end to end. The `cpu` preset is a
# reduced-scale reproduction (a width-8 ResNet-9 on 5,000 CIFAR-10 images, 3 seeds): its verdicts are about that
# scale, and only the claims whose paper number it can meet can earn "in size".

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
# # Presets and the choices the paper does not state
#
# Every experiment runs at a **preset**, a compute budget. The tables below are generated from
# `initmem.presets` (the one place where presets are defined), so they always show what the code does:
# first the presets and their measured costs, then, for the preset selected by the `notes_preset` parameter, every
# setting the paper does not state, the value chosen and the reason for it.

# %% tags=["parameters"]
notes_preset = "cpu"

# %%
import pandas as pd
from IPython.display import Markdown, display

from initmem import presets

overview = pd.DataFrame(
    {
        "preset": list(presets.PRESETS),
        "what it is": [presets.PRESET_DESCRIPTIONS[p] for p in presets.PRESETS],
        "measured cost": [
            "; ".join(f"{nb}: {cost}" for nb, cost in presets.PRESET_COSTS[p].items()) or "not measured yet"
            for p in presets.PRESETS
        ],
    }
).set_index("preset")
display(overview)
display(Markdown(f"The book renders the results of the **{presets.BOOK_PRESET}** preset."))

# %% [markdown]
# ## Choices at the selected preset

# %%
notes = pd.DataFrame(presets.PRESET_NOTES[notes_preset]).set_index("setting")
display(Markdown(f"Preset **{notes_preset}**: {presets.PRESET_DESCRIPTIONS[notes_preset]}."))
display(notes)

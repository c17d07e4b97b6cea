"""Write the sweep specs of a preset's experiments as JSON files, in the order they should run.

Usage: python scripts/preset_specs.py PRESET OUT_DIR

Each file holds {"name": <experiment>, "spec": <sweep spec>}, built by this checkout's experiment registry from
the preset's parameters. ``scripts/run_preset.sh`` then trains them with the package of another (frozen) commit,
so that every run of the preset comes from one commit while this checkout keeps changing. The order puts the
calibration first (08: it decides the logit factor), then the headline: plain SGD of 01 (C1), the rest of 01 (C2,
C7), then 03, 04, 05 and the long runs of 02 (C3); last the adaptive learning rates of 09, a calibration page that
no claim's verdict waits for.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from initmem.study import presets, registry
from initmem.sweeps.spec import SweepSpec

ORDER = ("08_calibration", "01_optimizers:sgd", "01_optimizers", "03_lr_and_l2", "04_batch_size", "05_depth",
         "02_long_training", "09_adaptive_lr")  # fmt: skip


def main(preset: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for k, entry in enumerate(ORDER):
        name, _, only = entry.partition(":")
        p = presets.notebook_parameters(preset, name)
        if not p:
            continue
        if only:  # one optimizer of 01 first: its runs are a subset of the full sweep's
            i = p["optimizers"].index(only)
            p.update({key: [p[key][i]] for key in ("optimizers", "lrs", "weight_decays", "aux_lrs")})
        spec = registry.experiment_spec(name, p)
        path = out / f"{k:02d}_{entry.replace(':', '_')}.json"
        path.write_text(json.dumps({"name": name, "spec": spec}))
        print(f"{path.name}: {SweepSpec.from_dict(spec).n_runs} runs")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in presets.PRESETS:
        sys.exit(f"usage: python scripts/preset_specs.py {{{','.join(presets.PRESETS)}}} OUT_DIR")
    main(sys.argv[1], Path(sys.argv[2]))

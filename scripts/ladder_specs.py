"""Write the scale ladder's sweep specs, one a rung, from its design record, for scripts/run_preset.sh (SPECS=...).

Usage: python scripts/ladder_specs.py OUT_DIR [--design results/cpu/11_scale_ladder/design.json] [--checkpoint-every 2]

Spec k trains the first rung and rung k (the first is already cached from spec 1, so it costs nothing again), with the
larger-lr lever where the design puts it. Each spec lists the seeds first, so that a rung stopped part-way holds whole
seeds (both sigma_w and every condition of a seed) and the runs of a session's end are usable when the next one
resumes. Every run keeps a checkpoint every ``--checkpoint-every`` epochs (default 2; 0: none), so that a run in flight
at a session's end resumes from its last one instead of starting again. The runs and their hashes depend on neither
the order nor the checkpoints (``checkpoint_every`` is an execution setting). Train them from the design's frozen
commit:

    python scripts/ladder_specs.py /tmp/ladder-specs
    WORKTREE=../initmem-frozen RESULTS=/tmp/ladder-results SPECS=/tmp/ladder-specs \\
        nohup bash scripts/run_preset.sh cpu d508401 > ladder.log 2>&1 &
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from initmem.study.design import presets, registry
from initmem.study.verdicts.preregistration import read_design

ROOT = Path(__file__).resolve().parents[1]
NAME = "11_scale_ladder"


def main(out: Path, design_path: Path, checkpoint_every: int = 2) -> None:
    design = read_design(design_path)
    rungs = [[r["width"], r["train_size"], r["epochs"]] for r in design["rungs"]]
    levers = [[r["width"], r["train_size"]] for r in design["rungs"] if r["lever"]]
    out.mkdir(parents=True, exist_ok=True)
    for k, rung in enumerate(rungs, start=1):
        chosen = rungs[:1] if k == 1 else [rungs[0], rung]
        p = presets.notebook_parameters(design["preset"], NAME)
        p.update(rungs=chosen, lever_rungs=[r for r in levers if r in [c[:2] for c in chosen]])
        spec = registry.experiment_spec(NAME, p)
        spec["grid"] = {"seed": spec["grid"]["seed"], **{k: v for k, v in spec["grid"].items() if k != "seed"}}
        spec["base"]["checkpoint_every"] = checkpoint_every
        path = out / f"rung{k}.json"
        path.write_text(json.dumps({"name": NAME, "spec": spec}))
        print(f"{path}: width {rung[0]}, {rung[1]:,} images, {rung[2]} epochs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--design", type=Path, default=ROOT / "results" / "cpu" / NAME / "design.json")
    parser.add_argument(
        "--checkpoint-every", type=int, default=2, help="epochs between a run's checkpoints (0: none; default 2)"
    )
    args = parser.parse_args()
    if args.checkpoint_every < 0:
        parser.error(f"--checkpoint-every: must be an integer >= 0 (0: no checkpoints); got {args.checkpoint_every}")
    main(args.out, args.design, args.checkpoint_every)

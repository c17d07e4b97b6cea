"""Write the scale ladder's sweep specs, one a rung, from its design record, for scripts/run_preset.sh (SPECS=...).

Usage: python scripts/ladder_specs.py OUT_DIR [--design results/cpu/11_scale_ladder/design.json] [--checkpoint-every 2]
       python scripts/ladder_specs.py OUT_DIR --control

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

``--control`` writes instead ``control.json``: the machine control's runs, as its committed amendment
(``initmem.study.verdicts.machine_control.MACHINE_CONTROL``) names them, to re-train on a CPU model the first rung was not
trained on. Their hashes are the first rung's, so train them into a results folder of their own (RESULTS=...) and
copy the runs into ``results/cpu/11_scale_ladder/controls/<cpu folder>/`` (``machine_control.cpu_folder``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from initmem.study.design import presets, registry
from initmem.study.verdicts import ladder, machine_control
from initmem.study.verdicts.preregistration import amendments, read_design

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
        path = _write(out / f"rung{k}.json", registry.experiment_spec(NAME, p), checkpoint_every)
        print(f"{path}: width {rung[0]}, {rung[1]:,} images, {rung[2]} epochs")


def control(out: Path, design_path: Path, checkpoint_every: int = 2) -> Path:
    """Write ``out/control.json``: the runs the committed amendment :data:`machine_control.MACHINE_CONTROL` names (of the first
    rung, seeds and conditions as it declares them).

    Raises:
        ValueError: the amendment is absent or not committed as it is (a control is declared before its runs).
    """
    design = read_design(design_path)
    declared = {a.name: a for a in amendments(design_path)}.get(machine_control.MACHINE_CONTROL)
    if declared is None or declared.declaration is None:
        raise ValueError(
            f"--control: the amendment {machine_control.MACHINE_CONTROL} must be committed beside {design_path} before its runs"
        )
    c = declared.record["control"]
    first = design["rungs"][0]
    p = presets.notebook_parameters(design["preset"], NAME)
    p.update(rungs=[[c["width"], c["train_size"], c["epochs"]]], lever_rungs=[[first["width"], first["train_size"]]])
    p.update(seeds=list(c["seeds"]))
    spec = registry.experiment_spec(NAME, p)
    zipped = spec["zip"]
    chosen = {
        lr for name, lr in ladder.conditions_at(zipped["optimizer"], zipped["lr"]).items() if name in c["conditions"]
    }
    keep = [i for i, lr in enumerate(zipped["lr"]) if lr in chosen]
    spec["zip"] = {k: [v[i] for i in keep] for k, v in zipped.items()}
    path = _write(out / "control.json", spec, checkpoint_every)
    print(f"{path}: {len(keep) * len(p['sigma_ws']) * len(c['seeds'])} runs of the first rung")
    return path


def _write(path: Path, spec: dict, checkpoint_every: int) -> Path:
    spec["grid"] = {"seed": spec["grid"]["seed"], **{k: v for k, v in spec["grid"].items() if k != "seed"}}
    spec["base"]["checkpoint_every"] = checkpoint_every
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": NAME, "spec": spec}))
    return path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--design", type=Path, default=ROOT / "results" / "cpu" / NAME / "design.json")
    parser.add_argument(
        "--checkpoint-every", type=int, default=2, help="epochs between a run's checkpoints (0: none; default 2)"
    )
    parser.add_argument("--control", action="store_true", help="write the machine control's spec (control.json) only")
    args = parser.parse_args()
    if args.checkpoint_every < 0:
        parser.error(f"--checkpoint-every: must be an integer >= 0 (0: no checkpoints); got {args.checkpoint_every}")
    try:
        (control if args.control else main)(args.out, args.design, args.checkpoint_every)
    except ValueError as error:
        parser.error(str(error))

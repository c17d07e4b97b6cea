"""Write the sweep specs of a preset's experiments as JSON files, in the order they should run.

Usage: python scripts/preset_specs.py PRESET OUT_DIR [--only ENTRY,ENTRY...] [--set EXPERIMENT.PARAM=JSON ...]

Each file holds {"name": <experiment>, "spec": <sweep spec>}, built by this checkout's experiment registry from
the preset's parameters. ``scripts/run_preset.sh`` then trains them with the package of another (frozen) commit,
so that every run of an experiment comes from one commit while this checkout keeps changing. The order
(:data:`ORDER`, each experiment module's ``train_order``) puts the calibration first (it decides the logit factor),
then the headline: plain SGD of 01 (C1), the rest of 01 (C2, C7), then the phase diagram (whose grid holds 03's
cells, so 03 reuses them), 03, 04, 05 and the long runs (C3); last a calibration page that no claim's verdict waits
for.

``--only`` keeps the named entries of :data:`ORDER` (e.g. ``01_optimizers:sgd,01_optimizers``); ``--set`` overrides
one parameter before the spec is built (e.g. ``--set 01_optimizers.seeds=[0,1,2,3,4]``), for runs whose preset
values are committed once their runs are.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from initmem.study.design import layout, presets, registry
from initmem.study.experiments import DISCOVERED
from initmem.sweeps.spec import SweepSpec

#: The entries in the order they run: each experiment module's ``train_order`` (entry -> rank), by rank.
ORDER = tuple(entry for _, entry in sorted((rank, entry) for e in DISCOVERED for entry, rank in e.train_order.items()))


def parse_overrides(items: list[str]) -> dict[str, dict[str, object]]:
    """``["01_optimizers.seeds=[0,1]"]`` -> ``{"01_optimizers": {"seeds": [0, 1]}}`` (values are JSON)."""
    overrides: dict[str, dict[str, object]] = {}
    for item in items:
        target, sep, value = item.partition("=")
        name, dot, param = target.partition(".")
        if not sep or not dot:
            raise SystemExit(f"--set: expected EXPERIMENT.PARAM=JSON, got {item!r}")
        try:
            overrides.setdefault(name, {})[param] = json.loads(value)
        except ValueError:
            raise SystemExit(f"--set {target}: the value must be JSON, got {value!r}") from None
    return overrides


def main(preset: str, out: Path, only: list[str] | None, overrides: dict[str, dict[str, object]]) -> None:
    unknown = [entry for entry in only or [] if entry not in ORDER]
    if unknown:
        raise SystemExit(f"--only: unknown entry {unknown[0]!r}; allowed: {', '.join(ORDER)}")
    out.mkdir(parents=True, exist_ok=True)
    for k, entry in enumerate(ORDER):
        if only is not None and entry not in only:
            continue
        name, _, single = entry.partition(":")
        p = presets.notebook_parameters(preset, name)
        if not p:
            continue
        p.update(overrides.get(name, {}))
        if single:  # one optimizer of 01 first: its runs are a subset of the full sweep's
            i = p["optimizers"].index(single)
            p.update({key: [p[key][i]] for key in ("optimizers", "lrs", "weight_decays", "aux_lrs")})
        spec = registry.experiment_spec(name, p)
        path = out / f"{k:02d}_{entry.replace(':', '_')}.json"
        path.write_text(json.dumps({"name": name, "spec": spec}))
        print(f"{path.name}: {SweepSpec.from_dict(spec).n_runs} runs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("preset", choices=layout.PRESETS)
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", type=lambda s: [e for e in s.split(",") if e], default=None)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="EXPERIMENT.PARAM=JSON")
    args = parser.parse_args()
    main(args.preset, args.out, args.only, parse_overrides(args.overrides))

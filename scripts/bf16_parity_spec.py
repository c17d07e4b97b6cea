"""Write the sweep specs of the bf16 parity study (:mod:`initmem.study.verdicts.precision`) for ``scripts/run_preset.sh``.

Usage: python scripts/bf16_parity_spec.py OUT_DIR

Writes two files, in the order they should run: ``00_fp32_replay.json``, two of the record's fp32 runs of chapter 01
(SGD and Adam, sigma_w 0.1, seed 0) trained again, which tell whether the training commit's fp32 path is the
record's (a bit-for-bit replay) or another floating-point path; and ``01_bf16_parity.json``, the parity design
(:func:`initmem.study.verdicts.precision.parity_spec`: 01's cpu configurations of SGD and Adam at sigma_w 0.1 and 2.5, five
seeds, bf16 autocast). Train them with ``SPECS=OUT_DIR bash scripts/run_preset.sh cpu COMMIT``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from initmem.study.design import presets, registry
from initmem.study.verdicts import precision
from initmem.sweeps.spec import SweepSpec


def main(out: Path) -> None:
    record = registry.experiment_spec("01_optimizers", presets.notebook_parameters("cpu", "01_optimizers"))
    parity = precision.parity_spec(record)
    out.mkdir(parents=True, exist_ok=True)
    for path, name, spec in (
        (out / "00_fp32_replay.json", precision.REPLAY_NAME, precision.replay_spec(parity)),
        (out / "01_bf16_parity.json", precision.PARITY_NAME, parity),
    ):
        path.write_text(json.dumps({"name": name, "spec": spec}))
        print(f"{path.name}: {SweepSpec.from_dict(spec).n_runs} runs")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    main(Path(sys.argv[1]))

"""Train one sweep spec written by scripts/preset_specs.py into RESULTS_DIR/PRESET/<experiment>/runs/.

Usage (with the frozen commit's package first on PYTHONPATH): python sweep_job.py SPEC.json RESULTS_DIR PRESET

Uses only ``initmem.sweeps.sweep``, which every commit of the package has; failures are printed, not raised, so
that the next spec still runs.
"""

import json
import logging
import sys

from initmem.sweeps import sweep

if __name__ == "__main__":  # the processes executor spawns workers that re-import this file
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    spec_file, results_dir, preset = sys.argv[1:4]
    job = json.load(open(spec_file))
    cache = f"{results_dir}/{preset}/{job['name']}/runs"
    try:
        ds = sweep(job["spec"], cache, executor="processes", workers=2, progress=False)
        print("done", job["name"], ds.attrs["n_runs"], "runs,", ds.attrs["n_cached"], "cached", flush=True)
    except Exception as exc:  # noqa: BLE001 - reported; the next spec runs
        print("FAILED", job["name"], type(exc).__name__, exc, flush=True)

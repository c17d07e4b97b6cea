"""Runs of one configuration trained twice: how far apart training on two machines (or two commits) puts them.

Training is chaotic: a different CPU instruction set, oneDNN version or memory layout changes the floating-point path
from the first step, and a few tens of epochs later the same configuration ends points apart. The committed record
holds such pairs by construction: an experiment that shares runs with another (09's points at 01's learning rates,
10's cells that are 03's) has a file of each, and when the two were trained separately, their numbers can differ.

:func:`replay_pairs` finds every configuration hash that has two or more files under ``results/<preset>/*/runs/``
trained separately (different ``created`` times; a copy of one file is not a replay) and compares them.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from typing import Any

import numpy as np

from ...base.reads import listed
from ...sweeps.store import read_checked
from ..design.layout import results_paths

__all__ = ["replay_pairs", "replay_summary"]


def replay_pairs(results_dir: str | os.PathLike, preset: str) -> Any:
    """One row per pair of separately trained files of one configuration (a pandas DataFrame): ``config_hash``, the
    two experiments, their ``git_commit`` and ``hardware``, and ``selected_delta`` / ``final_delta``: the absolute
    difference of the selected and of the final test accuracy (pp)."""
    import pandas as pd

    root = results_paths(results_dir, preset, "_")[0].parent.parent  # results/<preset>/
    by_name: dict[str, list[Any]] = defaultdict(list)
    for path in listed(root, "*/runs/*.nc"):  # a run file is named by its config hash
        by_name[path.stem].append(path)
    files: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in (p for paths in by_name.values() if len(paths) > 1 for p in paths):
        ds = read_checked(path)
        files[str(ds.attrs.get("config_hash", path.stem))].append(
            {
                "experiment": path.parent.parent.name,
                "created": str(ds.attrs.get("created", "")),
                "git_commit": str(ds.attrs.get("git_commit", "")),
                "hardware": str(ds.attrs.get("hardware", "")),
                "selected": float(ds["selected_test_acc"]),
                "final": float(ds["final_test_acc"]),
            }
        )
    rows = []
    for digest, runs in files.items():
        distinct = list({run["created"]: run for run in runs}.values())  # copies share their creation time
        for i, a in enumerate(distinct):
            for b in distinct[i + 1 :]:
                rows.append(
                    {
                        "config_hash": digest,
                        "experiment_a": a["experiment"],
                        "experiment_b": b["experiment"],
                        "git_commit_a": a["git_commit"],
                        "git_commit_b": b["git_commit"],
                        "hardware_a": a["hardware"],
                        "hardware_b": b["hardware"],
                        "selected_delta": abs(a["selected"] - b["selected"]),
                        "final_delta": abs(a["final"] - b["final"]),
                    }
                )
    columns = [
        "config_hash",
        "experiment_a",
        "experiment_b",
        "git_commit_a",
        "git_commit_b",
        "hardware_a",
        "hardware_b",
        "selected_delta",
        "final_delta",
    ]
    return pd.DataFrame(rows, columns=columns)


def replay_summary(pairs: Any) -> str:
    """One sentence on :func:`replay_pairs`: how many pairs, how many differ, by how much on average and at most."""
    if not len(pairs):
        return "The record holds no configuration trained twice."
    differ = pairs[(pairs["selected_delta"] > 0) | (pairs["final_delta"] > 0)]
    deltas = np.asarray(differ["selected_delta"], dtype=float)
    size = (
        f", the selected test accuracy by {deltas.mean():.1f} pp on average and up to {deltas.max():.1f} pp"
        if len(differ) and math.isfinite(deltas.mean())
        else ""
    )
    machines = sum(a != b for a, b in zip(pairs["hardware_a"], pairs["hardware_b"]))
    return (
        f"Of {len(pairs)} pairs of runs of one configuration trained twice in this record ({machines} of them on "
        f"differently described hardware), {len(differ)} differ{size}."
    )

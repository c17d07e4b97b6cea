"""Pre-registered designs: a study's design and its rules, written as a record and committed before its first run.

A design record is a JSON file (read with :func:`json.load`: no code runs on reading it) holding what the study
trains (rungs, conditions, sigma_w, seeds, epochs), what it judges (the predictor, the premise, the reading rule,
the smallest shift it must see) and what it expects before any run: the power of its rule at the record's measured
noise (:func:`shift_power`) and its cost by the package's cost model. Its declaration is the commit that added the
record's content (:func:`declared`): a run trained before that commit cannot have been judged by a rule declared in
advance, and a page flags such a run in words (:func:`undeclared_runs`). A rule changed after the design is an
amendment (:func:`amendments`): its own record beside the design, declared by its own commit, so that the runs older
than the change are flagged without moving the design's declaration.

The ledger's rules are declared the same way, one record per claim (:func:`rule_record`: the rule as the ledger
prints it and the paper's record it judges against) under ``results/declarations/`` (:func:`declare_rule`, written by
``scripts/declare_rules.py``); :func:`rule_status` says whether a claim's runs are younger than its rule.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..statistics.calibration import critical

__all__ = [
    "ShiftPower",
    "shift_power",
    "band_power",
    "spread_noise",
    "read_design",
    "Declaration",
    "declared",
    "undeclared_runs",
    "AMENDMENTS_DIR",
    "Amendment",
    "amendments",
    "write_amendment",
    "DECLARATIONS_DIR",
    "rule_record",
    "rule_path",
    "declare_rule",
    "RuleStatus",
    "rule_status",
    "ledger_statuses",
]


@dataclass(frozen=True)
class ShiftPower:
    """What a paired shift between two rungs of ``n_seeds`` seeds can see, with per-seed cross-fitted spreads of
    standard deviation ``sd`` (pp) on each rung: the calibrated contrast interval's expected half-width (pp), the
    probability that the printed interval is at most ``2 * max_half_width`` pp wide, and the probability that it lies
    wholly above 0 when the true shift is ``shift`` (pp)."""

    n_seeds: int
    sd: float
    critical: float
    expected_half_width: float
    max_half_width: float
    p_narrow: float
    shift: float
    power: float

    def to_dict(self) -> dict[str, float]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def shift_power(
    sd: float,
    n_seeds: int,
    n_sigma: int = 2,
    shift: float = 5.0,
    max_half_width: float = 5.0,
    reps: int = 20_000,
    seed: int = 0,
) -> ShiftPower:
    """Simulate the calibrated contrast interval (:func:`initmem.study.statistics.calibration.critical`, kind ``"contrast"``) of
    a shift between two rungs whose per-seed spreads are independent Gaussians of standard deviation ``sd`` (pp): the
    per-seed difference has standard deviation ``sd * sqrt(2)``."""
    c = critical("contrast", n_sigma, n_seeds).high
    rng = np.random.default_rng(seed)
    diffs = rng.normal(shift, sd * math.sqrt(2.0), size=(reps, n_seeds))
    mean, s = diffs.mean(axis=1), diffs.std(axis=1, ddof=1)
    half = c * s / math.sqrt(n_seeds)
    return ShiftPower(
        n_seeds=n_seeds,
        sd=float(sd),
        critical=float(c),
        expected_half_width=float(half.mean()),
        max_half_width=float(max_half_width),
        p_narrow=float((half <= max_half_width).mean()),
        shift=float(shift),
        power=float((mean - half > 0).mean()),
    )


def band_power(
    sd: float,
    n_seeds: int,
    truth: float,
    band: tuple[float, float],
    n_sigma: int = 2,
    reps: int = 20_000,
    seed: int = 0,
) -> float:
    """The probability that a rung's calibrated spread interval (:func:`initmem.study.statistics.calibration.critical`,
    kind ``"spread"``) lies wholly inside ``band`` (pp), its ``n_seeds`` per-seed spreads independent Gaussians of
    mean ``truth`` and standard deviation ``sd`` (pp): the power of "in the paper's band" at the paper's number."""
    c = critical("spread", n_sigma, n_seeds)
    spreads = np.random.default_rng(seed).normal(truth, sd, size=(reps, n_seeds))
    mean, se = spreads.mean(axis=1), spreads.std(axis=1, ddof=1) / math.sqrt(n_seeds)
    return float(((mean - c.low * se >= band[0]) & (mean + c.high * se <= band[1])).mean())


def spread_noise(ds: Any, optimizers: Iterable[str], sigma_ws: Iterable[float]) -> dict[str, dict[str, float]]:
    """The standard deviation over seeds (pp) of the per-seed cross-fitted spread over ``sigma_ws`` of each of
    ``optimizers`` in ``ds`` (an experiment 01 Dataset), for the selected and the final predictor: the record's
    noise a design's power is computed at."""
    from ..statistics.stats import cross_fitted_spreads

    out = {}
    for optimizer in optimizers:
        one = ds.sel(optimizer=optimizer, sigma_w=list(sigma_ws))
        out[optimizer] = {
            predictor: float(cross_fitted_spreads(one[f"{predictor}_test_acc"]).std(ddof=1))
            for predictor in ("selected", "final")
        }
    return out


def read_design(path: str | Path) -> dict[str, Any]:
    """A design record (JSON)."""
    return json.loads(Path(path).read_text())


@dataclass(frozen=True)
class Declaration:
    """The commit that declared a design record's present content, and its time (UTC)."""

    commit: str
    date: _dt.datetime

    @property
    def when(self) -> str:
        """``"1a2b3c4 (2026-12-07 00:12 UTC)"``: the short commit and its time, as pages print a declaration."""
        return f"{self.commit[:7]} ({self.date:%Y-%m-%d %H:%M} UTC)"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout.strip()


def declared(path: str | Path, root: str | Path | None = None) -> Declaration | None:
    """The oldest commit whose version of ``path`` is its present content (None: not committed as it is now, or
    no git history here)."""
    path = Path(path).resolve()
    root = Path(root) if root is not None else path.parent
    try:
        top = Path(_git(root, "rev-parse", "--show-toplevel"))
        rel = path.relative_to(top).as_posix()
        content = path.read_bytes()
        found = None
        for line in _git(top, "log", "--format=%H %cI", "--", rel).splitlines():
            commit, date = line.split(" ", 1)
            blob = subprocess.run(["git", "-C", str(top), "show", f"{commit}:{rel}"], capture_output=True, check=False)
            if blob.returncode != 0 or blob.stdout != content:
                break
            found = Declaration(commit, _dt.datetime.fromisoformat(date))
        return found
    except (subprocess.CalledProcessError, OSError, ValueError):
        return None


def undeclared_runs(created: Iterable[str], declaration: Declaration | None) -> int:
    """How many runs (their ``created`` times, ISO 8601) are older than the declaration (all of them where there is
    none)."""
    times = [_dt.datetime.fromisoformat(t) for t in created]
    if declaration is None:
        return len(times)
    return sum(t < declaration.date for t in times)


#: The folder, beside a study's design record, of its amendments (one ``<name>.json`` each).
AMENDMENTS_DIR = "amendments"


@dataclass(frozen=True)
class Amendment:
    """A rule of a study changed after its design record was declared: its ``name`` (the record's file stem), its
    ``record`` (``amends``: the design's field it changes, ``rule``: the rule now, ``why``) and the commit that
    declared the record's present content (None: not committed as it is now)."""

    name: str
    record: Mapping[str, Any]
    declaration: Declaration | None


def amendments(design_path: str | Path) -> list[Amendment]:
    """The amendments of the design record at ``design_path`` (JSON records in :data:`AMENDMENTS_DIR` beside it, read
    with :func:`json.loads`), by name; the folder's listing is noted (:func:`initmem.base.reads.listed`), so that a
    page reading them re-executes when one is added."""
    from ...base.reads import listed, note

    folder = Path(design_path).parent / AMENDMENTS_DIR
    return [Amendment(p.stem, json.loads(note(p).read_text()), declared(p)) for p in listed(folder, "*.json")]


def write_amendment(design_path: str | Path, name: str, record: Mapping[str, Any]) -> Path:
    """Write ``record`` as the amendment ``name`` of the design at ``design_path``; committing it declares it."""
    return _write_record(Path(design_path).parent / AMENDMENTS_DIR / f"{name}.json", record)


def _write_record(path: Path, record: Mapping[str, Any]) -> Path:
    """Write a declared record as JSON (sorted keys, one line per key), creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(record), indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return path


#: The folder, under a results folder, of the ledger's rule declarations (one ``<claim>.json`` each).
DECLARATIONS_DIR = "declarations"


def rule_record(claim: str) -> dict[str, Any]:
    """What declaring ``claim``'s rule commits: the rule as the ledger prints it
    (:data:`initmem.study.verdicts.ledger.RULES`) and the paper's record it judges against (numbers, band share)."""
    from .ledger import RULES, claim_record

    return {"claim": claim, "rule": RULES[claim], "paper": claim_record(claim)}


def rule_path(results_dir: str | Path, claim: str) -> Path:
    """Where ``claim``'s rule declaration lives under ``results_dir`` (the one holding every preset's folder)."""
    return Path(results_dir) / DECLARATIONS_DIR / f"{claim}.json"


def declare_rule(results_dir: str | Path, claim: str) -> Path:
    """Write ``claim``'s :func:`rule_record` to its :func:`rule_path` (JSON); committing it declares the rule."""
    return _write_record(rule_path(results_dir, claim), rule_record(claim))


@dataclass(frozen=True)
class RuleStatus:
    """A declared rule against its runs: what it judges (``subject``: a claim such as ``"C1"``, or a study's design
    such as ``"GPU rung"``), its declaration (None: its record is not committed as it is now), whether the record is
    the rule printed now (``current``), its runs' creation times (ISO 8601, sorted) and the experiment they belong to."""

    subject: str
    declaration: Declaration | None
    current: bool
    created: tuple[str, ...]
    experiment: str = ""

    @property
    def early(self) -> int:
        """How many runs are older than the declaration (all of them without one, or when the record is stale)."""
        return undeclared_runs(self.created, self.declaration if self.current else None)

    def text(self) -> str:
        """``"declared at 1a2b3c4 (2026-12-07 00:12 UTC); 100 runs, 2026-12-01 to 2026-12-02: all older, so the
        rule was not declared before its data"``."""
        if not self.current:
            when = "its declaration differs from the rule printed now"
        elif self.declaration is None:
            when = "its declaration is not committed in this checkout's history"
        else:
            when = f"declared at {self.declaration.when}"
        if not self.created:
            return f"{when}; no runs"
        runs = f"{len(self.created)} runs, {self.created[0][:10]} to {self.created[-1][:10]}"
        early = self.early
        if not early:
            return f"{when}; {runs}: every run younger than its rule"
        share = "all" if early == len(self.created) else f"{early}"
        return f"{when}; {runs}: {share} older, so the rule was not declared before its data"


def rule_status(results_dir: str | Path, claim: str, created: Iterable[str], experiment: str = "") -> RuleStatus:
    """:class:`RuleStatus` of ``claim`` with its runs' ``created`` times, from its declaration under ``results_dir``."""
    from ...base.reads import note

    path = rule_path(results_dir, claim)
    current = path.is_file() and json.loads(note(path).read_text()) == rule_record(claim)
    return RuleStatus(claim, declared(path) if current else None, current, tuple(sorted(created)), experiment)


def ledger_statuses(results_dir: str | Path, preset: str, experiments: Mapping[str, Any]) -> list[RuleStatus]:
    """:func:`rule_status` of every claim the ledger judges (:data:`initmem.study.verdicts.judges.RULES`, in its order) whose
    experiment (:func:`initmem.study.experiments.judged_by`) is in ``experiments`` (name -> combined Dataset), with
    the creation times of that experiment's runs under ``results_dir/<preset>/<experiment>/runs``."""
    from ..costs.results import run_attributes
    from ..experiments import judged_by
    from .judges import RULES

    created: dict[str, list[str]] = {}
    out = []
    for claim in RULES:
        name = judged_by(claim)
        if name not in experiments:
            continue
        if name not in created:
            runs_dir = Path(results_dir) / preset / name / "runs"
            created[name] = [str(a.get("created", "")) for _, a in run_attributes(experiments[name], runs_dir)]
        out.append(rule_status(results_dir, claim, created[name], name))
    return out

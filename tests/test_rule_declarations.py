"""The ledger's rules, declared as records (initmem.study.verdicts.preregistration): a rule counts as declared from the commit
that added its record as printed now; a claim whose runs are older than that is flagged in words; a rule changed
without being declared again is caught here."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import nbformat
import pytest

from git_repo import full_history, git  # tests/ is on sys.path under pytest
from initmem.study.costs import results
from initmem.study.design import presets
from initmem.study.verdicts import preregistration
from initmem.study.verdicts.judges import RULES

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "generated" / "99_reproduction.ipynb"


def test_a_rule_is_declared_by_the_commit_of_its_record_and_runs_before_it_are_flagged(tmp_path, monkeypatch):
    git(tmp_path, "init", "-q")
    path = preregistration.declare_rule(tmp_path, "C1")
    assert json.loads(path.read_text()) == preregistration.rule_record("C1")
    runs = ["2026-12-01T10:00:00+00:00", "2026-12-05T10:00:00+00:00"]

    uncommitted = preregistration.rule_status(tmp_path, "C1", runs)
    assert uncommitted.declaration is None and uncommitted.early == 2
    assert "not committed" in uncommitted.text() and "not declared before its data" in uncommitted.text()

    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "declare C1", date="2026-12-03T00:00:00+00:00")
    status = preregistration.rule_status(tmp_path, "C1", reversed(runs))
    assert status.declaration is not None and status.declaration.commit == git(tmp_path, "rev-parse", "HEAD")
    assert status.created == tuple(runs) and status.early == 1
    assert status.text() == (
        f"declared at {status.declaration.commit[:7]} (2026-12-03 00:00 UTC); 2 runs, 2026-12-01 to 2026-12-05: 1 "
        "older, so the rule was not declared before its data"
    )
    later = preregistration.rule_status(tmp_path, "C1", runs[1:])
    assert later.early == 0 and later.text().endswith(
        "1 runs, 2026-12-05 to 2026-12-05: every run younger than its rule"
    )

    # the rule printed changes and is not declared again: every run counts as undeclared, and the text says why
    changed = {**preregistration.rule_record("C1"), "rule": "another rule"}
    monkeypatch.setattr(preregistration, "rule_record", lambda claim: changed)
    stale = preregistration.rule_status(tmp_path, "C1", runs[1:])
    assert not stale.current and stale.early == 1 and "differs from the rule printed now" in stale.text()


@pytest.mark.parametrize("claim", list(RULES))
def test_every_ledger_rule_is_declared_as_it_is_printed(claim):
    """Changing how a rule reads (or the paper's record it judges against) means declaring it again:
    ``python scripts/declare_rules.py CLAIM`` and a commit, which the ledger then flags against older runs."""
    path = preregistration.rule_path(ROOT / "results", claim)
    assert path.is_file(), f"{claim}: no declaration; run scripts/declare_rules.py {claim} and commit it"
    assert json.loads(path.read_text()) == preregistration.rule_record(claim), (
        f"{claim}: its rule changed since it was declared; run scripts/declare_rules.py {claim} and commit it"
    )


@pytest.mark.skipif(not full_history(), reason="no full git history here (a shallow clone or no git)")
def test_every_claim_whose_runs_are_older_than_its_rule_is_flagged_on_the_ledgers_page():
    """Recomputed from the run files themselves: a claim with a run older than its rule's declaration must say so on
    the committed ledger page (its row's block)."""
    page = nbformat.read(PAGE, as_version=4)
    shown = json.dumps([cell.get("outputs", []) for cell in page.cells], ensure_ascii=False)
    experiments = results.load_results(ROOT / "results", "cpu", presets.NOTEBOOK_READS["99_reproduction"])
    for status in preregistration.ledger_statuses(ROOT / "results", "cpu", experiments):
        created = []
        for path in sorted((ROOT / "results" / "cpu" / status.experiment / "runs").glob("*.nc")):
            with h5py.File(path, "r") as run:
                created.append(str(run.attrs["created"]))
        declaration = preregistration.declared(preregistration.rule_path(ROOT / "results", status.subject))
        older = preregistration.undeclared_runs(created, declaration)
        assert status.text() in shown, f"{status.subject}: the page does not show {status.text()!r}"
        assert ("not declared before its data" in status.text()) == bool(older), status.subject


def test_a_run_reused_from_another_experiments_store_is_found_and_a_missing_one_left_out(tmp_path):
    """At the smoke preset chapter 10 reuses runs that 03 trained: their files live in 03's store, not 10's."""
    import numpy as np
    import xarray as xr

    from initmem.study.costs.results import run_attributes

    own, other = tmp_path / "smoke" / "10_phase_diagram" / "runs", tmp_path / "smoke" / "03_lr_and_l2" / "runs"
    for folder, name, created in (
        (own, "aaaa", "2026-12-01T00:00:00+00:00"),
        (other, "bbbb", "2026-12-02T00:00:00+00:00"),
    ):
        folder.mkdir(parents=True)
        with h5py.File(folder / f"{name}.nc", "w") as run:
            run.attrs["created"] = created
    ds = xr.Dataset({"run_hash": ("seed", np.array(["aaaa", "bbbb", "cccc", ""], dtype=object))})
    found = [(point, str(attrs["created"])[:10]) for point, attrs in run_attributes(ds, own)]
    assert found == [({"seed": 0}, "2026-12-01"), ({"seed": 1}, "2026-12-02")]

"""The mutation tester's operators (scripts/mutate.py): each kind finds its sites and writes a mutant that compiles."""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = '''
"""A module docstring (never mutated)."""
import numpy as np


def judge(values, other):
    """A docstring (never mutated)."""
    keep = np.isfinite(values).all(axis=0)
    centre = np.mean(values[:, keep], axis=-1)
    spread = np.std(values, ddof=1)
    if any(v > 0 for v in values.ravel()):
        return max(centre.max() - other, spread)
    return None
'''


def _mutate_module(monkeypatch):
    spec = importlib.util.spec_from_file_location("mutate", REPO / "scripts" / "mutate.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "mutate", module)  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def test_each_operator_finds_its_sites_and_every_mutant_compiles(tmp_path, monkeypatch):
    mutate = _mutate_module(monkeypatch)
    monkeypatch.setattr(mutate, "ROOT", tmp_path)  # mutants_of names the module relative to the repository
    path = tmp_path / "judge.py"
    path.write_text(SOURCE)
    mutants = mutate.mutants_of(path)
    kinds = Counter(m.kind for m, _ in mutants)
    # three deletable statements (keep, centre, spread), one return of a value (the `return None` is not one)
    assert kinds["statement"] == 3 and kinds["return"] == 1
    assert kinds["reduce"] == 1 and kinds["anyall"] == 2 and kinds["ddof"] == 1  # np.mean; .all and any; ddof=1
    assert kinds["argswap"] == 1  # max(a, b): np.isfinite, np.mean and np.std have one positional argument
    by_kind = {m.kind: (m, source) for m, source in mutants}
    for kind, (mutant, source) in by_kind.items():
        ast.parse(source)  # every mutant is valid Python
        assert mutant.before != mutant.after, kind
    assert "np.median(values[:, keep], axis=-1)" in by_kind["reduce"][1]
    assert "ddof=0" in by_kind["ddof"][1]
    assert "max(spread, centre.max() - other)" in by_kind["argswap"][1]
    assert '"""A docstring (never mutated)."""' in by_kind["statement"][1]  # a docstring is never deleted

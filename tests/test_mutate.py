"""The mutation tester's operators (scripts/mutate.py): each kind finds its sites and writes a mutant that compiles."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from repo_scripts import load_script

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


def _mutate_module():
    return load_script("scripts/mutate.py")


def test_each_operator_finds_its_sites_and_every_mutant_compiles(tmp_path, monkeypatch):
    mutate = _mutate_module()
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


BOUNDARY_SOURCE = '''
"""Rules with edges."""
import numpy as np

MARGIN_PP = 5.0
BAND = (-0.3, 0.3)
MIN_CELLS = 4


def rule(values, gap, n):
    """The keyword flags and the compared constants are the issue-45 sites."""
    mean = values.mean("seed", skipna=True)
    cells = values.sel(sigma_w=0.0, drop=True)
    order = sorted(values, reverse=False)
    total = np.sum(values, axis=0, keepdims=True)
    if n < MIN_CELLS or gap >= MARGIN_PP:
        return None
    return mean < 90.0, cells > -0.3, n >= 4, order, total
'''


def _kinds(tmp_path, monkeypatch, source):
    mutate = _mutate_module()
    monkeypatch.setattr(mutate, "ROOT", tmp_path)
    path = tmp_path / "rule.py"
    path.write_text(source)
    return mutate, mutate.mutants_of(path)


def test_a_literal_boolean_keyword_argument_is_flipped_by_the_keyword_kind(tmp_path, monkeypatch):
    _, mutants = _kinds(tmp_path, monkeypatch, BOUNDARY_SOURCE)
    flips = {(m.before, m.after) for m, _ in mutants if m.kind == "keyword"}
    assert flips == {("True", "False"), ("False", "True")}
    sources = [source for m, source in mutants if m.kind == "keyword"]
    assert len(sources) == 4  # skipna, drop, reverse, keepdims: one mutant each
    assert any("skipna=False" in s for s in sources) and any("drop=False" in s for s in sources)
    assert any("reverse=True" in s for s in sources) and any("keepdims=False" in s for s in sources)
    assert not any(m.kind == "constant" and m.before in ("True", "False") for m, _ in mutants)


def test_a_compared_constant_is_nudged_across_its_edge_by_the_boundary_kind(tmp_path, monkeypatch):
    mutate, mutants = _kinds(tmp_path, monkeypatch, BOUNDARY_SOURCE)
    boundary = {(m.line, m.before, m.after) for m, _ in mutants if m.kind == "boundary"}
    line = 1 + BOUNDARY_SOURCE.splitlines().index("    return mean < 90.0, cells > -0.3, n >= 4, order, total")
    # a float both ways by a relative 1e-3 (the 0.3 under the minus too), an int down by one (its +1 is "constant")
    assert boundary == {
        (line, "90.0", repr(90.0 - 0.09)),
        (line, "90.0", repr(90.0 + 0.09)),
        (line, "0.3", repr(0.3 - 0.0003)),
        (line, "0.3", repr(0.3 + 0.0003)),
        (line, "4", "3"),
    }
    sources = [source for m, source in mutants if m.kind == "boundary"]
    assert any(f"mean < {90.0 - 0.09!r}" in s for s in sources)
    assert any("n >= 3" in s for s in sources)
    assert any(f"cells > -{0.3 + 0.0003!r}" in s for s in sources)
    # a comparison against a named constant flips its operator (the "compare" kind): >= MARGIN_PP -> > MARGIN_PP
    compares = [source for m, source in mutants if m.kind == "compare"]
    assert any("gap > MARGIN_PP" in s for s in compares) and any("n <= MIN_CELLS" in s for s in compares)
    # the older kinds keep their indices: the new sites come after them
    kinds = [m.kind for m, _ in mutants]
    first_new = min(i for i, k in enumerate(kinds) if k == "boundary")
    assert "boundary" not in kinds[:first_new] and all(k in ("boundary", "module-constant") for k in kinds[first_new:])
    assert mutate.BOUNDARY_STEP == 1e-3


def test_a_module_level_constant_moves_up_and_down_by_the_module_constant_kind(tmp_path, monkeypatch):
    _, mutants = _kinds(tmp_path, monkeypatch, BOUNDARY_SOURCE)
    moves = sorted((m.line, m.before, m.after) for m, _ in mutants if m.kind == "module-constant")
    assert moves == sorted(
        [
            (5, "5.0", repr(5.0 * 1.1)),
            (5, "5.0", repr(5.0 * 0.9)),
            *[(6, "0.3", repr(0.3 * 1.1)), (6, "0.3", repr(0.3 * 0.9))] * 2,  # both edges of the band
            (7, "4", "5"),
            (7, "4", "3"),
        ]
    )
    sources = [source for m, source in mutants if m.kind == "module-constant"]
    assert any(f"BAND = (-{0.3 * 0.9!r}, 0.3)" in s for s in sources)
    assert any("MIN_CELLS = 3" in s for s in sources)
    for mutant, source in mutants:
        ast.parse(source)
        assert mutant.before != mutant.after, mutant

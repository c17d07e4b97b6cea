"""A small mutation tester: do the tests notice when the judge's code is wrong?

Usage: python scripts/mutate.py MODULE.py [MODULE.py ...] --tests TESTS [--sample N] [--seed S] [--timeout SECONDS]
                                [--report mutants.json]

Each mutant changes ONE place of one module: a comparison flipped (``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <->
``!=``, ``is None`` <-> ``is not None``), a sign swapped (``+`` <-> ``-``, a unary minus dropped), a numeric
constant shifted (x -> 1.1 x, 0 -> 1, 1 -> 2), ``min`` <-> ``max``, ``and`` <-> ``or``, a ``not`` dropped, ``True``
<-> ``False``; a statement of a function body deleted (an assignment, an augmented assignment or a call: ``pass``
instead), a returned value replaced by ``None``, a mean taken as a median (``np.mean`` <-> ``np.median``,
``np.nanmean`` <-> ``np.nanmedian``), ``any`` <-> ``all`` (built-in, ``np.`` and methods), ``ddof`` 0 <-> 1, and the
first two positional arguments of a call swapped. Two operators aim at the places where a rule's edge lives (issue
45): ``keyword`` flips a literal ``True``/``False`` keyword argument of a call (``skipna=True`` -> ``False``,
``drop=True``, ``sort=False``, ``keepdims=True``; the same flip the ``constant`` kind made before, named apart so
its share is counted); ``boundary`` nudges a numeric constant of a comparison across its edge (a float by a
relative 1e-3 either way, ``< 90.0`` -> ``< 89.91`` or ``< 90.09``; an int down by one, ``< 4`` -> ``< 3``, the
step up being the ``constant`` kind's), and ``module-constant`` moves a module-level numeric constant (``MARGIN_PP =
5.0``, a band's edges ``(-0.3, 0.3)``) by x1.1 and x0.9 (an int by +1 and -1). A comparison against a named
constant (``>= MARGIN_PP`` -> ``> MARGIN_PP``) is the ``compare`` kind. Docstrings and f-string text are never mutated. For each mutant the package is copied to a
temporary folder with the mutated file, and ``pytest -x`` runs ``TESTS`` against it (``PYTHONPATH`` points at the
copy); a failing test kills the mutant. Survivors are printed with their line, so each can be judged: a missing
test, or an equivalent mutant (one that cannot change any result, e.g. a tie-breaking ``<=`` where values never tie).

``--sample N`` draws N mutants per module at random (``--seed``); without it every mutant runs. ``--survivors
REPORT`` runs again only the mutants that survived in an earlier ``--report`` (after tests were added for them); the
module's source must be the one that report was made from, since a mutant is found again by its index.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from initmem.base.docstrings import docstring_statements

ROOT = Path(__file__).resolve().parents[1]
_COMPARE_SWAPS = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
#: The comparisons whose numeric operand has an edge a "boundary" mutant nudges (not ``==``: no side to cross to).
_ORDER_OPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
#: The relative step of a float's "boundary" mutant and the factors of a "module-constant" mutant.
BOUNDARY_STEP = 1e-3
MODULE_FACTORS = {"up": 1.1, "down": 0.9}
_BINOP_SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}
#: Reductions swapped by the "reduce" and "anyall" kinds: ``np.<name>`` calls and, for any/all, methods and builtins.
_REDUCE_SWAPS = {"mean": "median", "median": "mean", "nanmean": "nanmedian", "nanmedian": "nanmean"}
_ANYALL_SWAPS = {"any": "all", "all": "any"}
#: Statements a "statement" mutant deletes (replaced by ``pass``), inside function bodies.
_DELETABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)


@dataclass
class Mutant:
    module: str
    index: int
    line: int
    kind: str
    before: str
    after: str
    killed: bool | None = None
    seconds: float = 0.0


def _docstring_nodes(tree: ast.AST) -> set[int]:
    """ids of the Constant nodes that are docstrings or the text of f-strings (never mutated)."""
    skip = {id(doc.value) for doc in docstring_statements(tree)}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values if isinstance(v, ast.Constant))
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            skip.update(id(v) for v in ast.walk(node.format_spec))
    return skip


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def _module_constants(tree: ast.AST, skip: set[int]) -> list[ast.Constant]:
    """The numeric constants assigned at module level (``NAME = 5.0``, ``BAND = (-0.3, 0.3)``, ``X: float = 1e-3``)."""
    out = []
    for statement in getattr(tree, "body", []):
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            out.extend(n for n in ast.walk(statement.value) if _is_number(n) and id(n) not in skip)
    return out


def _compared_constants(tree: ast.AST, skip: set[int]) -> list[ast.Constant]:
    """The numeric constants that are an operand of a comparison (``x < 90``, ``p >= -0.3``: the 0.3 under the
    minus)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(type(op) in _ORDER_OPS for op in node.ops):
            for operand in (node.left, *node.comparators):
                if isinstance(operand, ast.UnaryOp) and isinstance(operand.op, ast.USub):
                    operand = operand.operand
                if _is_number(operand) and id(operand) not in skip:
                    out.append(operand)
    return out


def _sites(tree: ast.AST) -> list[tuple[ast.AST, str, object]]:
    """Every mutation site as (node, kind, detail). The issue-45 kinds (``boundary``, the step down of
    ``module-constant``) come after the others, so that the older kinds keep their indices."""
    out = _older_sites(tree)
    skip = _docstring_nodes(tree)
    for node in _compared_constants(tree, skip):
        if isinstance(node.value, float):
            out.extend([(node, "boundary", -1), (node, "boundary", +1)])
        else:
            out.append((node, "boundary", -1))
    out.extend((node, "module-constant", "down") for node in _module_constants(tree, skip))
    return out


def _older_sites(tree: ast.AST) -> list[tuple[ast.AST, str, object]]:
    skip = _docstring_nodes(tree)
    keywords = {id(k.value) for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords}
    module_level = {id(n) for n in _module_constants(tree, skip)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.extend(
                (statement, "statement", None)
                for statement in node.body
                if isinstance(statement, _DELETABLE)
                and not (isinstance(statement, ast.Expr) and id(statement.value) in skip)
            )
        if isinstance(node, ast.Return) and node.value is not None and not _is_none(node.value):
            out.append((node, "return", None))
        if isinstance(node, ast.Call):
            out.extend(_call_sites(node))
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in _COMPARE_SWAPS:
                    out.append((node, "compare", i))
        elif isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAPS:
            out.append((node, "binop", None))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
            out.append((node, "unary", None))
        elif isinstance(node, ast.BoolOp):
            out.append((node, "boolop", None))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
            out.append((node, "minmax", None))
        elif isinstance(node, ast.Constant) and id(node) not in skip:
            if isinstance(node.value, bool):
                out.append((node, "keyword" if id(node) in keywords else "constant", None))
            elif _is_number(node):
                out.append((node, "module-constant" if id(node) in module_level else "constant", "up"))
    return out


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _call_sites(node: ast.Call) -> list[tuple[ast.AST, str, object]]:
    """The call-level sites of ``node``: a reduction or any/all swapped, ``ddof`` flipped, two arguments swapped."""
    out: list[tuple[ast.AST, str, object]] = []
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    on_numpy = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np"
    if on_numpy and name in _REDUCE_SWAPS:
        out.append((node, "reduce", None))
    if name in _ANYALL_SWAPS:
        out.append((node, "anyall", None))
    for i, keyword in enumerate(node.keywords):
        if keyword.arg == "ddof" and isinstance(keyword.value, ast.Constant) and keyword.value.value in (0, 1):
            out.append((node, "ddof", i))
    if len([a for a in node.args if not isinstance(a, ast.Starred)]) >= 2 and not isinstance(node.args[0], ast.Starred):
        if ast.dump(node.args[0]) != ast.dump(node.args[1]):
            out.append((node, "argswap", None))
    return out


def _mutate(node: ast.AST, kind: str, detail: object) -> ast.AST:
    """A mutated copy of ``node``."""
    new = copy.deepcopy(node)
    if kind == "compare":
        new.ops[detail] = _COMPARE_SWAPS[type(new.ops[detail])]()
    elif kind == "binop":
        new.op = _BINOP_SWAPS[type(new.op)]()
    elif kind == "unary":
        return copy.deepcopy(new.operand)
    elif kind == "boolop":
        new.op = ast.Or() if isinstance(new.op, ast.And) else ast.And()
    elif kind == "minmax":
        new.func.id = "max" if new.func.id == "min" else "min"
    elif kind == "statement":
        return ast.Pass()
    elif kind == "return":
        new.value = ast.Constant(None)
    elif kind in ("reduce", "anyall"):
        swaps = _REDUCE_SWAPS if kind == "reduce" else _ANYALL_SWAPS
        if isinstance(new.func, ast.Attribute):
            new.func.attr = swaps[new.func.attr]
        else:
            new.func.id = swaps[new.func.id]
    elif kind == "ddof":
        new.keywords[detail].value = ast.Constant(1 - new.keywords[detail].value.value)
    elif kind == "argswap":
        new.args[0], new.args[1] = new.args[1], new.args[0]
    elif kind == "boundary":
        value = new.value
        if isinstance(value, float):
            step = BOUNDARY_STEP * abs(value) if value else BOUNDARY_STEP
            new.value = value + detail * step
        else:
            new.value = value + detail
    elif kind == "module-constant":
        value, sign = new.value, 1 if detail == "up" else -1
        if isinstance(value, float):
            new.value = value * MODULE_FACTORS[detail] if value else sign * 0.1
        else:
            new.value = value + sign
    elif kind in ("constant", "keyword"):
        value = new.value
        if isinstance(value, bool):
            new.value = not value
        elif value == 0:
            new.value = 1
        elif value == 1:
            new.value = 2
        else:
            new.value = type(value)(value * 1.1) if isinstance(value, float) else value + 1
    return new


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST):
        self.target, self.replacement = target, replacement

    def generic_visit(self, node):
        if node is self.target:
            return self.replacement
        return super().generic_visit(node)

    def visit(self, node):
        if node is self.target:
            return self.replacement
        return super().visit(node)


def mutants_of(path: Path) -> list[tuple[Mutant, str]]:
    """Every mutant of ``path`` with its mutated source (sites are found anew in a fresh parse for each mutant, so
    that one mutation never leaks into the next)."""
    source = path.read_text()
    out = []
    for k, (node, kind, detail) in enumerate(_sites(ast.parse(source))):
        fresh = ast.parse(source)
        target, _, _ = _sites(fresh)[k]
        replacement = _mutate(target, kind, detail)
        fresh = ast.fix_missing_locations(_Replace(target, replacement).visit(fresh))
        mutant = Mutant(
            str(path.relative_to(ROOT)),
            k,
            getattr(node, "lineno", 0),
            kind,
            ast.unparse(node),
            ast.unparse(replacement),
        )
        out.append((mutant, ast.unparse(fresh)))
    return out


def run_mutant(mutant: Mutant, source: str, tests: list[str], timeout: float) -> Mutant:
    with tempfile.TemporaryDirectory(prefix="mutant-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
        (src / Path(mutant.module).relative_to("src")).write_text(source)
        env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
        start = time.perf_counter()
        try:
            result = subprocess.run(
                [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                cwd=ROOT,
                env=env,
                capture_output=True,
                timeout=timeout,
            )
            mutant.killed = result.returncode != 0
        except subprocess.TimeoutExpired:
            mutant.killed = True  # a mutant that hangs the tests is noticed
        mutant.seconds = time.perf_counter() - start
    return mutant


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="+", type=Path)
    parser.add_argument("--tests", required=True, help="pytest arguments, comma-separated (e.g. tests/test_rules.py)")
    parser.add_argument("--sample", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--report", type=Path, default=None)
    parser.add_argument("--survivors", type=Path, default=None, help="an earlier --report: rerun its survivors only")
    args = parser.parse_args()
    tests = [t for t in args.tests.split(",") if t]
    survivors = None
    if args.survivors:
        earlier = json.loads(args.survivors.read_text())
        survivors = {(m["module"], m["index"]) for m in earlier if not m["killed"]}
    done: list[Mutant] = []
    for module in args.modules:
        candidates = mutants_of(module.resolve())
        if survivors is not None:
            candidates = [(m, source) for m, source in candidates if (m.module, m.index) in survivors]
        elif args.sample and args.sample < len(candidates):
            candidates = random.Random(args.seed).sample(candidates, args.sample)
        print(f"{module}: {len(candidates)} mutants", flush=True)
        for mutant, source in candidates:
            run_mutant(mutant, source, tests, args.timeout)
            done.append(mutant)
            status = "killed" if mutant.killed else "SURVIVED"
            print(
                f"  {status:8s} {mutant.module}:{mutant.line} {mutant.kind}: {mutant.before!r} -> {mutant.after!r} "
                f"({mutant.seconds:.0f} s)",
                flush=True,
            )
            if args.report:
                args.report.write_text(json.dumps([asdict(m) for m in done], indent=1))
    killed = sum(m.killed for m in done)
    print(f"killed {killed} of {len(done)} ({100 * killed / max(1, len(done)):.0f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The package's layers: every import runs downward, and the module graph has no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "initmem"

#: Layers from the bottom up; a module may import from its own layer and the ones before it.
LAYERS = ("base", "run", "sweeps", "study", "theory", "book", "cli", "__init__")
#: theory sits beside study: neither may import the other.
SIBLINGS = {("theory", "study"), ("study", "theory")}
#: Arrows downward that are still forbidden: the book tooling receives parsed parameters and built results, and
#: reaches the runs only through the sweeps and the study (the command line parses ``-p`` values and run configs).
FORBIDDEN = {("book", "run")}
#: What theory may import besides itself: base only (its shared constants are in base.constants). ``run`` is torch;
#: the numpy theory must not need it.
THEORY_MAY_IMPORT = ("base", "theory")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1] if parts[1] != "__main__" else "cli"


def _imports(path: Path) -> set[str]:
    """Every initmem module that ``path`` imports, at module level or inside functions."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "initmem")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "initmem":
                continue
            for alias in node.names:  # ``from initmem.study import costs`` imports the module initmem.study.costs
                candidate = f"{target}.{alias.name}"
                found.add(candidate if _exists(candidate) else target)
    found.discard(module)
    return found


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
GRAPH = {name: {m for m in _imports(path) if m in MODULES} for name, path in MODULES.items()}


def test_the_layers_are_folders_with_a_docstring_saying_what_they_own():
    for layer in LAYERS[:-2]:
        init = PACKAGE / layer / "__init__.py"
        assert init.is_file(), f"layer {layer} is not a package"
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc and "import" in doc, f"{layer}/__init__.py must say what the layer may import"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_run_downward(module):
    here = LAYERS.index(_layer(module))
    for target in GRAPH[module]:
        there = LAYERS.index(_layer(target))
        if (_layer(module), _layer(target)) in SIBLINGS:
            pytest.fail(f"{module} imports {target}: theory and study are siblings, neither may import the other")
        if (_layer(module), _layer(target)) in FORBIDDEN:
            pytest.fail(f"{module} imports {target}: {_layer(module)} may not import {_layer(target)}")
        assert there <= here, f"{module} ({_layer(module)}) imports {target} from a higher layer ({_layer(target)})"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) == "theory"))
def test_theory_imports_nothing_from_run(module):
    for target in GRAPH[module]:
        assert _layer(target) in THEORY_MAY_IMPORT, f"{module} imports {target}: the numpy theory may import base only"


#: The study's sub-packages, from the bottom up, and what each may import of the study besides itself. Statistics
#: stands apart from the records and their costs; the verdicts are built on both; the figures sit on top.
STUDY_MAY_IMPORT = {
    "experiments": (),
    "design": ("experiments",),
    "costs": ("experiments", "design"),
    "statistics": (),
    "verdicts": ("experiments", "design", "costs", "statistics"),
    "presentation": ("experiments", "design", "costs", "statistics", "verdicts"),
}


def _study_part(module: str) -> str | None:
    """The study sub-package that ``module`` belongs to (``"verdicts"`` for initmem.study.verdicts.rules), else None."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "study" else None


def test_the_study_is_sub_packages_each_saying_what_it_may_import_and_re_exporting_nothing():
    study = PACKAGE / "study"
    assert not sorted(p.name for p in study.glob("*.py") if p.name != "__init__.py"), "a study module outside a part"
    assert {p.parent.name for p in study.glob("*/__init__.py")} == set(STUDY_MAY_IMPORT)
    for part in STUDY_MAY_IMPORT:
        tree = ast.parse((study / part / "__init__.py").read_text())
        doc = ast.get_docstring(tree)
        assert doc and "import" in doc, f"study/{part}/__init__.py must say what the part may import"
        if part != "experiments":  # the experiments' package lists the records; the others hold only their docstring
            assert len(tree.body) == 1, f"study/{part}/__init__.py re-exports: import each name from its module"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _study_part(m)))
def test_the_study_parts_import_only_downward(module):
    part = _study_part(module)
    for target in GRAPH[module]:
        there = _study_part(target)
        assert target != "initmem.study", f"{module} imports the study package itself: import from a part"
        if there is not None and there != part:
            assert there in STUDY_MAY_IMPORT[part], (
                f"{module} ({part}) imports {target} ({there}): study/{part} may import {STUDY_MAY_IMPORT[part]}"
            )


def test_the_study_checker_sees_imports():
    assert "initmem.study.statistics.stats" in GRAPH["initmem.study.verdicts.rules"]
    assert "initmem.study.experiments" in GRAPH["initmem.study.verdicts.claims"]  # ``from .. import experiments``
    assert "initmem.study.verdicts.ladder" in GRAPH["initmem.study.presentation.plots.ladder"]


#: The one module allowed to offer names defined elsewhere: the package's documented public API
#: (``from initmem import measure_init_memory, train, ...``: the README, the API page and chapter U1).
PUBLIC_API = "initmem"


def _re_exports(path: Path) -> list[str]:
    """How ``path`` offers names it does not define: its ``__all__`` names an imported name (or is not a plain list
    of strings), it imports a name at module level that it never uses (kept only for its importers), or a module
    ``__getattr__`` imports another module (forwarding its names)."""
    tree = ast.parse(path.read_text())
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            imported.update({a.asname or a.name: f"{'.' * node.level}{node.module or ''}" for a in node.names})
        elif isinstance(node, ast.Import):
            imported.update({a.asname or a.name.split(".")[0]: a.name for a in node.names})
    found = []
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            elements = getattr(node.value, "elts", None)
            if elements is None or not all(isinstance(e, ast.Constant) for e in elements):
                found.append("__all__ is not a list of strings")
            found += [
                f"__all__ names {e.value}, imported from {imported[e.value]}"
                for e in elements or ()
                if e.value in imported
            ]
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "module", None) != "__future__":
            unused = [a.asname or a.name.split(".")[0] for a in node.names]
            found += [f"imports {name} and never uses it" for name in unused if name not in used]
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            calls = [ast.unparse(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)]
            found += ["its __getattr__ imports another module" for call in calls if call.endswith("import_module")]
    return found


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_name_has_one_home(module):
    """No module re-exports another's names: a name is imported from the module that defines it."""
    found = _re_exports(MODULES[module])
    if module == PUBLIC_API:
        assert found, f"{module} re-exports nothing any more: take it off the list"
        return
    assert not found, f"{module} offers names it does not define: {found}"


def test_the_re_export_checker_sees_re_exports(tmp_path):
    cases = {
        "from .a import b\n__all__ = ['b']\n": "__all__ names b",
        "from .a import b  # noqa: F401\n": "imports b and never uses it",
        "import importlib\ndef __getattr__(n):\n    return importlib.import_module('x')\n": "__getattr__ imports",
        "__all__ = [n for n in globals()]\n": "not a list of strings",
    }
    for code, expected in cases.items():
        (tmp_path / "m.py").write_text(code)
        assert any(expected in f for f in _re_exports(tmp_path / "m.py")), code
    (tmp_path / "m.py").write_text("from .a import b\n__all__ = ['c']\n\ndef c():\n    return b\n")
    assert _re_exports(tmp_path / "m.py") == []


#: What no benchmark may import: the trainers and the run records. A benchmark measures the package through its
#: own drivers (initmem.sweeps.driver.sweep, initmem.study.costs.results), so that what it times is what a user runs.
BENCHMARKS_MUST_NOT_IMPORT = ("initmem.run.training", "initmem.run.stacked", "initmem.run.records")


def _benchmark_imports(path: Path) -> set[str]:
    """The initmem modules a benchmark script imports (absolute imports; ``from initmem import train`` counts as
    the module that :data:`initmem.LAZY_EXPORTS` takes ``train`` from)."""
    from initmem import LAZY_EXPORTS

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("initmem"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("initmem"):
            found.add(node.module)
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(LAZY_EXPORTS.get(alias.name, name) if node.module == "initmem" else name)
    return found


@pytest.mark.parametrize("script", sorted(p.name for p in (PACKAGE.parents[1] / "benchmarks").glob("*.py")))
def test_benchmarks_import_no_trainer(script):
    imported = _benchmark_imports(PACKAGE.parents[1] / "benchmarks" / script)
    banned = sorted(m for m in imported if any(m == b or m.startswith(b + ".") for b in BENCHMARKS_MUST_NOT_IMPORT))
    assert not banned, f"benchmarks/{script} imports {banned}: measure through the package's drivers instead"


def test_the_benchmark_checker_sees_imports(tmp_path):
    script = tmp_path / "bench.py"
    script.write_text("from initmem import train\nfrom initmem.run import stacked\nimport initmem.run.records\n")
    assert set(BENCHMARKS_MUST_NOT_IMPORT) <= _benchmark_imports(script)


def test_no_import_cycle():
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(GRAPH[node]):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt) :] + [nxt] if nxt in path else [node, nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])


def test_the_checker_sees_imports():
    """Guard against a checker that finds nothing: known edges are present."""
    assert "initmem.run.config" in GRAPH["initmem.run.training"]
    assert "initmem.sweeps.store" in GRAPH["initmem.sweeps.executors"]
    assert "initmem.run.training" in GRAPH["initmem.sweeps.executors"]  # a function-level import
    assert "initmem.study.presentation.plots" not in GRAPH["initmem.run.training"]
    assert "initmem.base.constants" in GRAPH["initmem.theory.optimizers"]  # a relative import two levels up
    assert "initmem.base.files" in GRAPH["initmem.run.data.decode"]  # three levels up, from a subpackage
    assert "initmem.run.mapping_files" in GRAPH["initmem.cli.experiments"]  # the command line parses -p values


# --- what must not import torch ------------------------------------------------------------------------------------
#: Modules that import without torch: the analysis of committed results, the numpy theory, the torch-free constants.
TORCH_FREE = (
    "initmem",
    "initmem.base.constants",
    "initmem.run.config",
    "initmem.run.mapping_files",
    "initmem.run.elapsed",
    "initmem.run.thresholds",
    "initmem.run.variables",
    "initmem.sweeps",
    "initmem.study",
    "initmem.study.statistics.stats",
    "initmem.study.statistics.summary",
    "initmem.study.statistics.analysis",
    "initmem.study.verdicts.claims",
    "initmem.study.costs.results",
    "initmem.study.costs.costs",
    "initmem.study.verdicts.gpu_results",
    "initmem.study.design.preset_notes",
    "initmem.study.costs.timed",
    "initmem.sweeps.budget",
    "initmem.theory",
    "initmem.book.runner",
)


def _loads_torch(code: str) -> str:
    """Run ``code`` in a fresh interpreter on this checkout's source; it prints what it reports."""
    import subprocess
    import sys

    env = {"PYTHONPATH": str(PACKAGE.parent), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True
    ).stdout.strip()


def test_the_study_and_the_theory_import_no_torch():
    code = (
        "import importlib, sys\n"
        f"for name in {TORCH_FREE!r}:\n"
        "    importlib.import_module(name)\n"
        "    if 'torch' in sys.modules:\n"
        "        print(name); break\n"
        "else:\n"
        "    print('torch-free')\n"
    )
    assert _loads_torch(code) == "torch-free", "this module imported torch (first of TORCH_FREE to do so)"


def test_the_figures_and_the_theory_import_no_verdicts():
    """A theory page imports the theory and the figures; its record (what it used) must not name the ledger or the
    rules, or a change to a claim's number or band would mark every theory page stale."""
    code = (
        "import sys\n"
        "import initmem.theory, initmem.study.presentation.plots.figures, initmem.book.page\n"
        "print(sorted(m for m in ('initmem.study.verdicts.ledger', 'initmem.study.verdicts.rules', 'initmem.study.verdicts.judges') if m in sys.modules))\n"
    )
    assert _loads_torch(code) == "[]"


#: What ``initmem --version`` and ``initmem COMMAND --help`` must not import: each costs a large share of a second.
HEAVY = ("torch", "xarray", "pandas", "matplotlib")


def _commands() -> list[str]:
    from initmem.cli import build_parser

    return sorted(build_parser()._subparsers._group_actions[0].choices)


def _imported_by(argv: list[str]) -> tuple[str, set[str]]:
    """What ``python -X importtime -m initmem *argv`` prints, and every module it imports."""
    import subprocess
    import sys

    env = {"PYTHONPATH": str(PACKAGE.parent), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "initmem", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    return result.stdout, {line.rsplit("|", 1)[1].strip() for line in lines}


@pytest.mark.parametrize("argv", [["--version"], ["--help"], *([command, "--help"] for command in _commands())])
def test_the_command_line_answers_version_and_help_without_heavy_imports(argv):
    out, imported = _imported_by(argv)
    assert out.startswith("initmem ") or out.startswith("usage: initmem")
    assert {"initmem.cli", "argparse"} <= imported  # the import list is read
    heavy = sorted(m for m in imported if m.split(".")[0] in HEAVY)
    assert not heavy, f"initmem {' '.join(argv)} imports {heavy[:5]}"


#: The layers that ``initmem --version``, ``initmem --help`` and the light sub-commands' ``--help`` do not import
#: (the sub-commands' arguments are added when one is used): the run's config, the sweeps, the study's presets and
#: experiments, the files module.
NOT_FOR_THE_LIGHT_COMMANDS = (
    "initmem.run",
    "initmem.sweeps",
    "initmem.study.design.presets",
    "initmem.study.experiments",
    "initmem.base.files",
    "initmem.base.claims",
)


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["book", "--help"], ["download-data", "--help"]])
def test_version_and_the_light_commands_help_import_no_layer_they_do_not_use(argv):
    _, imported = _imported_by(argv)
    assert "initmem.cli" in imported  # the import list is read
    loaded = sorted(m for m in imported if m.startswith(NOT_FOR_THE_LIGHT_COMMANDS))
    assert not loaded, f"initmem {' '.join(argv)} imports {loaded[:5]}"


def test_a_commands_help_imports_what_its_arguments_need():
    """``train --help`` reads RunConfig's fields, ``experiments --help`` the presets' names (in the layout, not the
    presets' values, which import every experiment), ``sweep --help`` the cluster's flags (not the cluster): built on
    use, not before."""
    assert "initmem.run.config" in _imported_by(["train", "--help"])[1]
    experiments = _imported_by(["experiments", "--help"])[1]
    assert "initmem.study.design.layout" in experiments
    assert not {"initmem.study.design.presets", "initmem.study.experiments", "initmem.sweeps.cluster"} & experiments
    sweep = _imported_by(["sweep", "--help"])[1]
    assert "initmem.sweeps.cluster_flags" in sweep
    assert "initmem.sweeps.cluster" not in sweep


def test_the_help_check_covers_every_subcommand():
    assert {"train", "sweep", "experiments", "book", "download-data"} <= set(_commands())


def test_every_module_has_its_place_in_the_api_reference():
    """A module the reference does not document breaks the strict book build as soon as a docstring links to it; the
    experiment modules are documented through their package (one record each, read through the package's list)."""
    book = PACKAGE.parents[1] / "book"
    pages = "\n".join(p.read_text() for p in [book / "api.md", *sorted((book / "api").glob("*.md"))])
    documented = {line.split("::", 1)[1].strip() for line in pages.splitlines() if ".. automodule::" in line}
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py") if p.name != "__main__.py"}
    missing = sorted(m for m in modules - documented if not m.startswith("initmem.study.experiments."))
    assert not missing, f"modules without an automodule in book/api*.md: {missing}"

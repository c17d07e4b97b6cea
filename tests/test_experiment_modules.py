"""The experiment modules: found by listing their package, in module-name order, and the tables read from them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from initmem.run import optimizers
from initmem.study import experiments
from initmem.study.design import layout, presets, registry
from initmem.study.experiments import DISCOVERED
from initmem.study.verdicts import judges
from repo_scripts import load_script

REPO = Path(__file__).resolve().parents[1]


def _preset_specs():
    return load_script("scripts/preset_specs.py")


def _package(root: Path, name: str, modules: dict[str, str]) -> None:
    """A package ``name`` under ``root`` holding ``modules`` (module name -> the experiment name it declares)."""
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "_shared.py").write_text("VALUE = 1\n")  # a private module: not an experiment
    for module, experiment in modules.items():
        (folder / f"{module}.py").write_text(
            f"from initmem.study.experiments import Experiment\nEXPERIMENT = Experiment(name={experiment!r})\n"
        )


def test_a_new_module_is_found_in_module_name_order_and_private_modules_are_skipped(tmp_path, monkeypatch):
    _package(tmp_path, "scratch_chapters", {"e11_new": "11_new", "e02_old": "02_old", "e10_mid": "10_mid"})
    monkeypatch.syspath_prepend(str(tmp_path))
    found = experiments.discover([str(tmp_path / "scratch_chapters")], "scratch_chapters")
    assert [e.name for e in found] == ["02_old", "10_mid", "11_new"]
    for name in [m for m in sys.modules if m.startswith("scratch_chapters")]:
        monkeypatch.delitem(sys.modules, name)


def test_two_modules_declaring_one_name_are_refused(tmp_path, monkeypatch):
    _package(tmp_path, "scratch_twins", {"e01_a": "01_same", "e02_b": "01_same"})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"^experiments: two modules declare the same name: 01_same, 01_same$"):
        experiments.discover([str(tmp_path / "scratch_twins")], "scratch_twins")
    for name in [m for m in sys.modules if m.startswith("scratch_twins")]:
        monkeypatch.delitem(sys.modules, name)


@pytest.mark.parametrize("experiment", DISCOVERED, ids=lambda e: e.name)
def test_each_module_is_named_after_its_experiment_and_its_notebook_exists(experiment):
    module = next(m for m in sys.modules.values() if getattr(m, "EXPERIMENT", None) is experiment)
    assert module.__name__ == f"initmem.study.experiments.e{experiment.name}"
    assert (REPO / "notebooks" / f"{experiment.name}.py").is_file()
    assert set(experiment.notes) <= set(experiment.presets) <= set(layout.PRESETS)


def test_every_rule_is_judged_by_exactly_one_experiment_in_ledger_order():
    listed = [claim for e in DISCOVERED for claim in e.claims]
    assert sorted(listed) == sorted(judges.RULES) and len(set(listed)) == len(listed)
    every = judges.claims_of(DISCOVERED)
    assert [claim for claim, _, _ in every] == list(judges.RULES)
    assert all(judges.RULES[claim] is rule for claim, _, rule in every)
    assert dict((claim, name) for claim, name, _ in every)["C5"] == "04_batch_size"
    assert not hasattr(judges, "CLAIMS")  # one home: claims_of, asked for the experiments one means


def test_the_tables_hold_every_module_and_nothing_else():
    trained = [e.name for e in DISCOVERED if e.spec is not None]
    assert list(registry.EXPERIMENT_SPECS) == trained
    assert all(registry.EXPERIMENT_SPECS[e.name] is e.spec for e in DISCOVERED if e.spec is not None)
    for preset in layout.PRESETS:
        assert list(presets.NOTEBOOK_PARAMETERS[preset]) == [e.name for e in DISCOVERED if preset in e.presets]
    assert presets.NOTEBOOK_READS["07_clocks"] == registry.EXPERIMENTS
    assert set(presets.NOTEBOOK_READS["00_presets"]) == set(trained)


def test_the_preset_specs_order_is_every_modules_entries_by_rank():
    order = _preset_specs().ORDER
    ranks = [rank for e in DISCOVERED for rank in e.train_order.values()]
    assert len(order) == len(ranks) == len(set(ranks))
    assert {entry.partition(":")[0] for entry in order} <= set(registry.EXPERIMENT_SPECS)
    assert order[:3] == ("08_calibration", "01_optimizers:sgd", "01_optimizers")


def test_a_claim_is_judged_by_the_experiment_whose_module_lists_it():
    assert experiments.judged_by("C5") == "04_batch_size" and experiments.judged_by("B1") == "10_phase_diagram"
    with pytest.raises(ValueError, match=r"^claim: no experiment judges 'C9'; the experiments judge C1, C2, C7, C3"):
        experiments.judged_by("C9")


def _files_naming(text: str) -> list[str]:
    """The files of the package's source (``.py`` and ``.json``) whose text holds ``text``."""
    root = REPO / "src" / "initmem"
    return sorted(
        p.relative_to(root).as_posix()
        for p in [*root.rglob("*.py"), *root.rglob("*.json")]
        if text in p.read_text(encoding="utf-8")
    )


@pytest.mark.parametrize("experiment", DISCOVERED, ids=lambda e: e.name)
def test_an_experiments_name_is_written_in_at_most_two_source_files(experiment):
    """Its module, and at most one other (a module that shares its sweep, or a page's link): the judges, presets,
    notes and readers take the name from the module's declarations."""
    files = [f for f in _files_naming(experiment.name) if f.endswith(".py")]
    assert f"study/experiments/e{experiment.name}.py" in files and len(files) <= 2, files


@pytest.mark.parametrize("name", [n for n in optimizers.names() if n not in ("sgd", "adam")])
def test_an_optimizer_is_named_by_its_record_and_at_most_two_other_files(name):
    """Its record (run/optimizers.json), the fitted cost model and at most one experiment that lists it; every other
    list derives from the registry. SGD and Adam, the references that C1, C7 and the parity study judge against by
    name, are left out."""
    files = _files_naming(f'"{name}"')
    assert "run/optimizers.json" in files and len(files) <= 3, files


_ONE_CHAPTER = """
import sys
from initmem.book import page  # noqa: F401  (what every page imports)
from initmem.study.costs import results, reuse  # noqa: F401
from initmem.study.design import presets, registry  # noqa: F401
from initmem.study.presentation.plots import figures, style  # noqa: F401
from initmem.study.verdicts import claims  # noqa: F401
name = sys.argv[1]
parameters = presets.resolve_parameters(name, "cpu", {})
registry.experiment_spec(name, parameters)
presets.book_preset(name), registry.EXPERIMENT_ATTRS.get(name), registry.ZIPPED.get(name)
presets.NOTEBOOK_READS.get(name)
own = claims._own_claims(name, None)
judging = claims._judging({name: None}, own)
from initmem.base.reads import noted
assert not [n for n in noted() if n.endswith("e*.py")], noted()  # nothing listed the experiments
print(sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("initmem.study.experiments.e")), own, judging)
"""


def test_a_chapter_imports_its_own_experiment_module_only():
    """What a chapter's kernel asks for (its parameters, spec, book preset and claims) imports its module alone, so a
    page records (and is stale after an edit of) the experiment modules it uses, not every one."""
    import subprocess

    def loaded(name: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", _ONE_CHAPTER, name], capture_output=True, text=True, check=True)
        return done.stdout.strip().split("] ", 2)

    modules, own, judging = loaded("04_batch_size")
    assert modules == "['e04_batch_size'" and own == "['C5'"
    assert judging.startswith("(('C5', '04_batch_size', <function _c5")
    # a chapter that reads another's results imports that one too (10 reads 03's; its module builds on 03's)
    assert loaded("10_phase_diagram")[0] == "['e03_lr_and_l2', 'e10_phase_diagram'"


_OPTIMIZER_LOOKUPS = """
import sys
from initmem.base import records
from initmem.study.design import presets
from initmem.study.experiments import e01_optimizers, e11_scale_ladder  # imported: the smoke preset is not made
imported = [key.rpartition("#")[2] for key in records.noted()]
presets.notebook_parameters("cpu", "01_optimizers"), presets.notebook_parameters("cpu", "11_scale_ladder")
at_cpu = [key.rpartition("#")[2] for key in records.noted()]
smoke = presets.notebook_parameters("smoke", "01_optimizers")["optimizers"]
print("*" in imported, "*" in at_cpu, "*" in [key.rpartition("#")[2] for key in records.noted()], smoke)
"""


def test_importing_01_or_11_or_reading_their_cpu_presets_does_not_list_the_optimizers():
    """The smoke preset of 01 (every registered optimizer) is made when it is read, not when 01's module is imported,
    so a page that imports 01 or 11 (the clocks, the scale ladder) depends on the optimizer records it uses, not on
    the listing: a new smoke-only optimizer leaves it current. Reading the smoke preset lists them."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", _OPTIMIZER_LOOKUPS], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"False False True {list(optimizers.names())}"


def test_a_table_reads_one_record_per_name_and_lists_every_one():
    table = experiments.Table(lambda e: e.book_preset or experiments.Table.ABSENT)
    assert table["04_batch_size"] == "cpu" and "T1_scale_invariance" not in table
    assert list(table) == [e.name for e in DISCOVERED if e.book_preset]
    table["T9_new"] = "smoke"  # a name of no module, set by hand (a test's notebook)
    del table["04_batch_size"]
    assert table["T9_new"] == "smoke" and "04_batch_size" not in table and list(table)[-1] == "T9_new"
    with pytest.raises(ValueError, match=r"^name: unknown experiment 'T9_new'; known: 00_presets, 01_optimizers"):
        experiments.experiment("T9_new")


def test_listing_the_experiments_is_noted_as_a_read_of_their_folder():
    """A page that lists the experiments (the Setup chapter, the ledger) depends on which modules exist: a new
    chapter's module makes it stale (:mod:`initmem.base.reads`, :mod:`initmem.book.digest`)."""
    from initmem.base.reads import noted

    assert experiments.names()[:2] == ("00_presets", "01_optimizers")
    assert str(Path(experiments.__file__).resolve().parent / "e*.py") in noted()
    assert experiments.exists("04_batch_size") and not experiments.exists("T1_scale_invariance")

"""What an executed page records of what it used, and ``initmem book --check`` (initmem.book.digest, .check).

Tiny notebooks in temporary folders are executed; the committed book is only checked, never executed."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("papermill")
nbformat = pytest.importorskip("nbformat")
xr = pytest.importorskip("xarray")

from initmem.book.check import check_book, pasting_pages, report
from initmem.book.digest import USAGE_TAG, Hashes, module_digest
from initmem.book.runner import run_notebooks
from initmem.cli import main
from initmem.sweeps.store import write_run

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "initmem"

#: A page that imports a module of the package and reads a result file through the package's loader.
READER = """\
# %% tags=["parameters"]
preset = "smoke"
results_dir = "results"

# %%
from initmem.study.verdicts import rules
from initmem.sweeps.store import read_checked

ds = read_checked(f"{results_dir}/{preset}/input.nc")
print("VALUE", float(ds["x"]), rules.__name__)
"""


def _page(module: str) -> str:
    """A page that imports ``module`` and nothing else of the package."""
    return f'# %% tags=["parameters"]\npreset = "smoke"\nresults_dir = "results"\nscale = 1\n\n# %%\nimport {module}\n'


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _record(path: Path) -> dict:
    return nbformat.read(path, as_version=4).metadata["initmem"]


def test_a_page_records_the_module_it_imports_and_the_file_it_reads(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "01_reader.py").write_text(READER)
    data = tmp_path / "results" / "smoke" / "input.nc"
    data.parent.mkdir(parents=True)
    write_run(xr.Dataset({"x": 1.5}), data)

    [result] = run_notebooks(preset="smoke", cwd=tmp_path, progress=False)
    assert result.status == "executed", result
    page = tmp_path / "book" / "generated" / "01_reader.ipynb"
    uses = _record(page)["uses"]
    # the package is installed outside this root: its modules are named from the folder above it
    assert uses["modules"]["initmem/study/verdicts/rules.py"] == module_digest(
        PACKAGE / "study" / "verdicts" / "rules.py"
    )
    assert uses["modules"]["initmem/sweeps/store.py"] == module_digest(PACKAGE / "sweeps" / "store.py")
    assert not any(key.startswith("initmem/book/") for key in uses["modules"])  # what it imported, nothing else
    assert uses["reads"] == {"results/smoke/input.nc": _sha(data)}
    assert uses["source"] == _sha(tmp_path / "notebooks" / "01_reader.py")
    # the cell that asked the kernel is gone, and no machine path is recorded
    text = page.read_text()
    assert USAGE_TAG not in text and str(tmp_path) not in text and str(PACKAGE) not in text
    assert "VALUE 1.5 initmem.study.verdicts.rules" in text
    assert check_book(tmp_path) == []

    # a second build executes nothing and rewrites nothing
    assert [r.status for r in run_notebooks(preset="smoke", cwd=tmp_path, progress=False)] == ["reused"]
    assert page.read_text() == text

    # the file it read changes: the check names it, and the next build executes the page again
    write_run(xr.Dataset({"x": 2.5}), data)
    assert [str(s) for s in check_book(tmp_path)] == [
        "book/generated/01_reader.ipynb: result results/smoke/input.nc changed"
    ]
    assert run_notebooks(preset="smoke", cwd=tmp_path, progress=False)[0].status == "executed"
    assert "VALUE 2.5" in page.read_text() and check_book(tmp_path) == []


def test_a_number_edited_by_hand_in_a_page_makes_it_stale_and_the_build_executes_it_again(tmp_path):
    """Before: the check digested only what a page used, so a printed number edited in the page passed as current."""
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "01_reader.py").write_text(READER)
    data = tmp_path / "results" / "smoke" / "input.nc"
    data.parent.mkdir(parents=True)
    write_run(xr.Dataset({"x": 1.5}), data)
    run_notebooks(preset="smoke", cwd=tmp_path, progress=False)
    page = tmp_path / "book" / "generated" / "01_reader.ipynb"
    assert check_book(tmp_path) == [] and len(_record(page)["cells"]) == 64
    page.write_text(page.read_text().replace("VALUE 1.5", "VALUE 9.5"))
    assert [str(s) for s in check_book(tmp_path)] == [
        "book/generated/01_reader.ipynb: its cells no longer match their digest (an output or a source was edited "
        "after it executed)"
    ]
    assert run_notebooks(preset="smoke", cwd=tmp_path, progress=False)[0].status == "executed"
    assert "VALUE 1.5" in page.read_text() and check_book(tmp_path) == []


def test_every_committed_page_shows_what_it_executed():
    """Each committed page records the digest of its cells, and they still match it (whatever else may have changed
    since the book was executed)."""
    from initmem.book.digest import stored_record

    for page in sorted((REPO / "book" / "generated").glob("[!.]*.ipynb")):
        record = stored_record(page)
        assert record["cells"] == record["cells_now"], page


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> Path:
    """A repository with its own copy of the package and four executed pages: 01 shows C1's band, 02 C2's (Muon),
    99 every claim's rule (C1's, C2's and C4's print their bands), T9 the theory only; the landing page pastes from
    01."""
    root = tmp_path_factory.mktemp("book")
    shutil.copytree(PACKAGE, root / "src" / "initmem", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "notebooks").mkdir()
    for name, module, code in (
        ("01_verdicts", "initmem.study.verdicts.ledger as ledger", 'ledger.band("C1")'),
        ("02_adaptive", "initmem.study.verdicts.ledger as ledger", 'ledger.band("C2", "Muon")'),
        ("99_ledger", "initmem.study.verdicts.ledger as ledger", "dict(ledger.RULES)"),
        ("T9_theory", "initmem.theory", ""),
    ):
        (root / "notebooks" / f"{name}.py").write_text(_page(module) + code + "\n")
    (root / "book").mkdir()
    (root / "book" / "intro.md").write_text("```{glue} e01_fig\n:doc: generated/01_verdicts.ipynb\n```\n")
    results = run_notebooks(preset="smoke", cwd=root, progress=False)
    assert [r.status for r in results] == ["executed"] * 4, results
    return root


def test_the_check_passes_on_a_current_book(book, capsys):
    assert main(["book", "--check", "--root", str(book)]) == 0
    assert capsys.readouterr().out.strip() == "every page of the book is current"
    uses = _record(book / "book" / "generated" / "01_verdicts.ipynb")["uses"]
    # the kernel imported the package from the root's src/: its modules are named relative to the root
    assert uses["modules"]["src/initmem/study/verdicts/ledger.py"] == module_digest(
        PACKAGE / "study" / "verdicts" / "ledger.py"
    )


@pytest.mark.parametrize(
    "change",
    [{"values": {"": 21.5}}, {"band_share": 0.05}],  # C1's paper number and its band, in its record
    ids=["number", "band"],
)
def test_a_change_to_c1_names_01_99_and_the_page_that_pastes_from_01_not_the_page_of_c2(book, capsys, change):
    path, text = _edit_table(book, "study/verdicts/paper.json", lambda records: records["C1"].update(change))
    try:
        assert main(["book", "--check", "--root", str(book)]) == 1
    finally:
        path.write_text(text)
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "book/generated/01_verdicts.ipynb: claim record C1 changed",
        "book/generated/99_ledger.ipynb: claim record C1 changed",
        "book/intro.md: pastes outputs of stale pages: 01_verdicts",
        "3 pages are stale: re-execute them with initmem book (it executes only these)",
    ]
    assert check_book(book) == []


def test_a_change_to_the_rules_names_every_page_that_judges(book):
    path = book / "src" / "initmem" / "study" / "verdicts" / "rules.py"
    text = path.read_text()
    path.write_text(text.replace("BAND_SHARE = 0.3", "BAND_SHARE = 0.2"))  # the default band of every size verdict
    try:
        stale = [str(s) for s in check_book(book)]
    finally:
        path.write_text(text)
    assert stale[:3] == [
        f"book/generated/{name}.ipynb: module src/initmem/study/verdicts/rules.py changed"
        for name in ("01_verdicts", "02_adaptive", "99_ledger")
    ]


def test_a_docstring_edited_alone_leaves_every_page_current_and_a_code_edit_does_not(book):
    path = book / "src" / "initmem" / "study" / "verdicts" / "ledger.py"
    text = path.read_text()
    docstring_only = text.replace('"""', '"""An added first line of the module\'s docstring.\n\n', 1)
    try:
        path.write_text(docstring_only)
        assert check_book(book) == []
        path.write_text(docstring_only + "\nADDED = 1\n")
        stale = [str(s) for s in check_book(book)]
    finally:
        path.write_text(text)
    assert "book/generated/01_verdicts.ipynb: module src/initmem/study/verdicts/ledger.py changed" in stale


@pytest.fixture(scope="module")
def registry_book(tmp_path_factory) -> Path:
    """A repository with its own copy of the package and three executed pages: 01 looks up SGD's optimizer record,
    02 lists every optimizer and reads each record, 03 looks up Adam's."""
    root = tmp_path_factory.mktemp("registry")
    shutil.copytree(PACKAGE, root / "src" / "initmem", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "notebooks").mkdir()
    for name, code in (
        ("01_sgd", 'optimizers.record("sgd")'),
        ("02_every", "optimizers.records()"),
        ("03_adam", 'optimizers.record("adam")'),
    ):
        (root / "notebooks" / f"{name}.py").write_text(_page("initmem.run.optimizers as optimizers") + code + "\n")
    results = run_notebooks(preset="smoke", cwd=root, progress=False)
    assert [r.status for r in results] == ["executed"] * 3, results
    return root


def _edit_table(root: Path, relative: str, change) -> tuple[Path, str]:
    """Apply ``change`` to the records of the JSON table ``relative`` of ``root``'s package; return it and its text."""
    path = root / "src" / "initmem" / relative
    text = path.read_text()
    table = json.loads(text)
    change(table["records"])
    path.write_text(json.dumps(table))
    return path, text


def test_a_page_depends_on_the_optimizer_records_it_used_not_on_the_registry_file(registry_book):
    uses = _record(registry_book / "book" / "generated" / "01_sgd.ipynb")["uses"]
    assert "src/initmem/run/optimizers.py" in uses["modules"]  # the code that reads the records
    assert not any(key.endswith(".json") for key in uses["modules"])
    assert "src/initmem/run/optimizers.json#sgd" in uses["records"]
    assert "src/initmem/run/optimizers.json#*" not in uses["records"]  # it never asked for the listing
    assert check_book(registry_book) == []


def test_a_smoke_only_optimizer_makes_stale_only_the_page_that_lists_them(registry_book):
    def add(records):
        records["smoke_only"] = {**records["adam"], "label": "Smoke", "in_paper": False}

    path, text = _edit_table(registry_book, "run/optimizers.json", add)
    try:
        stale = [str(s) for s in check_book(registry_book)]
    finally:
        path.write_text(text)
    assert stale == ["book/generated/02_every.ipynb: the optimizer listing changed"]


def test_a_changed_optimizer_record_makes_stale_the_pages_that_used_it(registry_book):
    path, text = _edit_table(registry_book, "run/optimizers.json", lambda records: records["sgd"].update(colour="#000"))
    try:
        stale = [str(s) for s in check_book(registry_book)]
    finally:
        path.write_text(text)
    assert stale == [
        "book/generated/01_sgd.ipynb: optimizer record sgd changed",
        "book/generated/02_every.ipynb: optimizer record sgd changed",
    ]
    assert check_book(registry_book) == []


def test_pasting_pages_finds_block_and_inline_pastes_but_not_a_pages_own(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "book" / "intro.md").write_text(
        "The scale: {glue:text}`generated/00_presets.ipynb::p00_scale:s`.\n"
        "```{glue} r_forest\n:doc: generated/99_reproduction.ipynb\n```\n"
    )
    (tmp_path / "book" / "plain.md").write_text("{glue:text}`p_own:.1f` and `00_presets.ipynb` named in text\n")
    (tmp_path / "notebooks" / "99_reproduction.py").write_text(
        "# {glue:text}`00_presets.ipynb::p00_paper_cost:s`\n# {glue:text}`99_reproduction.ipynb::r_answer:s`\n"
    )
    found = pasting_pages(tmp_path, ["00_presets", "99_reproduction", "01_optimizers"])
    assert found == {"book/intro.md": ["00_presets", "99_reproduction"], "notebooks/99_reproduction.py": ["00_presets"]}


def test_the_check_names_a_changed_parameter_and_a_page_not_executed(book, monkeypatch):
    from initmem.study.design import presets

    monkeypatch.setitem(presets.NOTEBOOK_PARAMETERS["smoke"], "T9_theory", {"scale": 2})
    (book / "notebooks" / "T8_new.py").write_text(_page("initmem.theory"))
    try:
        stale = [str(s) for s in check_book(book)]
    finally:
        (book / "notebooks" / "T8_new.py").unlink()
    assert stale == [
        "book/generated/T8_new.ipynb: not executed",
        "book/generated/T9_theory.ipynb: parameter scale is set: 2",
    ]


def test_the_committed_book_is_current():
    """Every committed page's record holds: the same notebook, parameters, modules and result files (after a change,
    ``initmem book`` re-executes what it names)."""
    stale = check_book(REPO)
    assert not stale, "\n".join(report(stale))


def test_a_change_to_c1_names_01_and_99_of_the_committed_book(monkeypatch):
    """The committed pages record the claims whose records their verdicts read: a change to C1's record (its paper
    number or its band, ``study/verdicts/paper.json``) makes 01, 99 and the pages that paste from them stale, not the theory."""
    real = Hashes.record
    changed = "src/initmem/study/verdicts/paper.json#C1"
    monkeypatch.setattr(Hashes, "record", lambda self, key: "0" * 64 if key == changed else real(self, key))
    stale = {s.page: s.changed for s in check_book(REPO)}
    for page in ("01_optimizers", "99_reproduction"):
        assert "claim record C1 changed" in stale.get(f"book/generated/{page}.ipynb", ()), stale
    assert {"book/intro.md", "book/reproduction.md"} <= set(stale)
    assert "claim record C1 changed" not in stale.get("book/generated/T1_scale_invariance.ipynb", ())


def test_a_smoke_only_optimizer_names_only_the_page_that_lists_every_optimizer_of_the_committed_book(monkeypatch):
    """Issue 45: adding an optimizer to the registry changes its listing and its family's view; of the committed
    pages only 00 (which prices the smoke preset, where every registered optimizer trains) depends on them, with the
    pages that paste from it: at most 4 pages in all. The pages that judge or tabulate the optimizers read the records
    of those their data hold and the paper's (a view a smoke-only optimizer leaves alone)."""
    real = Hashes.record
    table = "src/initmem/run/optimizers.json"
    changed = {f"{table}#*", f'{table}#family="adaptive"', f'{table}#family="sgd"', f"{table}#in_paper=false"}
    monkeypatch.setattr(Hashes, "record", lambda self, key: "0" * 64 if key in changed else real(self, key))
    stale = sorted({s.page for s in check_book(REPO)})
    assert stale == [
        "book/generated/00_presets.ipynb",
        "book/intro.md",
        "book/reproduce.md",
        "notebooks/99_reproduction.py",
    ]


def test_no_committed_page_records_a_machine_path():
    for page in sorted((REPO / "book" / "generated").glob("*.ipynb")):
        text = page.read_text()
        assert str(REPO) not in text, page
        uses = json.loads(text)["metadata"].get("initmem", {}).get("uses", {})
        assert not [key for kind in ("modules", "reads") for key in uses.get(kind, {}) if Path(key).is_absolute()]


MODULE = '''\
"""A module. σ_w in its docstring."""

X = "σ"; Y = 1


class Run:
    """A class."""

    def f(self):
        """A method, over
        two lines."""
        return "not a docstring"

    async def g(self):
        "an async one"
        return Y

    def h(self, σ=1): "a docstring after non-ASCII on its line"; return σ
'''


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        ('"""A module. σ_w in its docstring."""', '"""Another module docstring,\n\nover three lines."""', True),
        ('"""A class."""', "'''A class, edited.'''", True),
        ('"""A method, over\n        two lines."""', '"""A method."""', True),
        ('"an async one"', '"another async one, after σ on an earlier line"', True),
        ('return "not a docstring"', 'return "changed"', False),
        ('"a docstring after non-ASCII on its line"', '"edited"', True),
        ("return σ", "return 2 * σ", False),
        ("Y = 1", "Y = 2", False),
        ('X = "σ"', 'X = "s"', False),
    ],
    ids=[
        "module",
        "class",
        "method",
        "async",
        "a string that is no docstring",
        "one line after non-ASCII",
        "code after a docstring on its line",
        "code",
        "code after non-ASCII",
    ],
)
def test_a_module_digest_leaves_out_docstrings_and_nothing_else(tmp_path, old, new, same):
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(MODULE, encoding="utf-8")
    assert old in MODULE
    after.write_text(MODULE.replace(old, new), encoding="utf-8")
    assert (module_digest(before) == module_digest(after)) is same


def test_a_module_that_does_not_parse_is_hashed_by_its_bytes(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text('"""doc"""\ndef f(:\n')
    assert module_digest(path) == _sha(path)

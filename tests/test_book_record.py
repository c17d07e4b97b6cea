"""``initmem book`` never trains and never moves or rewrites a committed file: a damaged or missing committed run or
result of the record stops it, before anything executes, with one line naming the file and the command that would
recompute it (with its cost), and exit status 2; the record is left byte for byte as it was.

The record here is a copy of the committed chapter 04 (its notebook, its runs and its combined result) in a temporary
checkout; nothing executes (a notebook that would is recorded, not run)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

pytest.importorskip("papermill")

from initmem.base.paths import find_repo_root
from initmem.book import build as book
from initmem.book import runner
from initmem.cli import main

ROOT = find_repo_root(start=Path(runner.__file__).resolve())
NAME = "04_batch_size"
RECORD = ROOT / "results" / "cpu" / NAME

pytestmark = pytest.mark.skipif(not (RECORD / "runs").is_dir(), reason="no committed record of chapter 04")


@pytest.fixture()
def checkout(tmp_path, monkeypatch) -> tuple[Path, list[str]]:
    """A checkout holding chapter 04 and its committed record; returns it and the list of notebooks executed."""
    root = tmp_path / "clone"
    (root / "notebooks").mkdir(parents=True)
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    shutil.copy2(ROOT / "notebooks" / f"{NAME}.py", root / "notebooks" / f"{NAME}.py")
    shutil.copytree(RECORD, root / "results" / "cpu" / NAME)
    shutil.copy2(RECORD.with_suffix(".nc"), root / "results" / "cpu" / f"{NAME}.nc")
    monkeypatch.setattr(book, "ensure_mathjax", lambda static: static)
    executed: list[str] = []

    def execute(plan, *args, **kwargs):
        executed.append(plan.name)
        return runner.NotebookResult(plan.name, "executed", plan.out_path, plan.final, plan.digest)

    monkeypatch.setattr(runner, "_execute", execute)
    return root, executed


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` with the sha256 of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()
    }


def _refused(root: Path, capsys) -> str:
    """Run ``initmem book`` on ``root``: exit status 2, one line on stderr (returned), the tree unchanged."""
    before = _tree(root)
    status = main(["book", "--root", str(root)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert len(err.splitlines()) == 1, err
    assert _tree(root) == before
    assert "nothing was executed or changed" in err and f"initmem experiments --preset cpu --only {NAME[:2]}" in err
    return err


def _a_run(root: Path) -> Path:
    return sorted((root / "results" / "cpu" / NAME / "runs").glob("*.nc"))[0]


def test_a_flipped_byte_in_a_committed_run_stops_the_book_and_changes_nothing(checkout, capsys):
    root, executed = checkout
    run = _a_run(root)
    data = bytearray(run.read_bytes())
    data[len(data) // 2] ^= 0xFF
    run.write_bytes(bytes(data))
    err = _refused(root, capsys)
    assert err.startswith(f"initmem book: error: results/cpu/{NAME}/runs/{run.name}: ")
    assert "1 of " in err and " runs to train, about " in err  # what the recomputation trains and its cost
    assert executed == [] and not list(root.rglob("*.rejected"))


def test_a_deleted_committed_run_stops_the_book_and_trains_nothing(checkout, capsys):
    root, executed = checkout
    run = _a_run(root)
    run.unlink()
    err = _refused(root, capsys)
    assert f"results/cpu/{NAME}/runs/{run.name}: it is missing;" in err
    assert executed == []


def test_a_truncated_combined_result_stops_the_book_and_is_not_rewritten(checkout, capsys):
    root, executed = checkout
    combined = root / "results" / "cpu" / f"{NAME}.nc"
    combined.write_bytes(combined.read_bytes()[: combined.stat().st_size // 2])
    err = _refused(root, capsys)
    assert err.startswith(f"initmem book: error: results/cpu/{NAME}.nc: it is unreadable")
    assert "runs are intact: nothing to train" in err
    assert executed == []


def test_an_intact_record_is_read_and_its_page_executes(checkout):
    """The check refuses only what is damaged: the committed record as it is passes it."""
    root, executed = checkout
    results = runner.run_notebooks(preset="cpu", only=NAME, cwd=root, keep_record=True, progress=False)
    assert [r.status for r in results] == ["executed"] and executed == [NAME]


def test_a_changed_or_new_style_file_rebuilds_every_page_so_that_it_reaches_the_site(tmp_path):
    """Sphinx copies book/_static only when some page is rebuilt: a style change alone makes the build pass --all."""
    static, built = tmp_path / "book" / "_static", tmp_path / "_build" / "html" / "_static"
    assert not book.static_changed(static, built)  # nothing built yet: a first build copies everything
    (static / "fonts").mkdir(parents=True)
    (static / "book.css").write_text("span.pasted-text { font-weight: inherit; }")
    (static / "fonts" / "a.woff").write_bytes(b"\x00\x01")
    shutil.copytree(static, built)
    assert not book.static_changed(static, built)
    (static / "book.css").write_text("span.pasted-text { font-weight: bold;    }")  # same size, other content
    assert book.static_changed(static, built)
    shutil.copy2(static / "book.css", built / "book.css")
    (static / "fonts" / "b.woff").write_bytes(b"\x02")
    assert book.static_changed(static, built)

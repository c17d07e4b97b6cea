"""``initmem book --check``: whether every committed page is current, executing nothing.

A page (``book/generated/<notebook>.ipynb``, at its book preset) is current when its record of what it used
(:mod:`initmem.book.digest`) still holds: the same notebook text and parameters, every module, record and result file
it names unchanged, and its cells as they were executed (a number edited by hand is found). :func:`check_book` says,
for each stale page, what changed, and names with it every page that pastes outputs from it (``{glue}`` with
``:doc:``); :func:`report` words the answer. It reads the notebooks, the pages and the files their records name:
seconds.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

from ..study.design import presets as _presets
from ..study.design.layout import RECORD_OUT_DIR
from .digest import Hashes, changes, refresh, stored_record
from .runner import discover_notebooks, read_page

__all__ = ["Stale", "check_book", "pasting_pages", "report"]

#: A reference that pastes an output of another page: myst-nb's ``:doc:`` option of ``{glue}`` (a block), or the
#: ``path::key`` form of an inline role (``{glue:text}`generated/00_presets.ipynb::p00_scale:s```).
_DOC_RE = re.compile(r"^\s*(?:#\s*)?:doc:\s*(\S+)\s*$|\{glue(?::\w+)?\}`([^`:]+)::", re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Stale:
    """A page that is not current: its path relative to the root, and what changed, in words."""

    page: str
    changed: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.page}: {'; '.join(self.changed)}"


def check_book(root: str | Path) -> list[Stale]:
    """The stale pages of the record in ``root``, in notebook order, then the pages that paste from them; empty when
    every committed page is current. Nothing is executed or written."""
    root = Path(root).resolve()
    nb_dir, out_dir = root / "notebooks", root / RECORD_OUT_DIR
    names = discover_notebooks(nb_dir)
    hashes = Hashes(root)
    stale: list[Stale] = []
    for name in names:
        page = read_page(name, nb_dir, _presets.book_preset(name), {}, root)
        stored = stored_record(page.out_path)
        uses = refresh(stored, page.text, hashes)
        found = changes(stored, page.final, uses, page.path.relative_to(root).as_posix(), hashes)
        if found:
            stale.append(Stale(page.out_path.relative_to(root).as_posix(), tuple(found)))
    for left in sorted({p.stem for p in out_dir.glob("[!.]*.ipynb")} - set(names)):
        stale.append(
            Stale(f"{RECORD_OUT_DIR.as_posix()}/{left}.ipynb", (f"no notebook notebooks/{left}.py: a page left over",))
        )
    stale_names = [Path(s.page).stem for s in stale]
    for page, sources in pasting_pages(root, names).items():
        pasted = [name for name in sources if name in stale_names]
        if pasted:
            stale.append(Stale(page, (f"pastes outputs of stale pages: {', '.join(pasted)}",)))
    return stale


def pasting_pages(root: Path, names: Sequence[str]) -> dict[str, list[str]]:
    """``{page: [notebook, ...]}``: the book's pages (``book/**/*.md`` and the notebooks) that paste outputs of the
    notebooks ``names`` (a block's ``:doc:`` or an inline role's ``path::key`` naming ``generated/<notebook>.ipynb``
    or the notebook), paths relative to root."""
    sources = [*sorted((root / "book").rglob("*.md")), *sorted((root / "notebooks").glob("*.py"))]
    found: dict[str, list[str]] = {}
    for path in sources:
        if path.is_relative_to(root / RECORD_OUT_DIR) or "_build" in path.relative_to(root).parts:
            continue
        pasted = {Path(block or inline).stem for block, inline in _DOC_RE.findall(path.read_text(encoding="utf-8"))}
        own = path.stem if path.suffix == ".py" else None
        hits = [name for name in names if name in pasted and name != own]
        if hits:
            found[path.relative_to(root).as_posix()] = hits
    return found


def report(stale: Sequence[Stale]) -> list[str]:
    """The lines ``initmem book --check`` prints: one per stale page, then what to run; or that every page is
    current."""
    if not stale:
        return ["every page of the book is current"]
    return [
        *(str(s) for s in stale),
        f"{len(stale)} pages are stale: re-execute them with initmem book (it executes only these)",
    ]

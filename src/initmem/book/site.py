"""An exploration's own small site: only its pages rendered, everything else the committed book's.

An exploration (:mod:`initmem.book.exploration`) changes a few pages: the chapters it executed and the pages that
paste outputs from them (:func:`pasting_pages`). :func:`write_site` writes the sources of a site of just those pages
into a folder, where jupyter-book builds it in seconds; the rest of the book is the committed build
(``<root>/_build/html``, :func:`committed_build`), which the site links back to and never rebuilds:

* its landing page (``index.md``) links each explored page's committed version and the committed book (relative
  links, so that they work from a ``file://`` URL), or says how to make that build where it is missing;
* each explored page's banner (:func:`initmem.book.exploration.add_banner`) links the page's committed version;
* every other link to a page of the book leads to the committed build
  (:class:`initmem.book.extension.LinksToTheRecord`);
* outputs pasted from a page not in the site come from its committed executed notebook (:func:`seed_glue`);
* the wheel is not built: the site offers no package of its own.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import yaml

from ..study.design.layout import RECORD_OUT_DIR, RECORD_RESULTS_DIR
from . import check as _check
from .exploration import BANNER_TAG
from .runner import discover_notebooks

__all__ = ["COMMITTED_HTML", "SITE_STATIC", "pasting_pages", "committed_build", "write_site", "seed_glue"]

#: The committed book's HTML build, relative to the repository root (``initmem book`` writes it).
COMMITTED_HTML = Path("_build") / "html"
#: What the book's configuration names besides the pages: static files, extra files, the bibliography.
SITE_STATIC = ("_static", "_extra", "references.bib")
#: Where myst-nb keeps each page's glued outputs in a build (``<docname>.glue.json``), relative to the source folder.
GLUE_CACHE = Path("_build") / "jupyter_execute"
log = logging.getLogger("initmem.book.site")


def pasting_pages(root: Path, names: Sequence[str]) -> dict[str, list[str]]:
    """``{docname: the notebooks it pastes from}`` for every Markdown page of the book at ``root`` that pastes an
    output of one of ``names`` (:func:`initmem.book.check.pasting_pages`; the docname is the page's path without
    ``.md``, ``book/intro``). A notebook that pastes from another is not among them: the book has none."""
    pages = _check.pasting_pages(root, names)
    every = _check.pasting_pages(root, discover_notebooks(root / "notebooks"))
    return {page.removesuffix(".md"): every[page] for page in pages if page.endswith(".md")}


def committed_build(root: Path) -> Path | None:
    """The committed book's HTML build, ``<root>/_build/html``, when it has been built (its ``objects.inv``)."""
    html = Path(root) / COMMITTED_HTML
    return html if (html / "objects.inv").is_file() else None


def write_site(root: Path, notebooks: Sequence[Path], site: Path, title: str) -> list[str]:
    """Write into ``site`` the sources of the small site of the executed ``notebooks`` (an exploration's) of the book at
    ``root``, titled ``title`` (the exploration's folder name); returns its pages' docnames, the explored chapters
    first. Everything of an earlier site in ``site`` but its build is replaced; nothing outside ``site`` is written."""
    root, site = Path(root).resolve(), Path(site).resolve()
    book = root / "book"
    names = [path.stem for path in notebooks]
    pasting = pasting_pages(root, names)
    if (site / "book").is_dir():
        shutil.rmtree(site / "book")
    (site / RECORD_OUT_DIR).mkdir(parents=True)
    for item in SITE_STATIC:
        source, target = book / item, site / "book" / item
        if source.is_dir():
            shutil.copytree(source, target)
        elif source.is_file():
            shutil.copy2(source, target)
    for page in pasting:
        shutil.copy2(root / f"{page}.md", site / f"{page}.md")
    committed = root / COMMITTED_HTML
    for notebook in notebooks:
        _copy_with_link(notebook, site / RECORD_OUT_DIR / notebook.name, committed, site)
    pasted = {source for sources in pasting.values() for source in sources} - set(names)
    for name in sorted(pasted):
        seed_glue(root / RECORD_OUT_DIR / f"{name}.ipynb", site)
    _copy_record_results(root, site)
    docnames = [f"{RECORD_OUT_DIR.as_posix()}/{name}" for name in names] + list(pasting)
    _write_config(root, site, committed)
    toc = {"format": "jb-book", "root": "index", "chapters": [{"file": doc} for doc in docnames]}
    (site / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False), encoding="utf-8")
    landing = _landing_page(title, docnames, committed, site, committed_build(root) is not None)
    (site / "index.md").write_text(landing, encoding="utf-8")
    return docnames


def seed_glue(notebook: Path, site: Path) -> None:
    """Write the glued outputs of the committed executed ``notebook`` (``book/generated/<name>.ipynb``) where myst-nb
    looks for them when a page pastes from it (:data:`GLUE_CACHE`), as if the site had rendered it; nothing when the
    notebook is missing or glues nothing."""
    import nbformat
    from myst_nb.ext.glue import extract_glue_data
    from myst_nb.sphinx_ import BytesEncoder

    if not notebook.is_file():
        return
    nb = nbformat.read(notebook, as_version=4)
    glued = extract_glue_data(nb, [0] * len(nb.cells), _Log())
    if glued:
        target = site / GLUE_CACHE / RECORD_OUT_DIR / f"{notebook.stem}.glue.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(glued, cls=BytesEncoder), encoding="utf-8")


class _Log:
    """The logger myst-nb's :func:`~myst_nb.ext.glue.extract_glue_data` reports a key glued twice to (the last
    one wins, as in the committed build)."""

    def warning(self, message: str, **where: object) -> None:
        log.warning("%s: %s", message, where)


def _href(target: Path, page_dir: Path) -> str:
    """``target`` relative to ``page_dir`` (both in the built HTML), as a URL path."""
    return Path(os.path.relpath(target, page_dir)).as_posix()


def _copy_with_link(notebook: Path, target: Path, committed: Path, site: Path) -> None:
    """Copy the executed ``notebook`` to ``target`` with, at the end of its banner, a link to the page's committed
    version in the committed build."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    html = site / COMMITTED_HTML
    href = _href(committed / RECORD_OUT_DIR / f"{notebook.stem}.html", html / RECORD_OUT_DIR)
    link = f'The committed page: <a class="initmem-record-link" href="{href}">{notebook.stem} in the book</a>.'
    for cell in nb.cells:
        if BANNER_TAG in cell.get("metadata", {}).get("tags", []):
            body, fence = cell.source.rsplit("```", 1)
            cell.source = f"{body.rstrip()}\n\n{link}\n```{fence}"
    nbformat.write(nb, str(target))


def _copy_record_results(root: Path, site: Path) -> None:
    """Copy the record's combined results (``results/<preset>/<experiment>.nc``) to ``site``: a page links a committed
    result file relative to itself (:func:`initmem.book.page.source_note`), and Sphinx copies what it links."""
    for path in (root / RECORD_RESULTS_DIR).glob("*/*.nc"):
        target = site / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


def _write_config(root: Path, site: Path, committed: Path) -> None:
    """The book's ``_config.yml`` for the site: no wheel, and links to the pages it lacks into the committed build
    (the extension's ``initmem_wheel``, ``initmem_root`` and ``initmem_record_html``)."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    sphinx = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx.update(
        initmem_wheel=False, initmem_root=str(root), initmem_record_html=_href(committed, site / COMMITTED_HTML)
    )
    (site / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def _landing_page(title: str, docnames: Sequence[str], committed: Path, site: Path, built: bool) -> str:
    """The site's first page: what it is, its pages, and the committed version of each and of the book (``built``:
    whether the committed build exists)."""
    html = site / COMMITTED_HTML
    rows = [
        f'| {{doc}}`{doc}` | <a href="{_href(committed / f"{doc}.html", html)}">{doc}.html</a> |' for doc in docnames
    ]
    note = "" if built else " It is not built yet: `initmem book` builds it, and these links then lead there."
    return "\n".join(
        [
            f"# Exploration `{title}`",
            "",
            "This site renders only the pages this exploration changed: the chapters it executed and the pages that "
            f'paste from them. Everything else is <a href="{_href(committed / "index.html", html)}">the committed '
            f"book</a>, which these pages link to.{note}",
            "",
            "| this exploration | the committed page |",
            "|---|---|",
            *rows,
            "",
        ]
    )

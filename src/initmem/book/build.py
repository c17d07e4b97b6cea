"""Build the companion book: execute what changed, then render it with jupyter-book 1.x, offline.

:func:`build_book` makes sure MathJax is served from ``book/_static/mathjax/`` (:func:`ensure_mathjax`, no CDN),
executes the notebooks with :func:`initmem.book.runner.run_notebooks`, each at its book preset
(:func:`initmem.study.design.presets.book_preset`; unchanged notebooks are reused), then runs
``jupyter-book build <repo> --builder html -W -n --keep-going`` (warnings are errors, nitpicky cross-references) and
returns the path of ``_build/html/index.html``. The record's pages never train and never move or rewrite a committed
file: a missing or damaged run or result they need stops the build first (:class:`~initmem.book.runner.RecordError`).

``build_book(from_dir=FOLDER)`` (``initmem book --from FOLDER``) renders an exploration as a small site of its own
(:mod:`initmem.book.site`) in ``_build/explore/<name>/``, in seconds; the committed files are untouched. The book's
Reproduce chapter describes both.
"""

from __future__ import annotations

import filecmp
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from ..base.paths import find_repo_root
from ..study.design import presets as _presets
from ..study.design.layout import EXPLORE_DIR, RECORD_OUT_DIR
from . import runner as _experiments
from .exploration import EXPLORE_NOTEBOOKS
from .parameters import ParameterError
from .runner import NotebookResult, discover_notebooks, run_notebooks

__all__ = [
    "BookBuildError",
    "MATHJAX_VERSION",
    "MATHJAX_FILES",
    "ensure_mathjax",
    "build_book",
    "explore_source",
    "render_exploration",
]

#: Where ``build_book(from_dir=...)`` copies the book's sources and builds them, relative to the root.
EXPLORE_BUILD_DIR = Path("_build") / "explore"
#: An exploration's site inside an exploration folder outside ``results/explore/`` (:func:`explore_source`).
SITE_DIR = "_site"

log = logging.getLogger("initmem.book.build")

#: The MathJax release served with the book, and the subset of its npm package that is copied.
MATHJAX_VERSION = "3.2.2"
#: Paths inside the npm package's ``es5/`` folder (files or folders), plus the licence.
MATHJAX_FILES = (
    "tex-chtml-full.js",  # TeX input with every extension, CommonHTML output, menu, assistive MathML
    "output/chtml/fonts/woff-v2",  # the fonts CommonHTML loads relative to the script
)
#: The script the book loads, relative to ``book/_static`` (``mathjax_path`` in ``_config.yml``).
MATHJAX_SCRIPT = "mathjax/tex-chtml-full.js"


class BookBuildError(RuntimeError):
    """A notebook failed, or jupyter-book exited with an error (the message ends with the log tail)."""


def ensure_mathjax(static_dir: str | Path | None = None, *, npm: str | None = None) -> Path:
    """Make sure ``<static_dir>/mathjax/tex-chtml-full.js`` and its fonts exist; fetch them with npm if not.

    The files (about 1.7 MB) are normally committed. When they are missing, ``npm pack mathjax@3.2.2``
    downloads the package from the npm registry and the subset in :data:`MATHJAX_FILES` is copied.
    Returns the path of the script.
    """
    static = Path(static_dir) if static_dir is not None else _experiments.REPO_ROOT / "book" / "_static"
    target = static / "mathjax"
    script = static / MATHJAX_SCRIPT
    fonts = target / "output" / "chtml" / "fonts" / "woff-v2"
    if script.is_file() and fonts.is_dir() and any(fonts.iterdir()):
        return script
    npm = npm or shutil.which("npm")
    if npm is None:
        raise BookBuildError(
            f"MathJax is missing from {target} and npm is not installed to fetch it; "
            f"install npm or copy the es5/ files {MATHJAX_FILES} of mathjax@{MATHJAX_VERSION} there"
        )
    log.info("fetching mathjax@%s with npm into %s", MATHJAX_VERSION, target)
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [npm, "pack", f"mathjax@{MATHJAX_VERSION}", "--silent"], cwd=tmp, capture_output=True, text=True
        )
        tgz = next(Path(tmp).glob("mathjax-*.tgz"), None)
        if proc.returncode != 0 or tgz is None:
            raise BookBuildError(f"npm pack mathjax@{MATHJAX_VERSION} failed:\n{proc.stderr[-2000:]}")
        with tarfile.open(tgz) as tar:
            try:
                tar.extractall(tmp, filter="data")
            except TypeError:  # Python without extraction filters (< 3.10.12 / 3.11.4)
                tar.extractall(tmp)
        pkg = Path(tmp) / "package"
        target.mkdir(parents=True, exist_ok=True)
        for rel in MATHJAX_FILES:
            src, dst = pkg / "es5" / rel, target / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst, dirs_exist_ok=True)
            else:
                shutil.copy2(src, dst)
        shutil.copy2(pkg / "LICENSE", target / "LICENSE")
        (target / "VERSION").write_text(f"mathjax {MATHJAX_VERSION} (npm), es5 subset: {', '.join(MATHJAX_FILES)}\n")
    return script


def static_changed(static_dir: Path, built_dir: Path) -> bool:
    """Whether a file of ``static_dir`` (the book's ``_static``) is missing from ``built_dir`` (the built site's) or
    differs from its copy there: Sphinx copies the static files only when some page is rebuilt, so a style change
    alone needs a full rebuild (``--all``) to reach the site. False where nothing is built yet."""
    if not built_dir.is_dir():
        return False
    for source in static_dir.rglob("*"):
        built = built_dir / source.relative_to(static_dir)
        if source.is_file() and not (built.is_file() and filecmp.cmp(source, built, shallow=False)):
            return True
    return False


def _jupyter_book_command() -> list[str]:
    exe = Path(sys.executable).with_name("jupyter-book")
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("jupyter-book")
    if found:
        return [found]
    return [sys.executable, "-m", "jupyter_book.cli.main"]


def build_book(
    preset: str | None = None,
    force: bool = False,
    *,
    root: str | Path | None = None,
    execute: bool = True,
    from_dir: str | Path | None = None,
    toc: str | Path | None = None,
    config: str | Path | None = None,
    strict: bool = True,
    extra_args: Sequence[str] = (),
    timeout: float | None = None,
) -> Path:
    """Execute the notebooks that changed and build the HTML book; return the built ``index.html``.

    Parameters
    ----------
    preset
        Render every notebook at this preset; default: each at :func:`initmem.study.design.presets.book_preset`. Notebooks whose
        book preset differs are explorations: executed into ``results/explore/<preset>-defaults/`` and rendered
        from there (as with ``from_dir``), never into ``book/generated``.
    force
        Re-execute every notebook, and rebuild every page (``--all``).
    root
        The book's root (the repository, where ``_config.yml`` and ``_toc.yml`` are); default: found from the
        working directory (:func:`initmem.base.paths.find_repo_root`).
    execute
        Run the notebooks first (set False to render the executed notebooks already in ``book/generated``).
    from_dir
        Render an exploration: a folder of executed notebooks (or an exploration folder with a ``notebooks/``
        subfolder), as a small site of its own pages (:func:`explore_source`); nothing is executed, and the build is
        never strict (an exploration's pages are not the record; a link into an unbuilt committed book warns).
    toc, config
        Other ``_toc.yml`` / ``_config.yml`` files (for tests); paths relative to ``root`` as usual.
    strict
        Build with ``-W -n --keep-going``: every warning, including an unresolved cross-reference, fails.
    timeout
        Seconds allowed to jupyter-book.

    Raises
    ------
    BookBuildError
        If a notebook fails (its name, failing cell and error are listed) or jupyter-book fails (the
        message ends with the tail of the build log, also saved as ``_build/book-build.log``).
    initmem.book.runner.RecordError
        If a page of the record would train, or needs a committed run or result that is missing or damaged (before
        anything executes; nothing is changed).
    """
    root = find_repo_root(root) if root is not None else _experiments.REPO_ROOT
    if preset is not None:
        _presets.check_preset(preset)
    ensure_mathjax(root / "book" / "_static")

    if execute and from_dir is None:
        results: list[NotebookResult] = []
        for group_preset, names in _notebooks_by_preset(preset, root).items():
            results += run_notebooks(preset=group_preset, only=names, force=force, cwd=root, keep_record=True)
        failed = [r for r in results if not r.ok]
        if failed:
            raise BookBuildError("notebooks failed, the book was not built:\n" + "\n".join(f"  {r}" for r in failed))
        explored = {r.output.parent for r in results if r.output.parent.resolve() != (root / RECORD_OUT_DIR).resolve()}
        from_dir = next(iter(explored), None)  # one preset: at most one exploration folder
    if from_dir is not None:
        root = explore_source(root, from_dir)
        strict = False
    return _jupyter_book_build(
        root, force=force, toc=toc, config=config, strict=strict, extra_args=extra_args, timeout=timeout
    )


def render_exploration(
    root: str | Path, from_dir: str | Path, names: Sequence[str], *, timeout: float | None = None
) -> dict[str, Path]:
    """Render the exploration in ``from_dir`` as its small site (:func:`build_book` with ``from_dir``) and return
    the built page of each notebook of ``names``, ``{name: <site>/_build/html/book/generated/<name>.html}``.

    Raises:
        BookBuildError: jupyter-book failed, or a page of ``names`` was not built.
    """
    index = build_book(root=root, from_dir=from_dir, timeout=timeout)
    pages = {name: index.parent / RECORD_OUT_DIR / f"{name}.html" for name in names}
    missing = [str(page) for page in pages.values() if not page.is_file()]
    if missing:
        raise BookBuildError(
            f"jupyter-book built no page {', '.join(missing)}; log: {index.parents[1] / 'book-build.log'}"
        )
    return pages


def explore_source(root: str | Path, from_dir: str | Path) -> Path:
    """Write the small site of the exploration in ``from_dir`` (:func:`initmem.book.site.write_site`: its pages alone,
    linking back to the committed book) and return its folder, where jupyter-book builds it.

    ``from_dir`` is a folder of executed ``.ipynb`` files, or an exploration folder holding them in ``notebooks/``.
    The site is ``<root>/_build/explore/<name>/`` for an exploration under ``<root>/results/explore/<name>/``, and
    ``<folder>/_site/`` for one in a folder the user named (``--out-dir``), so that nothing under ``root`` is written.

    Raises:
        ParameterError: ``from_dir`` holds no executed notebook.
    """
    from .site import write_site

    root = Path(root).resolve()
    folder = Path(from_dir).resolve()
    if (folder / EXPLORE_NOTEBOOKS).is_dir():
        folder = folder / EXPLORE_NOTEBOOKS
    notebooks = sorted(folder.glob("*.ipynb")) if folder.is_dir() else []
    if not notebooks:
        raise ParameterError(f"--from: {from_dir} holds no executed notebook (.ipynb); run initmem experiments first")
    exploration = folder.parent if folder.name == EXPLORE_NOTEBOOKS else folder
    inside = exploration.parent == (root / EXPLORE_DIR).resolve()
    site = root / EXPLORE_BUILD_DIR / exploration.name if inside else exploration / SITE_DIR
    pages = write_site(root, notebooks, site, exploration.name)
    log.info("rendering %s of %s in %s", ", ".join(pages), folder, site)
    return site


def _jupyter_book_build(
    root: Path, *, force: bool, toc, config, strict: bool, extra_args: Sequence[str], timeout: float | None
) -> Path:
    """Run jupyter-book on ``root``; return ``root/_build/html/index.html`` (BookBuildError with the log tail)."""
    cmd = [*_jupyter_book_command(), "build", str(root), "--builder", "html"]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    if force or static_changed(root / "book" / "_static", root / "_build" / "html" / "_static"):
        cmd += ["--all"]
    if toc is not None:
        cmd += ["--toc", str(toc)]
    if config is not None:
        cmd += ["--config", str(config)]
    cmd += list(extra_args)
    build_dir = root / "_build"
    build_dir.mkdir(exist_ok=True)
    log_path = build_dir / "book-build.log"
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)
    log.info("running %s", " ".join(cmd))
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=root, capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or "") if isinstance(exc.stdout, str) else (exc.stdout or b"").decode(errors="replace")
        log_path.write_text(out)
        raise BookBuildError(f"jupyter-book did not finish in {timeout} s; log: {log_path}\n{out[-4000:]}") from exc
    output = proc.stdout + ("\n" + proc.stderr if proc.stderr else "")
    log_path.write_text(output)
    log.info("jupyter-book finished in %.1f s (exit %d)", time.perf_counter() - t0, proc.returncode)
    index = build_dir / "html" / "index.html"
    if proc.returncode != 0 or not index.is_file():
        tail = "\n".join(output.splitlines()[-60:])
        raise BookBuildError(f"jupyter-book build failed (exit {proc.returncode}); log: {log_path}\n{tail}")
    return index


def _notebooks_by_preset(preset: str | None, root: Path) -> dict[str, list[str]]:
    """The book's notebooks grouped by the preset they are rendered at (all at ``preset`` when given)."""
    groups: dict[str, list[str]] = {}
    for name in discover_notebooks(root / "notebooks"):
        groups.setdefault(preset or _presets.book_preset(name), []).append(name)
    return groups

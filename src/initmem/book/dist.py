"""The package travels with the book: its wheel, built from the checkout into the HTML build, and a role that links it.

A reader who downloads a chapter's notebook, or copies the own-model page's cells, needs ``initmem`` installed; this
module makes the book offer it. :func:`build_wheel` builds the wheel of the checkout (``python -m build --wheel`` on a
copy of the files a wheel is built from, so that concurrent builds share no ``build/`` folder and the checkout gets
no build output); the book's extension (:mod:`initmem.book.extension`) puts it into the HTML build's
``_dist/`` (:data:`DIST_DIR`) once the pages are written. In the pages, the MyST role ``wheel`` writes a command
around the wheel's file name, as code linking to the file: the role with the text ``pip install {}`` shows
``pip install initmem-0.1.0-py3-none-any.whl``, linked to ``_dist/initmem-0.1.0-py3-none-any.whl``
(:func:`wheel_role`). ``make dist`` builds the same wheel, with the sdist, into ``dist/``.

Example::

    >>> wheel_name("0.1.0")
    'initmem-0.1.0-py3-none-any.whl'
"""

from __future__ import annotations

import logging
import posixpath
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..base.version import __version__

__all__ = ["DIST_DIR", "DistError", "build_wheel", "missing_build_requirements", "wheel_name", "wheel_role"]

log = logging.getLogger("initmem.book.dist")

#: The folder of the HTML build that holds the wheel.
DIST_DIR = "_dist"
#: What a wheel is built from, relative to the repository root (``pyproject.toml`` names the readme; setuptools adds
#: the licence files it finds by its default patterns).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "src")
#: Never copied: caches and the metadata an editable install leaves in ``src/``.
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


class DistError(RuntimeError):
    """The wheel could not be built (the message ends with the tail of the build's output)."""


def wheel_name(version: str = __version__) -> str:
    """The file name of the wheel of initmem ``version`` (a pure-Python wheel: ``py3-none-any``)."""
    return f"initmem-{version}-py3-none-any.whl"


def missing_build_requirements(root: str | Path) -> list[str]:
    """The build requirements of ``<root>/pyproject.toml`` (``[build-system] requires``) that this environment does
    not satisfy; empty when the wheel builds here without downloading anything.

    Raises:
        DistError: ``build`` is not installed.
    """
    try:
        import build
    except ImportError:
        raise DistError("building the wheel needs the package build: pip install 'build>=1.0'") from None
    requires = build.ProjectBuilder(root).build_system_requires
    return sorted(r for r in requires if next(iter(build.check_dependency(r)), None) is not None)


def build_wheel(out_dir: str | Path, root: str | Path | None = None) -> Path:
    """Build the wheel of the checkout at ``root`` (default: the repository root) into ``out_dir``; returns its path.

    ``python -m build --wheel`` runs on a temporary copy of :data:`WHEEL_SOURCES`. It builds without an isolated
    environment when this one has the build requirements of ``pyproject.toml`` (setuptools, wheel: no download,
    :func:`missing_build_requirements`), else in an isolated one (which installs them from the package index).

    Raises:
        DistError: ``build`` is not installed, or the build failed.
    """
    from ..base.paths import find_repo_root

    root = Path(root) if root is not None else find_repo_root()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="initmem-wheel-") as tmp:
        for name in WHEEL_SOURCES:
            source = root / name
            if source.is_dir():
                shutil.copytree(source, Path(tmp, name), ignore=_IGNORED)
            elif source.is_file():
                shutil.copy2(source, Path(tmp, name))
        isolated = bool(missing_build_requirements(tmp))
        command = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), tmp]
        proc = subprocess.run(
            command + ([] if isolated else ["--no-isolation"]), capture_output=True, text=True, check=False
        )
    wheel = out / wheel_name()
    if proc.returncode != 0 or not wheel.is_file():
        raise DistError(f"python -m build --wheel failed (exit status {proc.returncode}):\n{proc.stdout[-2000:]}")
    log.info("built %s%s", wheel, " (in an isolated environment)" if isolated else "")
    return wheel


def wheel_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Any, options: Any = None, content: Any = None
) -> tuple[list[Any], list[Any]]:
    """The docutils role ``wheel``: ``text`` with ``{}`` replaced by :func:`wheel_name`, as code that links to the
    wheel in the HTML build's ``_dist/``, relative to the page (the text ``pip install "{}[book]"`` shows the command
    that installs the wheel with the book's extras)."""
    from docutils import nodes

    if "{}" not in text:
        message = inliner.reporter.error(
            f"the wheel role needs {{}} where the file name goes, got {text!r}", line=lineno
        )
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    docname = inliner.document.settings.env.docname
    target = posixpath.relpath(f"{DIST_DIR}/{wheel_name()}", posixpath.dirname(docname) or ".")
    shown = text.replace("{}", wheel_name())
    return [nodes.reference(rawtext, "", nodes.literal(shown, shown), refuri=target, internal=False)], []

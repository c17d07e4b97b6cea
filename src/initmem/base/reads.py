"""The result files a process read or looked for: what an executed page records as the results it depends on.

The package's loaders call :func:`note` with every path they read or look for
(:func:`initmem.sweeps.store.read_checked`, the run store's look-up of a cached run, the loaders of files that may be
absent: a file looked for but absent counts, since its appearing changes what the page shows); a loader of a folder's
files lists them with :func:`listed`, which notes the pattern. The notebook runner asks a page's kernel for
:func:`noted` once the page has run (:mod:`initmem.book.runner`), and the page's digest covers those files' contents
(:mod:`initmem.book.digest`): a page re-executes when a file it read changes, and only then.

>>> from pathlib import Path
>>> note("results/cpu/NN_name.nc") == Path("results/cpu/NN_name.nc")
True
>>> str(Path("results/cpu/NN_name.nc").resolve()) in noted()
True
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["note", "listed", "noted", "is_listing"]

#: The absolute paths noted in this process (a page's kernel: since it started).
_NOTED: set[str] = set()


def note(path: str | os.PathLike) -> Path:
    """Note that ``path`` is read or looked for (absolute, as the working directory resolves it); return it as a
    Path, so that a loader can write ``read(note(path))``."""
    path = Path(path)
    _NOTED.add(str(path.resolve()))
    return path


def listed(folder: str | os.PathLike, pattern: str) -> list[Path]:
    """The files of ``folder`` that match the glob ``pattern`` (``"*/runs/*.nc"``), sorted; the pattern is noted
    (``<folder>/<pattern>``, absolute), so that a page depends on which files match, besides those it reads."""
    folder = Path(folder)
    _NOTED.add(str(folder.resolve() / pattern))
    return sorted(folder.glob(pattern))


def is_listing(path: str) -> bool:
    """Whether a noted path is a pattern of :func:`listed` (it holds a glob character) rather than a file."""
    return any(c in str(path) for c in "*?[")


def noted() -> list[str]:
    """Every path and pattern noted in this process, absolute and sorted."""
    return sorted(_NOTED)

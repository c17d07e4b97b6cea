"""Progress bars: :func:`auto_tqdm`, the one place that imports ``tqdm.auto``.

``tqdm.auto`` draws a widget in a notebook and text elsewhere; where a notebook kernel has no ipywidgets (the book's
executed notebooks) it warns "IProgress not found" at import and falls back to text, which works. Every bar of the
package comes from here, so that the warning never reaches a page, whichever bar a process draws first.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["auto_tqdm"]


def auto_tqdm() -> Any:
    """The ``tqdm.auto.tqdm`` class, imported without its warning where ipywidgets is missing."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        from tqdm.auto import tqdm
    return tqdm

"""Module docstrings state the contract (issue 45 item 3): at most 15 lines each.

A module docstring says what the module is for, its main entry points, shapes, units, the statistic and its null
where relevant, and links to the page that explains it; derivations and method essays live on the book's pages.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "initmem"

#: The longest a module docstring may be, in lines.
MAX_LINES = 15

MODULES = sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py"))


def _docstring_lines(module: str) -> int:
    docstring = ast.get_docstring(ast.parse((PACKAGE / module).read_text()), clean=False)
    return len(docstring.splitlines()) if docstring else 0


@pytest.mark.parametrize(
    "module",
    MODULES,
)
def test_module_docstring_is_at_most_15_lines(module):
    lines = _docstring_lines(module)
    assert lines <= MAX_LINES, (
        f"src/initmem/{module}: its docstring has {lines} lines (at most {MAX_LINES}): keep the contract, move the "
        "derivation or the method to the page that explains it and link that page"
    )

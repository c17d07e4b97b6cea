"""The examples in the package's docstrings (``>>>``) are true: each module's run as a doctest."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "initmem"
#: Every module whose docstrings hold an example, by dotted name.
WITH_EXAMPLES = sorted(
    ".".join(("initmem", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")
    for path in PACKAGE.rglob("*.py")
    if ">>>" in path.read_text(encoding="utf-8") and path.name != "__main__.py"
)


def test_examples_are_found():
    assert {"initmem.base.messages", "initmem.study.verdicts.ledger"} <= set(WITH_EXAMPLES)


@pytest.mark.parametrize("module", WITH_EXAMPLES)
def test_docstring_examples_hold(module):
    result = doctest.testmod(
        importlib.import_module(module), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=False
    )
    assert result.attempted, f"{module}: no example ran"
    assert not result.failed, (
        f"{module}: {result.failed} of {result.attempted} docstring examples fail (run python -m doctest -v on it)"
    )

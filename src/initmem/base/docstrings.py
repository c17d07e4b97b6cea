"""Where a Python module's docstrings are: :func:`docstring_statements`."""

from __future__ import annotations

import ast
from collections.abc import Iterator

__all__ = ["docstring_statements"]


def docstring_statements(tree: ast.AST) -> Iterator[ast.Expr]:
    """Every statement of ``tree`` that is a docstring: the first statement of the module, of a class or of a
    function (``async`` too) where it is a string constant alone."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                yield first

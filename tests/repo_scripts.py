"""The repository's scripts (``scripts/``, ``benchmarks/``) as modules, for the tests that call their functions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(relative: str, name: str | None = None) -> ModuleType:
    """The script at ``ROOT / relative`` executed as a module named ``name`` (default: its file stem), registered in
    :data:`sys.modules` while it executes (a dataclass it defines looks its module up there)."""
    name = name or Path(relative).stem
    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

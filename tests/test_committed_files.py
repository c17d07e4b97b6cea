"""What the repository commits stays small: every tracked file is at most 2 MiB (the results are netCDF files
compressed by :func:`initmem.sweeps.store.write_run`; data and anything decoded from it are never committed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIMIT_BYTES = 2 * 1024**2


def _tracked_files() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no list of committed files")
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    return [ROOT / name for name in listed.decode().split("\0") if name]


def test_every_committed_file_is_at_most_2_mib():
    sizes = {path.relative_to(ROOT): path.stat().st_size for path in _tracked_files() if path.is_file()}
    too_big = {str(path): size for path, size in sizes.items() if size > LIMIT_BYTES}
    assert not too_big, f"committed files over 2 MiB (bytes): {too_big}"

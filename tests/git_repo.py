"""Git for the tests of declarations: a command in a scratch repository (a fixed author, an optional commit date) and
whether this checkout has the full history that :func:`initmem.study.verdicts.preregistration.declared` reads."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_AUTHOR = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def git(cwd: Path, *args: str, date: str | None = None) -> str:
    """``git -C cwd args`` (its stdout, stripped); ``date``: the author and commit date (ISO 8601)."""
    env = {**_AUTHOR, "PATH": "/usr/bin:/bin"}
    if date:
        env.update(GIT_COMMITTER_DATE=date, GIT_AUTHOR_DATE=date)
    return subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True, env=env
    ).stdout.strip()


def full_history() -> bool:
    """Whether this checkout is a git repository with its whole history (not a shallow clone)."""
    try:
        return git(ROOT, "rev-parse", "--is-shallow-repository") == "false"
    except (subprocess.CalledProcessError, OSError):
        return False

"""The book's repository buttons come from the clone's hosted ``origin`` remote (initmem.book.repository)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from initmem.book.repository import configure_repository_buttons, origin_url, web_url


@pytest.mark.parametrize(
    ("remote", "url"),
    [
        ("git@github.com:someone/initmem.git", "https://github.com/someone/initmem"),
        ("https://github.com/someone/initmem", "https://github.com/someone/initmem"),
        ("https://token@GitLab.com/group/initmem.git/", "https://gitlab.com/group/initmem"),
        ("ssh://git@bitbucket.org:22/team/initmem.git", "https://bitbucket.org/team/initmem"),
        ("/work/main", None),
        ("file:///work/main", None),
        ("../initmem", None),
        ("https://example.org/someone/initmem.git", None),
        ("git@github.com:initmem.git", None),
    ],
)
def test_web_url_of_each_remote_form(remote, url):
    assert web_url(remote) == url


def _clone(path: Path, remote: str | None) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if remote is not None:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def _configure(srcdir: Path, **options) -> dict:
    config = SimpleNamespace(html_theme_options=dict(options))
    configure_repository_buttons(SimpleNamespace(srcdir=str(srcdir)), config)
    return config.html_theme_options


def test_buttons_follow_the_origin_remote(tmp_path):
    github = _clone(tmp_path / "github", "git@github.com:someone/initmem.git")
    assert origin_url(github) == "git@github.com:someone/initmem.git"
    assert _configure(github, repository_branch="main") == {
        "repository_branch": "main",
        "repository_url": "https://github.com/someone/initmem",
        "use_repository_button": True,
        "use_issues_button": True,
    }
    bitbucket = _clone(tmp_path / "bitbucket", "git@bitbucket.org:team/initmem.git")
    options = _configure(bitbucket)
    assert options["use_repository_button"] and not options["use_issues_button"]  # the theme has no such button


def test_no_buttons_without_a_hosted_remote_and_a_configured_url_wins(tmp_path):
    assert origin_url(tmp_path) is None  # not a clone
    assert _configure(tmp_path) == {}
    assert _configure(_clone(tmp_path / "none", None)) == {}
    assert _configure(_clone(tmp_path / "local", "/work/main")) == {}
    github = _clone(tmp_path / "github", "https://github.com/someone/initmem")
    assert _configure(github, repository_url="https://gitlab.com/other/fork") == {
        "repository_url": "https://gitlab.com/other/fork"
    }


def test_a_book_theme_build_links_the_fork(tmp_path):
    """End to end: sphinx-book-theme with the extension renders the repository and issues buttons of the remote."""
    pytest.importorskip("sphinx_book_theme")
    src = _clone(tmp_path / "book", "git@github.com:someone/initmem.git")
    (src / "conf.py").write_text(
        'extensions = ["initmem.book.extension"]\nhtml_theme = "sphinx_book_theme"\nexclude_patterns = ["_build"]\n'
    )
    (src / "index.rst").write_text("Root\n====\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).resolve().parents[1] / "src"), os.environ.get("PYTHONPATH", "")]
        ),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", str(src), str(src / "_build")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (src / "_build" / "index.html").read_text(encoding="utf-8")
    assert 'href="https://github.com/someone/initmem"' in html
    assert "https://github.com/someone/initmem/issues/new" in html

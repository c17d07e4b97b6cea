"""The book's repository buttons, from the clone it is built in.

``_config.yml`` names no repository URL: the book is built from clones and forks whose hosted address this
repository cannot know. :func:`configure_repository_buttons` (a ``config-inited`` handler of
:mod:`initmem.book.extension`) fills it in from the clone's ``origin`` remote when that is a repository on
GitHub, GitLab or Bitbucket, and turns on sphinx-book-theme's repository button (and its issues button, which the
theme supports for GitHub and GitLab only). A URL written in ``_config.yml`` (``repository.url``) wins; a clone
without such a remote (a local path, no remote, no git) builds the book without repository buttons.

Example::

    >>> web_url("git@github.com:someone/initmem.git")
    'https://github.com/someone/initmem'
    >>> web_url("/home/someone/initmem") is None
    True
"""

from __future__ import annotations

import logging
import re
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["HOSTS", "ISSUE_HOSTS", "configure_repository_buttons", "origin_url", "web_url"]

log = logging.getLogger("initmem.book.repository")

#: The hosts sphinx-book-theme recognises a repository URL of (it refuses other URLs without a provider option).
HOSTS = ("github.com", "gitlab.com", "bitbucket.org")
#: The hosts whose issue trackers the theme's issues button supports.
ISSUE_HOSTS = ("github.com", "gitlab.com")

#: ``git@host:owner/repo(.git)``, ``ssh://git@host/owner/repo(.git)`` or ``https://[user@]host/owner/repo(.git)``.
_REMOTE = re.compile(
    r"^(?:(?:https?|ssh|git)://(?:[^@/]+@)?|[^@/]+@)(?P<host>[^/:]+)(?::\d+)?[:/](?P<owner>[^/]+)/(?P<repo>[^/]+?)"
    r"(?:\.git)?/?$"
)


def web_url(remote: str) -> str | None:
    """The web address ``https://<host>/<owner>/<repo>`` of a git ``remote`` on one of :data:`HOSTS` (SSH, scp-like
    or HTTPS form, with or without ``.git``), or None for anything else (a local path, another host)."""
    match = _REMOTE.match(remote.strip())
    if match is None or match["host"].lower() not in HOSTS:
        return None
    return f"https://{match['host'].lower()}/{match['owner']}/{match['repo']}"


def origin_url(root: str | Path) -> str | None:
    """The URL of the ``origin`` remote of the git clone at ``root``, or None (no git, no clone, no such remote)."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "remote", "get-url", "origin"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    url = proc.stdout.strip()
    return url if proc.returncode == 0 and url else None


def configure_repository_buttons(app: Any, config: Any) -> None:
    """``config-inited`` handler: without a ``repository_url`` theme option, take the web address of the clone's
    ``origin`` remote (:func:`web_url`) and turn the repository and (where supported) issues buttons on."""
    options = config.html_theme_options
    if options.get("repository_url"):
        return
    remote = origin_url(app.srcdir)
    url = web_url(remote) if remote else None
    if url is None:
        log.info("no hosted origin remote (%s): the book has no repository buttons", remote)
        return
    options["repository_url"] = url
    options["use_repository_button"] = True
    options["use_issues_button"] = url.split("/")[2] in ISSUE_HOSTS
    log.info("repository buttons link to %s", url)

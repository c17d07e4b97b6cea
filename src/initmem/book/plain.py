"""A downloaded chapter's Markdown outputs as plain CommonMark, with commands that work where it runs.

The book's pages print Markdown for the book's own build, in MyST: ``{download}``, ``{ref}`` and ``{doc}`` roles, a
``:::{dropdown}`` fence, definition lists (:mod:`initmem.book.page`). A plain Jupyter shows MyST as raw text, so a
chapter to download (:mod:`initmem.book.portable`) starts with :func:`use_plain_markdown`: from then on its kernel
shows every ``IPython.display.Markdown`` output as :func:`commonmark` of it, and the command under each figure
(``reproduce: `initmem experiments ...```) as the one that works there (:func:`reproduce_here`): the papermill line
for the notebook outside a checkout, where ``initmem experiments`` has no repository to run in.

>>> commonmark("data: {download}`results/cpu/04.nc <../../results/cpu/04.nc>` ({ref}`the rules <verdict-04>`)")
'data: `results/cpu/04.nc` (the rules)'
>>> commonmark(":::{dropdown} The values\\n`lr` = `0.1`\\n: the learning rate\\n:::")
'**The values**\\n\\n- `lr` = `0.1`: the learning rate'
"""

from __future__ import annotations

import json
import re
import shlex

__all__ = ["commonmark", "papermill_command", "reproduce_here", "use_plain_markdown"]

#: A MyST role with its text, ``{name}`text``` or ``{name}`text <target>```.
_ROLE = re.compile(r"\{(\w+)\}`([^`<]*?)\s*(?:<([^`>]*)>)?`")
#: A ``:::{dropdown} Title`` fence, its body and its closing ``:::``.
_DROPDOWN = re.compile(r"^:::\{dropdown\}\s*(.*?)\n(.*?)\n:::$", re.MULTILINE | re.DOTALL)
#: A definition list entry: a term, then ``: definition`` on the next line.
_DEFINITION = re.compile(r"^(?!- )([^\n]+)\n: (.+)$", re.MULTILINE)
#: The command under a figure (:func:`initmem.book.page.source_note`).
_REPRODUCE = re.compile(r"reproduce: `(initmem experiments [^`]+)`")


def commonmark(text: str) -> str:
    """``text`` (MyST, as the book's pages print it) in plain CommonMark: a role becomes its text (a ``{download}``
    its file name in code font, a role without text its target), a dropdown its title in bold over its body, and a
    definition list a bullet list."""

    def role(match: re.Match) -> str:
        name, shown, target = match.group(1), match.group(2).strip(), match.group(3)
        shown = shown or (target or "")
        return f"`{shown}`" if name == "download" else shown

    text = _ROLE.sub(role, text)
    text = _DROPDOWN.sub(lambda m: f"**{m.group(1).strip()}**\n\n{m.group(2)}", text)
    return _DEFINITION.sub(r"- \1: \2", text)


def papermill_command(name: str, command: str) -> str:
    """The papermill line that executes the downloaded notebook ``<name>.ipynb`` as ``initmem experiments`` would
    with ``command`` (its ``--preset`` and ``-p`` overrides; the other flags say where to run and mean nothing here),
    into ``<name>-run.ipynb``.

    >>> papermill_command("04_batch_size", "initmem experiments --preset smoke --only 04 -p batch_sizes '[64, 256]'")
    'papermill 04_batch_size.ipynb 04_batch_size-run.ipynb -p preset smoke -y \\'{"batch_sizes": [64, 256]}\\''
    """
    words, preset, overrides = shlex.split(command), None, {}
    for i, word in enumerate(words):
        if word == "--preset":
            preset = words[i + 1]
        elif word in ("-p", "--parameter"):
            overrides[words[i + 1]] = json.loads(words[i + 2])
    line = ["papermill", f"{name}.ipynb", f"{name}-run.ipynb"] + (["-p", "preset", preset] if preset else [])
    if overrides:
        line += ["-y", json.dumps(overrides)]
    return shlex.join(line)


def reproduce_here(text: str, name: str) -> str:
    """``text`` with each ``initmem experiments`` command under a figure replaced by :func:`papermill_command` for
    notebook ``name``, unless the kernel runs inside a checkout (:func:`initmem.base.paths.find_repo_root`), where
    the command works as it is."""
    from ..base.paths import RootError, find_repo_root

    try:
        find_repo_root()
        return text
    except RootError:
        return _REPRODUCE.sub(lambda m: f"reproduce: `{papermill_command(name, m.group(1))}`", text)


def use_plain_markdown(name: str) -> None:
    """From now on, show every ``IPython.display.Markdown`` output of this kernel (notebook ``name``) as plain
    CommonMark with its commands for where it runs (:func:`commonmark`, :func:`reproduce_here`); nothing outside
    IPython."""
    from IPython import get_ipython
    from IPython.display import Markdown

    shell = get_ipython()
    if shell is not None:
        formatter = shell.display_formatter.formatters["text/markdown"]
        formatter.for_type(Markdown, lambda shown: reproduce_here(commonmark(shown.data), name))

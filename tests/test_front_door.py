"""The front door: citation metadata, the landing page, and what the docs and `make tex` say about a PDF."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PAPER_URL = "https://arxiv.org/abs/2605.29152"


def test_citation_cff_cites_the_paper_and_the_software():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert {"message", "title", "authors", "version", "license"} <= set(cff)
    paper = cff["preferred-citation"]
    assert [a["family-names"] for a in paper["authors"]] == ["Das", "Beneventano", "Dey", "McKinley", "Poggio"]
    assert paper["year"] == 2026 and paper["url"] == PAPER_URL
    assert any(i["value"] == "arXiv:2605.29152" for i in paper["identifiers"])
    assert "repository-code" not in cff  # no URL is known: nothing invented


def test_no_repository_url_is_invented():
    """The URL comes from the clone's origin remote at build time (tests/test_book_repository.py), not the config."""
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    assert config["repository"]["url"] == ""
    assert "initmem.book.extension" in config["sphinx"]["config"]["extensions"]


def test_landing_page_states_the_question_and_links_paper_ledger_and_reproduce():
    text = (REPO / "book" / "intro.md").read_text()
    top = text[: text.index("## The question")]
    assert "**The question:**" in top and "$\\sigma_w$" in top
    assert f"]({PAPER_URL})" in top
    assert "](generated/99_reproduction.ipynb)" in top and "](reproduce.md)" in top
    toc = (REPO / "_toc.yml").read_text()
    assert "book/generated/99_reproduction" in toc and "book/reproduce" in toc


def test_landing_page_pastes_its_results_from_the_notebooks():
    """The results at a glance are generated: glued by the ledger and chapter 01, pasted by the landing page."""
    text = (REPO / "book" / "intro.md").read_text()
    top = text[: text.index("## The question")]
    for key, notebook in (
        ("r_answer", "99_reproduction"),
        ("r_forest", "99_reproduction"),
        ("r_glance", "99_reproduction"),
        ("e01_fig_spread", "01_optimizers"),
        ("p00_scale", "00_presets"),  # the one-line scale comparison, read from the presets
    ):
        block = f"```{{glue}} {key}\n:doc: generated/{notebook}.ipynb\n```"
        inline = f"{{glue:text}}`generated/{notebook}.ipynb::{key}:s`"  # a text, pasted as a paragraph
        assert block in top or inline in top, key
        source = (REPO / "notebooks" / f"{notebook}.py").read_text()
        # glued directly, by page.figure (shown with its source line, or glued only) or by page.table
        calls = (f'glue("{key}", ', f'"{key}", source)', f'page.figure(fig, "{key}"', f'"{key}", show=False)')
        assert any(call in source for call in calls), key


def test_the_pdf_has_one_documented_command_and_its_configuration():
    """`make pdf` (documented on the Reproduce page) runs the pdflatex builder with XeLaTeX, SVG figures converted.

    The conversion of pasted figures is tested in tests/test_book_extension.py; the whole PDF takes minutes and is
    built by hand (make pdf)."""
    section = (REPO / "book" / "reproduce.md").read_text().split("## A PDF")[1].split("\n## ")[0]
    assert "make pdf" in section and "_build/latex/initmem.pdf" in section
    makefile = (REPO / "Makefile").read_text()
    target = makefile.split("\npdf:")[1].split("\n\n")[0]
    assert target.startswith(" book tex") and "jupyter-book build . --builder pdflatex" in target
    for package in ("texlive-xetex", "latexmk", "librsvg2-bin"):
        assert package in makefile.split("TEX_PACKAGES :=")[1].split("\ntex:")[0] and package in section
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    assert config["latex"]["latex_engine"] == "xelatex"
    assert config["latex"]["latex_documents"]["targetname"] == "initmem.tex"
    assert "sphinxcontrib.rsvgconverter" in config["sphinx"]["config"]["extensions"]
    assert ["latex", "image/svg+xml", 15] in config["sphinx"]["config"]["nb_mime_priority_overrides"]
    assert "make pdf" in (REPO / "README.md").read_text()


def test_make_tex_says_what_it_installs_and_how_much_before_installing(tmp_path):
    """`make tex` where TeX is missing, as root, with apt-get replaced by a stub that logs its calls and lists two
    downloads of 300 MB and 150 MB: it names the packages and the size (450 MB) before the real install starts, and
    that install is not quiet (apt shows each download and package)."""
    import shutil
    import subprocess

    if shutil.which("make") is None or os.geteuid() != 0:
        pytest.skip("needs make, and root (the target installs only as root)")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    log = tmp_path / "calls.log"
    (stubs / "apt-get").write_text(
        "#!/bin/sh\n"
        f'echo "apt-get $*" >> {log}\n'
        'case "$*" in *--print-uris*) echo "\'http://x/a.deb\' a.deb 300000000 SHA256:0";'
        " echo \"'http://x/b.deb' b.deb 150000000 SHA256:1\";; esac\n"
    )
    (stubs / "apt-get").chmod(0o755)
    for tool in ("make", "awk", "sh", "id", "grep", "cat", "echo"):
        found = shutil.which(tool)
        if found:
            (stubs / tool).symlink_to(found)
    proc = subprocess.run(
        ["make", "--no-print-directory", "tex"],
        cwd=REPO,
        env={"PATH": str(stubs)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = log.read_text().splitlines()
    assert [c.split()[1] for c in calls] == ["update", "install", "install"] and "--print-uris" in calls[1]
    assert "-qq" not in calls[2] and "texlive-xetex" in calls[2]
    lines = proc.stdout.splitlines()
    assert any("texlive-xetex" in line and "installing TeX" in line for line in lines)
    assert any("about 450 MB to download" in line for line in lines)


def test_every_notebook_that_prints_markdown_renders_it_as_myst():
    """A notebook's Markdown outputs (verdict boxes, the ledger's collapsible blocks) are MyST only if the notebook
    says so in its metadata; without it, a ``:::{dropdown}`` shows as text (the ledger did, 14 times)."""
    plain = [
        nb.name
        for nb in sorted((REPO / "notebooks").glob("*.py"))
        if "Markdown(" in (text := nb.read_text()) and "render_markdown_format: myst" not in text.split("# ---", 2)[1]
    ]
    assert not plain, f"notebooks that print Markdown without the MyST render format: {plain}"


def test_no_notebook_or_book_page_holds_a_tab():
    """A TAB in a page's source is a typing slip (``\\t`` where ``\\text`` was meant, in a Python string) that
    renders as a gap in the book."""
    sources = [*sorted((REPO / "notebooks").glob("*.py")), *sorted((REPO / "book").glob("*.md"))]
    tabbed = [p.relative_to(REPO).as_posix() for p in sources if "\t" in p.read_text()]
    assert not tabbed, tabbed


def test_the_licence_and_the_bibtex_are_where_readers_look():
    """LICENSE holds the MIT licence that pyproject.toml and CITATION.cff declare; the landing page gives the licence
    and a BibTeX entry for the paper and for this software that agree with CITATION.cff; CITATION.cff has no
    placeholder left."""
    import re

    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert (REPO / "LICENSE").read_text().startswith("MIT License\n")
    declared = re.search(r'^license = "(.+)"$', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    assert declared == citation["license"] == "MIT"
    assert "TODO" not in (REPO / "CITATION.cff").read_text()
    intro = (REPO / "book" / "intro.md").read_text()
    bibtex = re.search(r"```bibtex\n(.*?)```", intro, re.S).group(1)
    paper = citation["preferred-citation"]
    assert paper["title"] in bibtex and "arXiv:2605.29152" in bibtex and PAPER_URL in bibtex
    assert all(f"{a['family-names']}, {a['given-names']}" in bibtex for a in paper["authors"])
    assert citation["title"] in bibtex and f"version = {{{citation['version']}}}" in bibtex
    assert "MIT licence" in intro


def test_no_committed_page_records_a_machine_path():
    """The executed pages are the record: papermill's metadata names each page's place in the repository (it used to
    hold the builder's absolute checkout path, and a copy of the whole input notebook), and no page names a folder of
    the machine it was built on."""
    import json
    import re

    machine = re.compile(r'"/(?:work|home|Users|root|tmp|private|var)/')
    for page in sorted((REPO / "book" / "generated").glob("*.ipynb")):
        text = page.read_text()
        papermill = json.loads(text)["metadata"].get("papermill", {})
        assert papermill.get("output_path") == f"book/generated/{page.name}", page.name
        assert papermill.get("input_path") == f"notebooks/{page.stem}.py", page.name
        assert not machine.search(text), (page.name, machine.search(text).group(0))

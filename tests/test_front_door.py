"""The front door: citation metadata, the landing page, and what the docs say about a PDF."""

from __future__ import annotations

import re
from pathlib import Path

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
    for key, notebook in (("r_glance", "99_reproduction"), ("e01_fig_spread", "01_optimizers")):
        assert f"```{{glue}} {key}\n:doc: generated/{notebook}.ipynb\n```" in top
        assert f'glue("{key}", ' in (REPO / "notebooks" / f"{notebook}.py").read_text()


def test_reproduce_page_says_how_to_get_a_pdf_or_why_not():
    text = (REPO / "book" / "reproduce.md").read_text()
    section = text[text.index("## A PDF"):]
    assert "--builder pdflatex" in section and "pyppeteer" in section
    assert re.search(r"texlive-latex-extra", section)

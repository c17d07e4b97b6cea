"""initmem.book.extension on a small Sphinx project: figures glued in a notebook (SVG and PNG) and pasted on
another page become images of the build, and the pasting page is rebuilt when the notebook changes."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("myst_nb")

GLUE_PREFIX = "application/papermill.record/"  # myst_nb.ext.glue.GLUE_PREFIX: what glue(..., display=False) writes
#: The root page (Sphinx writes it on every build, so it cannot show that a page follows the notebook).
ROOT = """# Root

```{toctree}
pasted
nb
```
"""
PAGE = """# Pasted

```{glue} fig_svg
:doc: nb.ipynb
```

```{glue} fig_png
:doc: nb.ipynb
```
"""
CONF = """extensions = ["myst_nb", "initmem.book.extension"]
nb_execution_mode = "off"
exclude_patterns = ["_build"]
"""


def _svg(label: str) -> str:
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="40pt" height="20pt"><text y="15">{label}</text></svg>'


def _png() -> bytes:
    """A 1 x 1 white PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    header = (1).to_bytes(4, "big") * 2 + bytes([8, 0, 0, 0, 0])
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff")) + chunk(b"IEND", b"")
    )


def _glued(name: str, mime: str, content: str):
    """The output ``myst_nb.glue(name, ..., display=False)`` leaves in a notebook."""
    return nbformat.v4.new_output(
        "display_data",
        data={GLUE_PREFIX + mime: content, GLUE_PREFIX + "text/plain": "<Figure>"},
        metadata={"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}},
    )


def _write_notebook(path: Path, svg: str) -> None:
    cell = nbformat.v4.new_code_cell("glue(...)")
    cell.outputs = [
        _glued("fig_svg", "image/svg+xml", svg),
        _glued("fig_png", "image/png", base64.b64encode(_png()).decode()),
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# The notebook"), cell])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))


def _build(src: Path, page: str = "pasted") -> str:
    """Build ``src`` into ``src/_build/html``; the HTML of ``page``."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).resolve().parents[1] / "src"), os.environ.get("PYTHONPATH", "")]
        ),
    }
    # into _build/html: myst-nb keeps its glue caches beside the output, in _build/jupyter_execute
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(src / "_build" / "html")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return (src / "_build" / "html" / f"{page}.html").read_text(encoding="utf-8")


def _images(html: str) -> list[str]:
    """The pasted figures' image paths, in page order."""
    return re.findall(r'<img[^>]* src="(_images/[0-9a-f]{64}\.(?:svg|png))"', html)


def test_figures_pasted_from_a_notebook_are_images_and_follow_it(tmp_path):
    (tmp_path / "conf.py").write_text(CONF)
    (tmp_path / "index.md").write_text(ROOT)
    (tmp_path / "pasted.md").write_text(PAGE)
    notebook = tmp_path / "nb.ipynb"
    _write_notebook(notebook, _svg("first"))
    html = _build(tmp_path)
    svg, png = _images(html)
    out = tmp_path / "_build" / "html"
    assert (out / svg).read_text() == _svg("first") and (out / png).read_bytes() == _png()
    assert svg.removeprefix("_images/").startswith(hashlib.sha256(_svg("first").encode()).hexdigest())

    _write_notebook(notebook, _svg("second"))
    later = time.time() + 5  # surely after the build's read of pasted.md, whatever the file system's clock resolution
    os.utime(notebook, (later, later))
    svg_again, _ = _images(_build(tmp_path))  # pasted.md unchanged, but it pastes from the changed notebook
    assert svg_again != svg and (out / svg_again).read_text() == _svg("second")


def test_figures_pasted_into_the_pdfs_latex_are_included_images(tmp_path):
    """The PDF's LaTeX includes the pasted figures: the PNG as it is, the SVG converted to PDF by rsvgconverter."""
    import shutil

    pytest.importorskip("sphinxcontrib.rsvgconverter")
    if shutil.which("rsvg-convert") is None:
        pytest.skip("rsvg-convert is not installed (make tex installs it)")
    (tmp_path / "conf.py").write_text(CONF.replace('"myst_nb",', '"myst_nb", "sphinxcontrib.rsvgconverter",'))
    (tmp_path / "index.md").write_text(ROOT)
    (tmp_path / "pasted.md").write_text(PAGE)
    _write_notebook(tmp_path / "nb.ipynb", _svg("first"))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).resolve().parents[1] / "src"), os.environ.get("PYTHONPATH", "")]
        ),
    }
    out = tmp_path / "_build" / "latex"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "latex", "-q", str(tmp_path), str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0 and "WARNING" not in proc.stderr, proc.stderr[-3000:]
    tex = next(out.glob("*.tex")).read_text(encoding="utf-8")
    included = re.findall(r"\\sphinxincludegraphics(?:\[[^]]*\])?\{\{([0-9a-f]{64})\}\.(pdf|png)\}", tex)
    svg_sha = hashlib.sha256(_svg("first").encode()).hexdigest()
    png_sha = hashlib.sha256(_png()).hexdigest()
    assert (svg_sha, "pdf") in included and (png_sha, "png") in included, tex[-2000:]
    assert (out / f"{svg_sha}.pdf").read_bytes().startswith(b"%PDF") and (out / f"{png_sha}.png").read_bytes() == _png()


# --------------------------------------------------------------------------- titles and downloads
def test_page_titles_with_math_are_plain_text_in_the_tab():
    from initmem.book.extension import plain_page_title, plain_title

    assert (
        plain_title(r"where the $\sum\eta^2$ and $T_{\rm SGD}$ clocks come from")
        == "where the ∑η² and T_SGD clocks come from"
    )
    assert plain_title(r"the $T_{L_2}$ clock, $\frac{1+\beta}{1-\beta}$") == "the T_L2 clock, (1+β)/(1-β)"
    assert plain_title("no math at all") == "no math at all"
    # the rendered title MathJax typesets in the page, as the theme's template gets it
    context = {"title": r'T5. the <span class="math notranslate nohighlight">\(T_{\mathrm{L2}}\)</span> clock'}
    plain_page_title(None, "book/generated/T5_weight_decay", "page.html", context, None)
    assert context["title"] == "T5. the T_L2 clock"


def test_every_chapter_offers_its_notebook_to_run_first_in_the_download_menu(tmp_path):
    """The theme's download group of a chapter page starts with _notebooks/<name>.ipynb; pages without a notebook
    source (the introduction) keep the theme's menu as it is."""
    from types import SimpleNamespace

    from initmem.book.extension import download_button

    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "initmem"\n')
    (root / "notebooks" / "04_batch_size.py").write_text("# %%\n")
    app = SimpleNamespace(srcdir=str(root), config=SimpleNamespace(initmem_root=""))

    def context():
        group = {"label": "download-buttons", "buttons": [{"label": "download-notebook-button"}]}
        return {"header_buttons": [group], "pathto": lambda name, resource=0: f"../../{name}"}

    chapter = context()
    download_button(app, "book/generated/04_batch_size", "page.html", chapter, None)
    first = chapter["header_buttons"][0]["buttons"][0]
    assert first["url"] == "../../_notebooks/04_batch_size.ipynb" and first["label"].startswith("download-portable")
    for page in ("book/intro", "book/generated/T9_missing"):
        other = context()
        download_button(app, page, "page.html", other, None)
        assert [b["label"] for b in other["header_buttons"][0]["buttons"]] == ["download-notebook-button"]


def test_viewcode_keeps_a_type_alias_in_its_module():
    """``TensorPair = tuple[Tensor, Tensor]`` says its module is ``builtins``: viewcode would list a page it cannot
    write. The handler keeps it in the module it is documented in, and leaves every other name to viewcode."""
    from initmem.book.extension import source_module

    assert source_module(None, "initmem.run.data.prepare", "TensorPair") == "initmem.run.data.prepare"
    assert source_module(None, "initmem.run.data.prepare", "cifar10_tensors") is None
    assert source_module(None, "initmem.no_such_module", "x") is None


def test_viewcode_keeps_a_table_in_the_module_that_documents_it():
    """``presets.BOOK_PRESET_BY_NOTEBOOK`` is a ``Table`` (its ``__module__``: ``initmem.study.experiments``). Followed
    there, it made Sphinx prefix every backlink of the experiments' source page with ``initmem.study.design.presets``, and
    those anchors do not exist; a class imported into presets is still followed to where it is defined."""
    from initmem.book.extension import source_module

    assert (
        source_module(None, "initmem.study.design.presets", "BOOK_PRESET_BY_NOTEBOOK") == "initmem.study.design.presets"
    )
    assert source_module(None, "initmem.study.design.presets", "Table") is None
    assert source_module(None, "initmem.study.design.presets", "judged_by") is None
    # a routine of a compiled module: its source cannot be shown (viewcode would link _modules/time.html, unwritten)
    assert source_module(None, "initmem.run.elapsed", "wall_clock") == "initmem.run.elapsed"
    assert source_module(None, "initmem.run.elapsed", "now") is None


def test_the_wheel_role_writes_a_command_linked_to_the_wheel_from_any_page(tmp_path):
    """``{wheel}`pip install {}``` on a page one folder down: the command with the wheel's file name, as code, linked
    to ``_dist/<wheel>`` relative to that page; text without ``{}`` is an error that says where the name goes."""
    from initmem.book.dist import wheel_name

    (tmp_path / "conf.py").write_text(CONF)
    (tmp_path / "index.md").write_text("# Root\n\n```{toctree}\nsub/page\n```\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "page.md").write_text('# Page\n\nRun {wheel}`pip install "{}[book]"`, not {wheel}`pip`.\n')
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", str(tmp_path), str(tmp_path / "_build" / "html")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (tmp_path / "_build" / "html" / "sub" / "page.html").read_text(encoding="utf-8")
    link = re.search(r'<a class="[^"]*" href="([^"]+)"><code[^>]*>(.*?)</code></a>', html)
    assert link, html
    assert link[1] == f"../_dist/{wheel_name()}"
    assert re.sub(r"<[^>]+>", "", link[2]).replace("&quot;", '"') == f'pip install "{wheel_name()}[book]"'
    assert "the wheel role needs {} where the file name goes" in proc.stderr


def test_an_explorations_site_links_the_pages_it_lacks_into_the_committed_build(tmp_path):
    """In an exploration's site (initmem.book.site), a {doc} link and a Markdown link to a page of the book that the
    site does not render lead to that page in the committed build, relative to the page; links within the site stay
    the site's."""
    repo, site = tmp_path / "repo", tmp_path / "site"
    for name in ("99_other.ipynb", "T1.ipynb", "ch.md"):
        (repo / "book" / "generated").mkdir(parents=True, exist_ok=True)
        (repo / "book" / "generated" / name).write_text("{}")
    (site / "book" / "generated").mkdir(parents=True)
    config = f'initmem_record_html = "../committed"\ninitmem_root = "{repo}"\ninitmem_wheel = False\n'
    (site / "conf.py").write_text(CONF + config)
    (site / "index.md").write_text("# Root\n\n```{toctree}\nbook/generated/ch\n```\n")
    chapter = "# Chapter\n\nSee {doc}`99_other`, [the law](T1.ipynb#the-law) and [the root](../../index.md).\n"
    (site / "book" / "generated" / "ch.md").write_text(chapter)
    html = _build(site, "book/generated/ch")
    hrefs = re.findall(r'<a class="reference[^"]*" href="([^"]+)"', html)
    assert "../../../committed/book/generated/99_other.html" in hrefs
    assert "../../../committed/book/generated/T1.html#the-law" in hrefs
    assert "../../index.html" in hrefs  # in the site

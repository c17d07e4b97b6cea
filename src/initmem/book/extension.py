"""The book's Sphinx extension (listed under ``extensions`` in ``_config.yml``):

* MathJax on every page (titles with math appear in every page's navigation);
* figures pasted from another page's glue (:class:`PasteFigures`: myst-nb cannot paste an SVG), described by the alt
  text their notebook wrote and linked to their full-size SVG (:class:`DescribeFigures`, :func:`svg_title`);
* numbers pasted into prose in the book's number format (:class:`TypesetPastedText`);
* a page that pastes from another rebuilt when the other changes (:func:`note_paste_dependencies`);
* repository buttons to the clone's hosted remote (:func:`initmem.book.repository.configure_repository_buttons`);
* plain-text titles for the browser's tab (:func:`plain_title`);
* each chapter's notebook to download, runnable outside the repository (:mod:`initmem.book.portable`), and the
  checkout's wheel with the ``{wheel}`` role (:mod:`initmem.book.dist`);
* source links of type aliases (:func:`source_module`); in an exploration's small site, links to the committed
  build for pages it lacks (:class:`LinksToTheRecord`).

The glue internals used are myst-nb 1.x's, the series jupyter-book 1.x uses.
"""

from __future__ import annotations

import hashlib
import html
import os
import posixpath
import re
from binascii import a2b_base64
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from ..base.numbers import typeset
from .dist import DIST_DIR, build_wheel, wheel_role
from .portable import PORTABLE_DIR, write_portable_notebooks
from .repository import configure_repository_buttons

__all__ = [
    "PasteFigures",
    "DescribeFigures",
    "TypesetPastedText",
    "svg_title",
    "LinksToTheRecord",
    "note_paste_dependencies",
    "plain_title",
    "plain_page_title",
    "portable_notebooks",
    "download_button",
    "source_module",
    "setup",
]

#: The image types a pasted figure may come in, in myst-nb's order of preference for HTML, and their suffixes.
FIGURE_TYPES = {"image/svg+xml": ".svg", "image/png": ".png", "image/jpeg": ".jpeg", "image/gif": ".gif"}


class PasteFigures(SphinxPostTransform):
    """Replace each reference to a figure glued on another page by an image of the build.

    HTML: the figure's data (SVG text, or base64 for the other types) is written to
    ``<outdir>/_images/<sha256>.<ext>``, named by its content as myst-nb names the images of a notebook's outputs,
    and linked from the page. Other builders (the PDF's LaTeX): it is written to
    ``<doctreedir>/pasted/<sha256>.<ext>`` and registered as an image of the page, so that the builder copies it and
    an image converter (``sphinxcontrib.rsvgconverter`` for SVG, which LaTeX cannot include) converts it first.
    References to anything but a figure are left to myst-nb's own transform, which runs next.
    """

    default_priority = 4  # before myst_nb.ext.glue.crossref.ReplacePendingGlueReferences (5)

    def run(self, **kwargs: Any) -> None:
        """Paste every figure referenced on this page."""
        from myst_nb.ext.glue.crossref import read_glue_cache
        from myst_nb.ext.glue.utils import PendingGlueReference

        builder = self.app.builder
        html = builder.format == "html"
        page_dir = Path(builder.outdir, self.env.docname).parent
        for node in list(self.document.findall(PendingGlueReference)):
            glued = read_glue_cache(self.env.mystnb_config.output_folder, node.refdoc).get(node.key, {})
            data = glued.get("data", {})
            mime = next((m for m in FIGURE_TYPES if m in data), None)
            if mime is None:  # not a figure, or a missing key (which myst-nb reports)
                continue
            content = data[mime]
            blob = content.encode("utf-8") if mime == "image/svg+xml" else a2b_base64(content)
            folder = Path(builder.outdir, builder.imagedir) if html else Path(self.env.doctreedir, "pasted")
            image = folder / (hashlib.sha256(blob).hexdigest() + FIGURE_TYPES[mime])
            if not image.is_file():
                image.parent.mkdir(parents=True, exist_ok=True)
                image.write_bytes(blob)
            alt = plain_title(svg_title(blob.decode("utf-8"))) if mime == "image/svg+xml" else ""
            alt = alt or f"figure {node.key}"
            if html:
                uri = Path(os.path.relpath(image, page_dir)).as_posix()
                node.replace_self(_linked(nodes.image(uri=uri, candidates={"*": uri}, alt=alt), uri))
            else:  # an absolute path: Sphinx joins it to srcdir, which leaves it unchanged
                self.env.images.add_file(self.env.docname, str(image))
                node.replace_self(nodes.image(uri=str(image), candidates={mime: str(image)}, alt=alt))


class DescribeFigures(SphinxPostTransform):
    """Every SVG figure of an HTML page (a notebook's output; pasted ones are done by :class:`PasteFigures`): its alt
    text is the SVG's title (:func:`svg_title`, which :func:`initmem.book.page.figure` writes) as plain text
    (:func:`plain_title`: no TeX), and the image links to
    its full-size SVG in the build's image folder, where Sphinx copies it under its own name (myst-nb names it by its
    content, so the name is unique)."""

    default_priority = 6  # after myst-nb's glue references (5), which paste the outputs of other cells
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        """Describe and link every SVG image of the page that is not linked yet."""
        builder = self.app.builder
        images = posixpath.relpath(builder.imagedir, posixpath.dirname(builder.get_target_uri(self.env.docname)))
        for image in list(self.document.findall(nodes.image)):
            uri = image["uri"]
            path = Path(self.env.srcdir, uri)
            if not uri.endswith(".svg") or isinstance(image.parent, nodes.reference) or not path.is_file():
                continue
            image["alt"] = plain_title(svg_title(path.read_text(encoding="utf-8"))) or image.get("alt", "")
            image.replace_self(_linked(image.deepcopy(), posixpath.join(images, path.name)))


class TypesetPastedText(SphinxPostTransform):
    """Every number pasted into prose by ``{glue:text}`` (myst-nb's ``pasted-text`` inline, formatted by Python's
    format spec, which writes an ASCII hyphen for a minus) in the book's number format
    (:func:`initmem.base.numbers.typeset`: "−1.24", never "-1.24" or "-0.00")."""

    default_priority = 6  # after myst-nb's glue references (5), which paste the text of other pages

    def run(self, **kwargs: Any) -> None:
        """Typeset the text of every pasted inline of the page."""
        for inline in list(self.document.findall(nodes.inline)):
            if "pasted-text" in inline["classes"]:
                text = inline.astext()
                if typeset(text) != text:
                    inline.children = [nodes.Text(typeset(text))]


def _linked(image: nodes.image, target: str) -> nodes.reference:
    """``image`` inside a link to ``target`` (its full-size file), which opens it alone."""
    link = nodes.reference("", "", refuri=target, internal=True, classes=["figure-full-size"])
    link["reftitle"] = "the figure at full size"
    link.append(image)
    return link


#: The title matplotlib writes into an SVG's metadata (``savefig(metadata={"Title": ...})``).
_SVG_TITLE = re.compile(r"<dc:title>(.*?)</dc:title>", re.DOTALL)


def svg_title(svg: str) -> str:
    """The title in an SVG's metadata (where :func:`initmem.book.page.figure_svg` writes the alt text), unescaped;
    ``""`` without one.

    >>> svg_title('<svg><metadata><dc:title>SGD &amp; Adam</dc:title></metadata></svg>')
    'SGD & Adam'
    """
    found = _SVG_TITLE.search(svg)
    return html.unescape(found.group(1)).strip() if found else ""


class LinksToTheRecord(SphinxPostTransform):
    """In an exploration's site (the config value ``initmem_record_html``: the committed build, relative to this
    build's root), a cross-reference to a page of the book that the site does not render (a ``{doc}`` link, a Markdown
    link to its ``.md`` or ``.ipynb`` file) becomes a link to that page in the committed build: ``<book page>.html``
    there, for any page whose source ``<initmem_root>/<docname>.md`` or ``.ipynb`` exists. Other references are left
    to Sphinx and MyST, which resolve them after this."""

    default_priority = 8  # before MyST's resolver (9) and Sphinx's ReferencesResolver (10)

    def run(self, **kwargs: Any) -> None:
        """Point every reference to a page of the book outside the site at the committed build."""
        from sphinx import addnodes

        base, root = self.config.initmem_record_html, Path(self.config.initmem_root or ".")
        if not base or self.app.builder.format != "html":
            return
        up = "../" * self.env.docname.count("/")
        for node in list(self.document.findall(addnodes.pending_xref)):
            doc, anchor = _referenced_page(node)
            if doc is None or doc in self.env.all_docs:
                continue
            if any((root / f"{doc}{suffix}").is_file() for suffix in (".md", ".ipynb")):
                uri = f"{up}{base}/{doc}.html" + (f"#{anchor}" if anchor else "")
                node.replace_self(nodes.reference("", "", *node.children, refuri=uri, internal=False))


def _referenced_page(node: Any) -> tuple[str | None, str]:
    """``(docname, anchor)`` of the page a ``{doc}`` role or a MyST link to a file names, relative names joined to the
    referring page's; ``(None, "")`` for any other reference."""
    target, anchor = str(node.get("reftarget", "")), ""
    if node.get("reftype") == "myst" and node.get("refdomain") is None:
        target, _, anchor = target.partition("#")
        if not target.endswith((".md", ".ipynb")):
            return None, ""
        target = target.rsplit(".", 1)[0]
    elif node.get("reftype") != "doc":
        return None, ""
    joined = target.lstrip("/") if target.startswith("/") else posixpath.join(posixpath.dirname(node["refdoc"]), target)
    return posixpath.normpath(joined), anchor


def note_paste_dependencies(app: Any, doctree: nodes.document) -> None:
    """``doctree-read`` handler: make every page this page pastes glued outputs from a dependency of it."""
    from myst_nb.ext.glue.utils import PendingGlueReference

    for node in doctree.findall(PendingGlueReference):
        app.env.note_dependency(app.env.doc2path(node.refdoc))


#: TeX in page titles and the text it stands for in a browser's tab.
_TEX_TEXT = {
    r"\sum": "∑",
    r"\eta": "η",
    r"\sigma": "σ",
    r"\lambda": "λ",
    r"\alpha": "α",
    r"\beta": "β",
    r"\tau": "τ",
    r"\mathbb E": "𝔼",
    r"\|": "‖",
    r"\equiv": "≡",
    r"\arg\min": "argmin ",
    r"\ln": "ln ",
    r"\tilde": "",
    r"\,": " ",
    r"\infty": "∞",
    r"\le": "≤",
    r"\ge": "≥",
    "^2": "²",
    "^4": "⁴",
}


def plain_title(text: str) -> str:
    """A page title as plain text: each ``$...$`` (or MathJax ``\\(...\\)``) written without TeX, e.g.
    ``"the $\\sum\\eta^2$ and $T_{\\rm SGD}$ clocks"`` -> ``"the ∑η² and T_SGD clocks"``."""

    def untex(match: re.Match) -> str:
        math = match.group(1) or match.group(2)
        math = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1)/(\2)", math)
        math = re.sub(r"\\(?:mathrm|rm|text)\s*\{([^{}]*)\}", r"\1", math)
        math = re.sub(r"\\rm\s*", "", math)
        for tex, plain in sorted(_TEX_TEXT.items(), key=lambda kv: -len(kv[0])):
            math = math.replace(tex, plain)
        math = re.sub(r"_\{([^{}]*)\}", lambda sub: "_" + sub.group(1).replace("_", ""), math)
        math = re.sub(r"\\([A-Za-z]+)", r"\1", math)  # any other command: its name
        return re.sub(r"[{}]", "", math).strip()

    return re.sub(r"\$([^$]+)\$|\\\((.+?)\\\)", untex, text)


def plain_page_title(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """``html-page-context`` handler: the page's ``title`` (its ``<title>``, the tab's text) as plain text
    (:func:`plain_title`); math is typeset in the page (MathJax), not in a tab."""
    title = context.get("title")
    if title:
        text = html.unescape(re.sub(r"<[^>]+>", "", str(title)))
        context["title"] = html.escape(plain_title(text))


#: The pages that are executed notebooks (``book/generated/<name>``).
_GENERATED = "book/generated/"


def _notebooks_dir(app: Any) -> Path | None:
    """The checkout's ``notebooks/``: under the config value ``initmem_root`` (an exploration's site,
    :mod:`initmem.book.site`, names the checkout it explores), else found from the book's source folder; None outside
    a checkout."""
    from ..base.paths import RootError, find_repo_root

    try:
        return find_repo_root(app.config.initmem_root or None, start=Path(app.srcdir)) / "notebooks"
    except RootError:
        return None


def portable_notebooks(app: Any, exception: Exception | None) -> None:
    """``build-finished`` handler: write every chapter's notebook to download (:mod:`initmem.book.portable`) into the
    HTML build's ``_notebooks/``."""
    notebooks = _notebooks_dir(app)
    if exception is not None or app.builder.format != "html" or notebooks is None:
        return
    names = [doc[len(_GENERATED) :] for doc in app.env.found_docs if doc.startswith(_GENERATED)]
    write_portable_notebooks(notebooks, Path(app.outdir) / PORTABLE_DIR, names)


def package_wheel(app: Any, exception: Exception | None) -> None:
    """``build-finished`` handler: build the checkout's wheel into the HTML build's ``_dist/``, which the role
    ``{wheel}`` links (:mod:`initmem.book.dist`); not when the config value ``initmem_wheel`` is False (an
    exploration's site)."""
    notebooks = _notebooks_dir(app)
    if exception is not None or app.builder.format != "html" or notebooks is None or not app.config.initmem_wheel:
        return
    build_wheel(Path(app.outdir) / DIST_DIR, root=notebooks.parent)


def download_button(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """``html-page-context`` handler, after the theme's: the first entry of a chapter's download menu is its notebook
    to run with an installed initmem (``_notebooks/<name>.ipynb``, :func:`portable_notebooks`)."""
    notebooks = _notebooks_dir(app)
    name = pagename[len(_GENERATED) :]
    group = next((b for b in context.get("header_buttons", []) if b.get("label") == "download-buttons"), None)
    if not pagename.startswith(_GENERATED) or notebooks is None or group is None:
        return
    if not (notebooks / f"{name}.py").is_file():
        return
    url = f"{context['pathto'](PORTABLE_DIR, 1)}/{name}.ipynb"
    group["buttons"].insert(
        0,
        {
            "type": "link",
            "url": url,
            "text": "notebook to run",
            "icon": "fas fa-play",
            "tooltip": "Download this chapter as a notebook that runs with an installed initmem",
            "label": "download-portable-notebook-button",
        },
    )


def source_module(app: Any, modname: str, attribute: str) -> str | None:
    """``viewcode-follow-imported`` handler: only a class or a routine defined in initmem is followed to where it is
    defined (viewcode's own rule: None). Anything else keeps the module it is documented in: data (a table, a type
    alias such as ``tuple[Tensor, Tensor]``), whose ``__module__`` is its class's (``builtins`` for an alias), not
    the module that defines it; and a class or routine of another package or of a compiled module (``wall_clock =
    time.perf_counter``), whose source viewcode cannot show. Followed, they would make viewcode list ``builtins`` or
    ``time`` among the modules with no page behind the link, or tie the class's source page to this module's anchors
    (Sphinx keeps the first documenting module it meets as every backlink's prefix), so that page's links miss."""
    import importlib
    import inspect

    try:
        value = getattr(importlib.import_module(modname), attribute.split(".", 1)[0])
    except (ImportError, AttributeError):
        return None
    defined_here = str(getattr(value, "__module__", "")).startswith("initmem")
    if (inspect.isclass(value) or inspect.isroutine(value)) and defined_here:
        return None
    return modname


def setup(app: Any) -> dict[str, Any]:  # pragma: no cover - called by Sphinx
    """Register the extension with Sphinx."""
    app.set_html_assets_policy("always")
    app.add_config_value("initmem_wheel", True, "html")  # build the wheel into _dist/ (package_wheel)
    app.add_config_value("initmem_root", "", "html")  # the checkout (default: found from the sources, _notebooks_dir)
    app.add_post_transform(PasteFigures)
    app.add_post_transform(DescribeFigures)
    app.add_post_transform(TypesetPastedText)
    app.add_post_transform(LinksToTheRecord)
    app.add_config_value("initmem_record_html", "", "html")  # an exploration's site: the committed build (relative)
    app.connect("doctree-read", note_paste_dependencies)
    app.connect("config-inited", configure_repository_buttons)
    app.connect("html-page-context", plain_page_title)
    app.connect("html-page-context", download_button, priority=600)  # after the theme's header buttons (501)
    app.connect("build-finished", portable_notebooks)
    app.connect("build-finished", package_wheel)
    app.add_role("wheel", wheel_role)
    if "viewcode-follow-imported" in app.events.events:  # sphinx.ext.viewcode is loaded (the book lists it first)
        app.connect("viewcode-follow-imported", source_module)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}

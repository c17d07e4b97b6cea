"""Build the book and read every page in headless Chromium, offline.

For every HTML page of ``_build/html`` (served on 127.0.0.1, read in a 1280 x 1000 viewport), the browser must
report: no console errors, no request to another host and no failed request, math typeset by the local MathJax (an
``mjx-container`` in every math element, no raw ``$$`` left), every image decoded, every internal link (and its
fragment) resolving, no table cut off on the right (a wide one scrolls in its own box), no table or display equation
wider than the column (none needs a sideways scroll, dropdowns opened), and figures whose text is legible. Every experiment chapter shows a figure on its first screen, the landing page's first screen holds the answer,
a figure and the compact table, and a search lists the chapters before the API reference. An exploration
(``initmem experiments --preset cpu --only 04 -p batch_sizes "[64, 256]"``, rendered in a site of its own) shows its banner
with the parameter set by hand on its first screen, and its main figure draws the committed record. Screenshots of a few pages go to ``$INITMEM_ARTIFACTS/screenshots`` (default
``artifacts/screenshots``).

The book is built once per session with :func:`initmem.book.build.build_book`. Set ``INITMEM_BOOK_SKIP_BUILD=1``
to check an existing ``_build/html`` instead (e.g. right after ``make book``).
"""

from __future__ import annotations

import functools
import html.parser
import json
import os
import re
import shutil
import struct
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from documented import EXPLORATION, EXPLORATION_REUSE  # tests/ is on sys.path under pytest

pytestmark = pytest.mark.book

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("INITMEM_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("INITMEM_CHROMEDRIVER", "/usr/bin/chromedriver")
HTML_DIR = REPO / "_build" / "html"
NOT_PAGES = ("_static", "_sources", "_images")
#: The viewport every page is read in (CSS px): a laptop screen.
VIEWPORT = (1280, 1000)
#: The experiment chapters, which must show a figure on their first screen.
EXPERIMENT_CHAPTER = re.compile(r"book/generated/0[1-8]_\w+\.html")
#: How much of a figure must be in the first screen for it to count as shown there (CSS px: an axis with its labels).
MIN_VISIBLE_PX = 150
#: How much of a table must be in the first screen for it to count as shown there (CSS px: its header and first row).
MIN_TABLE_PX = 80
#: The smallest size, in CSS px, at which the figures' body text (initmem.study.presentation.plots.STYLE["font.size"] points:
#: tick and axis labels, titles) may be rendered; the book's own text is 16 px.
MIN_FIGURE_TEXT_PX = 10.0

FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--window-size=1280,1000",
]

# Runs in the page: wait for MathJax's first typeset (if MathJax is on the page) and for every image.
WAIT_JS = """
const done = arguments[arguments.length - 1];
const images = () => Promise.all(Array.from(document.images).map(img =>
    img.complete ? null : new Promise(r => { img.onload = img.onerror = r; })));
const mj = (window.MathJax && MathJax.startup && MathJax.startup.promise) ? MathJax.startup.promise : null;
Promise.all([mj, images()]).then(() => done('ok'), e => done('error: ' + e));
"""

# Runs in the page after WAIT_JS: what the assertions need.
INSPECT_JS = """
const math = Array.from(document.querySelectorAll('.math'));
const clone = document.body.cloneNode(true);
clone.querySelectorAll('pre, code, script, style, textarea, mjx-assistive-mml').forEach(e => e.remove());
return {
  title: document.title,
  mathjax_loaded: !!(window.MathJax && window.MathJax.startup),
  n_math: math.length,
  n_mjx: document.querySelectorAll('mjx-container').length,
  untypeset: math.filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 80)),
  raw_dollars: (clone.textContent.match(/\\$\\$/g) || []).length,
  bad_images: Array.from(document.images)
      .filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.currentSrc || i.src),
  n_images: document.images.length,
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
  cut_tables: cutTables(),
  dataframes: Array.from(document.querySelectorAll('article.bd-article table.dataframe'))
      .map(t => t.textContent.trim().replace(/\\s+/g, ' ').slice(0, 2000)),
  truncated_cells: Array.from(document.querySelectorAll('article.bd-article table.dataframe td'))
      .map(td => td.textContent.trim()).filter(text => text.endsWith('...') || text.endsWith('\u2026')),
  figures: Array.from(document.querySelectorAll('article.bd-article img[src*="_images/"]')).map(img => ({
      src: img.currentSrc || img.src, top: img.getBoundingClientRect().top + window.scrollY,
      height: img.getBoundingClientRect().height, width: img.getBoundingClientRect().width,
      natural_width: img.naturalWidth})),
  bold_paragraphs: boldParagraphs(),
  sideways: sideways(),  // last: it opens the dropdowns
};

// The article's paragraphs of which a bold run (font weight 600 or more) holds over 80 characters: a bold sentence,
// where a bold word or number is fine.
function boldParagraphs() {
  const out = [];
  for (const p of document.querySelectorAll('article.bd-article p')) {
    const runs = [p, ...p.querySelectorAll('*')].filter(e => parseInt(getComputedStyle(e).fontWeight) >= 600);
    const long = runs.find(e => e.textContent.trim().length > 80);
    if (long) out.push(long.textContent.trim().slice(0, 100));
  }
  return out;
}

// Tables of the article that stick out on its right, or are cut by a box that hides what overflows. A table
// inside a box that scrolls sideways (overflow-x auto or scroll) is fine if that box fits.
function cutTables() {
  const article = document.querySelector('article.bd-article');
  if (!article) return [];
  const limit = article.getBoundingClientRect().right + 1;
  const cut = [];
  for (const table of article.querySelectorAll('table')) {
    let box = table.parentElement;
    while (box !== article && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
    const overflow = box === article ? 'visible' : getComputedStyle(box).overflowX;
    const scrolls = overflow === 'auto' || overflow === 'scroll';
    const right = (scrolls ? box : table).getBoundingClientRect().right;
    const hidden = !scrolls && box !== article && table.scrollWidth > box.clientWidth + 1;
    if (right > limit || hidden)
      cut.push({table: table.textContent.trim().replace(/\\s+/g, ' ').slice(0, 60), width: table.scrollWidth,
                right: Math.round(right), limit: Math.round(limit), box: overflow});
  }
  return cut;
}

// Every table and display equation of the article, with the dropdowns opened: how many were measured, and those
// wider than their box. A table's box is its nearest ancestor that does not let it overflow (the box it would scroll
// in; a table in none is measured against the article); an equation's box is its own container (Sphinx's div.math,
// MathJax's display container). Wider: the box's scrollWidth exceeds its clientWidth (a sideways scroll).
function sideways() {
  const article = document.querySelector('article.bd-article');
  if (!article) return {tables: 0, equations: 0, wide: []};
  article.querySelectorAll('details').forEach(d => { d.open = true; });
  const wide = [];
  const check = (kind, el, scrollWidth, clientWidth) => {
    if (scrollWidth > clientWidth + 1)
      wide.push({kind: kind, text: el.textContent.trim().replace(/\\s+/g, ' ').slice(0, 60),
                 scroll_width: scrollWidth, client_width: clientWidth});
  };
  const tables = article.querySelectorAll('table');
  for (const table of tables) {
    let box = table.parentElement;
    while (box !== article && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
    if (box === article) check('table', table, table.offsetWidth, article.clientWidth);
    else check('table', table, box.scrollWidth, box.clientWidth);
  }
  const equations = article.querySelectorAll('div.math, mjx-container[display="true"]');
  for (const eq of equations) check('equation', eq, eq.scrollWidth, eq.clientWidth);
  return {tables: tables.length, equations: equations.length, wide: wide};
}
"""

# Runs in the page: where (CSS px from the top of the page) the landing page's answer, first figure and compact table
# start and end; null for what is missing.
FIRST_SCREEN_JS = """
const article = document.querySelector('article.bd-article');
const box = (el) => el ? {top: el.getBoundingClientRect().top + window.scrollY,
                          bottom: el.getBoundingClientRect().bottom + window.scrollY} : null;
const answer = Array.from(article.querySelectorAll('p, pre, div.output, div.cell_output'))
    .find(el => /Of the ledger's \\d+ rows/.test(el.textContent));
const figure = article.querySelector('img');
const table = Array.from(article.querySelectorAll('table'))
    .find(t => /verdict/.test(t.textContent) && /C1/.test(t.textContent));
return {answer: box(answer), figure: box(figure), table: box(table)};
"""

# Runs in an exploration's page: its banner (the admonition of the cell tagged initmem-exploration) and what it says.
BANNER_JS = """
const banner = Array.from(document.querySelectorAll('article.bd-article .admonition'))
    .find(el => el.textContent.includes('Exploration, not the committed record'));
if (!banner) return null;
const rect = banner.getBoundingClientRect();
return {top: rect.top + window.scrollY, bottom: rect.bottom + window.scrollY, text: banner.textContent,
        strong: Array.from(banner.querySelectorAll('strong')).map(s => s.textContent),
        first_row: (banner.querySelector('tbody tr') || {textContent: ''}).textContent,
        images: Array.from(document.querySelectorAll('article.bd-article img[src*="_images/"]')).map(img => ({
            src: img.currentSrc || img.src, top: img.getBoundingClientRect().top + window.scrollY}))};
"""

# Runs on the search page once a query was submitted: true when Sphinx has listed every result.
SEARCH_DONE_JS = """
const summary = document.querySelector('#search-results p.search-summary');
return !!summary && summary.innerText.length > 0;
"""
# The results in the order listed: the page each links to, and whether it is an API object (Sphinx gives an
# object's result a <span> with its description).
SEARCH_HITS_JS = """
return Array.from(document.querySelectorAll('#search-results ul.search > li')).map(li => ({
  page: new URL(li.querySelector('a').href).pathname.replace(/^\\//, ''),
  object: !!li.querySelector(':scope > span'),
}));
"""


def _browser_available() -> str | None:
    for path, what in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromedriver")):
        if not (Path(path).is_file() or shutil.which(path)):
            return f"{what} not found at {path} (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    return None


def _set_viewport(driver, width: int, height: int) -> None:
    """Resize the window so that the page itself (the viewport) is ``width`` x ``height`` CSS px."""
    driver.set_window_size(width, height)
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    driver.set_window_size(2 * width - inner[0], 2 * height - inner[1])


def _png_dpi(path: Path) -> float | None:
    """The resolution recorded in a PNG's pHYs chunk, in dots per inch (matplotlib writes the figure's dpi there)."""
    data = path.read_bytes()
    pos = 8  # after the signature
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        if kind == b"pHYs":
            per_unit, _, unit = struct.unpack(">IIB", data[pos + 8 : pos + 17])
            return per_unit * 0.0254 if unit == 1 else None  # unit 1: per metre
        if kind == b"IDAT":  # pHYs comes before the image data, or not at all
            return None
        pos += 12 + length
    return None


class _Ids(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("id", "name") and v:
                self.ids.add(v)


class _ProseText(html.parser.HTMLParser):
    """The text a reader sees as prose: every text node outside ``pre``, ``code``, ``script`` and ``style``."""

    _SKIPPED = frozenset({"pre", "code", "script", "style"})

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.chunks: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.depth += tag in self._SKIPPED

    def handle_endtag(self, tag):
        self.depth -= tag in self._SKIPPED and self.depth > 0

    def handle_data(self, data):
        if not self.depth and data.strip():
            self.chunks.append(data)


#: What MyST source looks like when it was not rendered: a directive, a glue or cross-reference role.
RAW_MYST = (":::{", "```{", "{glue", "{ref}`", "{doc}`", "{eq}`", "{download}`", "{numref}`")


@functools.cache
def _ids_of(path: Path) -> frozenset[str]:
    parser = _Ids()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return frozenset(parser.ids)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep pytest output clean
        pass


@pytest.fixture(scope="module")
def html_dir() -> Path:
    reason = _browser_available()
    if reason:
        pytest.skip(reason)
    if os.environ.get("INITMEM_BOOK_SKIP_BUILD") == "1":
        if not (HTML_DIR / "index.html").is_file():
            pytest.fail(f"INITMEM_BOOK_SKIP_BUILD=1 but {HTML_DIR / 'index.html'} does not exist")
        return HTML_DIR
    from initmem.book.build import build_book

    index = build_book()
    return index.parent


@pytest.fixture(scope="module")
def server(html_dir):
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="initmem-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    drv = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    _set_viewport(drv, *VIEWPORT)
    drv.set_page_load_timeout(60)
    drv.set_script_timeout(60)
    yield drv
    drv.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _pages(html_dir: Path) -> list[str]:
    pages = []
    for p in sorted(html_dir.rglob("*.html")):
        rel = p.relative_to(html_dir)
        if rel.parts[0] in NOT_PAGES:
            continue
        pages.append(rel.as_posix())
    return pages


def _requests(perf_log: list[dict]) -> tuple[list[str], list[tuple[str, int]]]:
    """URLs the page requested, and the (url, status) of every HTTP error response."""
    urls, failures, by_id = [], [], {}
    for entry in perf_log:
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
            by_id[msg["params"].get("requestId")] = msg["params"]["request"]["url"]
        elif msg["method"] == "Network.responseReceived":
            resp = msg["params"]["response"]
            if resp.get("status", 200) >= 400:
                failures.append((resp["url"], resp["status"]))
        elif msg["method"] == "Network.loadingFailed" and not msg["params"].get("canceled"):
            rid = msg["params"].get("requestId")
            failures.append((by_id.get(rid, str(rid)), msg["params"].get("errorText", "failed")))
    return urls, failures


@pytest.fixture(scope="module")
def report(html_dir, server, driver):
    """Visit every page once; collect what the tests check."""
    pages = _pages(html_dir)
    assert pages, f"no HTML pages in {html_dir}"
    driver.get("about:blank")
    driver.get_log("browser"), driver.get_log("performance")  # drop the start-up noise
    out = {}
    for rel in pages:
        url = f"{server}/{rel}"
        driver.get(url)
        status = driver.execute_async_script(WAIT_JS)
        info = driver.execute_script(INSPECT_JS)
        time.sleep(0.05)  # let late console messages arrive
        info["wait"] = status
        info["final_url"] = driver.current_url
        info["console"] = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        info["requests"], info["http_failures"] = _requests(driver.get_log("performance"))
        out[rel] = info
    return out


def _local(url: str, server: str) -> bool:
    # chrome:// are the browser's own resources (new-tab page), never fetched from the network
    return url.startswith(server + "/") or url == server or url.startswith(("data:", "blob:", "about:", "chrome:"))


def test_pages_found(report):
    assert "book/intro.html" in report, sorted(report)
    assert any(p.startswith("book/") for p in report)


def test_no_console_errors(report):
    errors = {p: [e["message"] for e in info["console"]] for p, info in report.items() if info["console"]}
    assert not errors, json.dumps(errors, indent=1)


def test_nothing_loaded_from_outside(report, server):
    external = {p: sorted({u for u in info["requests"] if not _local(u, server)}) for p, info in report.items()}
    external = {p: u for p, u in external.items() if u}
    assert not external, f"pages requested other hosts: {json.dumps(external, indent=1)}"
    failed = {p: info["http_failures"] for p, info in report.items() if info["http_failures"]}
    assert not failed, f"failed requests: {json.dumps(failed, indent=1)}"


def test_math_is_typeset(report):
    assert report["book/intro.html"]["n_math"] > 0, "the introduction should contain math"
    problems = {}
    for page, info in report.items():
        if info["wait"] != "ok":
            problems[page] = info["wait"]
        elif info["n_math"] and not info["mathjax_loaded"]:
            problems[page] = "math on the page but MathJax not loaded"
        elif info["n_math"] and (info["n_mjx"] == 0 or info["untypeset"]):
            problems[page] = f"untypeset math: {info['untypeset'][:3]}"
        elif info["raw_dollars"]:
            problems[page] = f"{info['raw_dollars']} raw '$$' left in the text"
    assert not problems, json.dumps(problems, indent=1)


def test_images_load(report):
    bad = {p: info["bad_images"] for p, info in report.items() if info["bad_images"]}
    assert not bad, f"images that did not decode: {json.dumps(bad, indent=1)}"


def test_no_paragraph_is_set_in_bold(report):
    bold = {page: info["bold_paragraphs"] for page, info in report.items() if info["bold_paragraphs"]}
    assert not bold, f"paragraphs set in bold (a glued one: span.pasted-text's weight): {bold}"


def test_no_table_is_cut_off(report):
    """Every table fits the page's column, or scrolls sideways in a box of its own that does (book/_static/book.css);
    none sticks out on the right or is clipped by a box that hides its overflow."""
    cut = {p: info["cut_tables"] for p, info in report.items() if info["cut_tables"]}
    assert not cut, f"tables cut off on the right: {json.dumps(cut, indent=1)}"


def test_no_table_or_equation_scrolls_sideways(report):
    """No table or display equation is wider than the book's column, dropdowns opened: none scrolls sideways in its
    box (scrollWidth at most clientWidth). Long equations break over lines; wide tables split (book/_static/book.css
    sets tables a size below the text). The book has both, so the measure cannot pass by seeing nothing."""
    measured = {kind: sum(info["sideways"][kind] for info in report.values()) for kind in ("tables", "equations")}
    assert measured["tables"] > 0 and measured["equations"] > 0, measured
    wide = {p: info["sideways"]["wide"] for p, info in report.items() if info["sideways"]["wide"]}
    assert not wide, f"tables or equations wider than the column: {json.dumps(wide, indent=1)}"


def test_no_page_shows_the_build_machine_path(html_dir):
    """Nothing on a page names the folder the book was built in (a warning printed by a notebook, a default value
    on the API page): the pages are the same wherever they are built."""
    root = str(REPO)
    leaks = [page for page in _pages(html_dir) if root in (html_dir / page).read_text(encoding="utf-8")]
    assert not leaks, f"pages that show {root}: {leaks}"


def test_no_page_shows_raw_myst_or_a_tab(html_dir):
    """Every directive and role was rendered (a Markdown output of a notebook that lacks the MyST render format shows
    its ``:::{dropdown}`` as text), and no prose or math holds a TAB (a ``\\t`` typed where ``\\text`` was meant)."""
    raw, tabs = {}, {}
    for page in _pages(html_dir):
        parser = _ProseText()
        parser.feed((html_dir / page).read_text(encoding="utf-8"))
        found = sorted({marker for chunk in parser.chunks for marker in RAW_MYST if marker in chunk})
        if found:
            raw[page] = found
        tabbed = [chunk.strip()[:60] for chunk in parser.chunks if "\t" in chunk.strip()]
        if tabbed:
            tabs[page] = tabbed[:3]
    assert not raw, f"pages that show raw MyST: {json.dumps(raw, indent=1)}"
    assert not tabs, f"pages whose text holds a TAB: {json.dumps(tabs, indent=1)}"


#: What the book's number format (initmem.base.numbers) never prints: an ASCII plus-minus, an ASCII hyphen as the minus
#: of a number (initmem.base.numbers.typeset's rule: not "ResNet-9", "2e-4" or a date), a negative zero, "1 threads",
#: and a backtick left unrendered. Math (TeX, typeset by MathJax) is not prose and is left out first (MATH).
OFF_FORMAT = {
    "+-": re.compile(r"\+-"),
    "ASCII minus": re.compile(r"(?:(?<=^)|(?<=[\s(\[=≈,;:]))-(?=\d)"),
    "negative zero": re.compile(r"(?<![\w.])[-−]0\.0+(?!\d)"),
    "1 threads": re.compile(r"(?<![\d.])1 threads\b"),
    "raw backtick": re.compile(r"`"),
}
#: Inline and display math as the HTML holds it for MathJax.
MATH = re.compile(r"\\\(.*?\\\)|\\\[.*?\\\]", re.S)
#: An interval of percentage points as the book prints one: "[−2.1, 11.0]".
PP_INTERVAL = re.compile(r"\[([-−]?\d+\.\d), ([-−]?\d+\.\d)(?:, clipped)?\]")


def _book_pages(html_dir: Path) -> list[str]:
    """The book's own pages: its chapters and its Markdown pages, not the API reference (docstrings in ASCII)."""
    return [page for page in _pages(html_dir) if page.startswith("book/") and not page.startswith("book/api")]


def test_the_pages_text_keeps_the_books_number_format(html_dir):
    """The prose and tables the pages show (text outside code and math) hold no "+-", no ASCII minus, no negative zero,
    no "1 threads", no raw backtick, and no interval of percentage points beyond ±100 (an accuracy difference is clipped there, and says so).
    Meaningful once the pages are executed by the code that formats so (initmem.base.numbers)."""
    found: dict[str, list[str]] = {}
    for page in _book_pages(html_dir):
        parser = _ProseText()
        parser.feed((html_dir / page).read_text(encoding="utf-8"))
        text = MATH.sub(" ", " ".join(parser.chunks))
        bad = [
            f"{name}: {text[max(m.start() - 20, 0) : m.end() + 5]!r}"
            for name, pattern in OFF_FORMAT.items()
            for m in pattern.finditer(text)
        ]
        for match in PP_INTERVAL.finditer(text):
            if max(abs(float(v.replace("−", "-"))) for v in match.groups()) > 100:
                bad.append(f"beyond ±100: {match.group(0)}")
        if bad:
            found[page] = bad[:5]
    assert not found, f"text off the book's number format: {json.dumps(found, indent=1, ensure_ascii=False)}"


#: A phone's screen (CSS px), and the smallest text a reader should have to read on it (CSS px).
PHONE = (390, 844)
MIN_PHONE_TEXT_PX = 9.0
#: The page with the forest plot, and how its image is told apart (its alt text, initmem.study.presentation.forest.alt_text).
FOREST_PAGE, FOREST_ALT = "book/generated/99_reproduction.html", "Forest plot of the ledger"


def test_on_a_phone_no_page_scrolls_sideways_and_the_forest_plot_is_legible(server, driver, html_dir):
    """At 390 px wide no book page is wider than the screen (a wide table scrolls in its own box), and the forest
    plot's smallest text (initmem.study.presentation.forest.SMALLEST_PT) is shown at least MIN_PHONE_TEXT_PX high.

    Holds once the pages are executed with the phone-first forest plot (initmem.study.presentation.forest.WIDTH)."""
    from initmem.study.presentation import forest

    _set_viewport(driver, *PHONE)
    try:
        wide = {}
        for page in _book_pages(html_dir):
            driver.get(f"{server}/{page}")
            driver.execute_async_script(WAIT_JS)
            width = driver.execute_script("return document.documentElement.scrollWidth")
            if width > PHONE[0]:
                wide[page] = width
        driver.get(f"{server}/{FOREST_PAGE}")
        driver.execute_async_script(WAIT_JS)
        shown = driver.execute_script(
            "return [...document.images].filter(i => i.alt.startsWith(arguments[0]))"
            ".map(i => [i.getBoundingClientRect().width, i.naturalWidth])",
            FOREST_ALT,
        )
    finally:
        _set_viewport(driver, *VIEWPORT)
    assert not wide, f"pages wider than a {PHONE[0]} px screen (their widths): {wide}"
    assert shown, f"no image with the alt text {FOREST_ALT!r} on {FOREST_PAGE}"
    for width, natural in shown:
        text_px = forest.SMALLEST_PT / 72 * width / (natural / 96)
        assert text_px >= MIN_PHONE_TEXT_PX, f"the forest plot's smallest text is {text_px:.1f} px at {PHONE[0]} px"


def test_every_figure_has_alt_text_and_links_its_full_size_svg(html_dir):
    """Every SVG figure of a book page says what it shows (its alt text, not a file name) and opens at full size
    (initmem.book.extension.DescribeFigures, PasteFigures)."""
    image = re.compile(r'<a [^>]*href="([^"]+\.svg)"[^>]*>\s*<img [^>]*alt="([^"]*)"[^>]*src="([^"]+\.svg)"')
    bare, unlinked = {}, {}
    for page in _book_pages(html_dir):
        text = (html_dir / page).read_text(encoding="utf-8")
        linked = {src: (href, alt) for href, alt, src in image.findall(text)}
        for src in re.findall(r'<img [^>]*src="([^"]+\.svg)"', text):
            if src not in linked or Path(linked[src][0]).name != Path(src).name:
                unlinked.setdefault(page, []).append(Path(src).name)
            elif len(linked[src][1]) < 20 or re.fullmatch(r"(figure )?[\w.]+", linked[src][1]):
                bare.setdefault(page, []).append(linked[src][1])
    assert not unlinked, f"figures without a link to their full size: {json.dumps(unlinked, indent=1)}"
    assert not bare, f"figures whose alt text does not say what they show: {json.dumps(bare, indent=1)}"


def test_no_dataframe_cell_is_truncated(report):
    """pandas shortens a cell longer than ``display.max_colwidth`` to "...": the notebooks show their text tables in
    full (``pd.option_context("display.max_colwidth", None)``)."""
    truncated = {p: info["truncated_cells"][:5] for p, info in report.items() if info["truncated_cells"]}
    assert not truncated, f"truncated table cells: {json.dumps(truncated, indent=1)}"


def test_landing_page_shows_the_verdicts_and_a_figure(report):
    """The front door pastes the ledger's verdict on each claim (from 99_reproduction) and a figure (from 01)."""
    intro = report["book/intro.html"]
    assert any(all(f"C{i}" in table for i in range(1, 8)) and "verdict" in table for table in intro["dataframes"])
    assert intro["figures"], "no figure on the landing page"


def test_experiment_chapters_show_a_figure_on_their_first_screen(report):
    """Read at 1280 x 1000, each experiment chapter shows at least MIN_VISIBLE_PX of a figure before any scrolling."""
    chapters = sorted(p for p in report if EXPERIMENT_CHAPTER.fullmatch(p))
    assert len(chapters) == 8, chapters
    first = {p: min((f["top"] for f in report[p]["figures"]), default=None) for p in chapters}
    late = {p: top for p, top in first.items() if top is None or top + MIN_VISIBLE_PX > VIEWPORT[1]}
    assert not late, f"no figure within the first {VIEWPORT[1]} px (top of the first figure): {late}"


def test_the_landing_pages_first_screen_holds_the_answer_a_figure_and_the_table(server, driver):
    """Read at 1280 x 1000 without scrolling: the three-sentence answer, the first figure and the compact claims table
    each start on the first screen, with at least MIN_VISIBLE_PX of the answer and the figure and MIN_TABLE_PX of the
    table (its header and first rows)."""
    _set_viewport(driver, *VIEWPORT)
    driver.get(f"{server}/book/intro.html")
    driver.execute_async_script(WAIT_JS)
    found = driver.execute_script(FIRST_SCREEN_JS)
    missing = [name for name, where in found.items() if where is None]
    assert not missing, f"not on the landing page: {missing}"
    shown = {"answer": MIN_VISIBLE_PX, "figure": MIN_VISIBLE_PX, "table": MIN_TABLE_PX}
    late = {
        name: round(where["top"])
        for name, where in found.items()
        if where["top"] + min(shown[name], where["bottom"] - where["top"]) > VIEWPORT[1]
    }
    assert not late, f"below the first {VIEWPORT[1]} px (their tops): {late}"


@pytest.fixture(scope="module")
def exploration(tmp_path_factory):
    """The Done-means exploration of chapter 04, run on this checkout into a temporary folder (its results, its
    notebook and its site: nothing is written into the checkout), executed afresh (``--force``, as on a fresh clone):
    ``(folder of its built HTML, the page's path in it, the command's output)``. It reuses the committed runs, so
    nothing trains."""
    import subprocess
    import sys

    if _browser_available():
        pytest.skip(_browser_available())
    if not (REPO / "results" / "cpu" / "04_batch_size" / "runs").is_dir():
        pytest.skip("no committed record of 04 at the cpu preset")
    folder = tmp_path_factory.mktemp("exploration")
    folders = ["--results-dir", str(folder), "--out-dir", str(folder / "notebooks")]
    env = {k: v for k, v in os.environ.items() if k != "INITMEM_ROOT"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "initmem", *EXPLORATION, "--root", str(REPO), "--force", *folders],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("04_batch_size: file://"))
    page = Path(urllib.parse.unquote(urllib.parse.urlsplit(line.split(": ", 1)[1]).path))
    html = next(parent for parent in page.parents if parent.name == "html")
    return html, page.relative_to(html).as_posix(), proc.stdout


def test_an_exploration_reuses_the_record_and_prints_its_page(exploration):
    _, _, output = exploration
    assert EXPLORATION_REUSE in output


def test_an_explorations_banner_and_overlay_are_on_its_first_screen(exploration, driver):
    """The banner names the parameter set by hand first, in bold, and the chapter's main figure, on the first screen
    too, is drawn over the committed record (its legend in the SVG says so)."""
    html, page, _ = exploration
    handler = functools.partial(_QuietHandler, directory=str(html))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        _set_viewport(driver, *VIEWPORT)
        driver.get(f"{base}/{page}")
        driver.execute_async_script(WAIT_JS)
        banner = driver.execute_script(BANNER_JS)
        assert banner is not None, "no exploration banner"
        assert banner["top"] < VIEWPORT[1] / 2, f"the banner starts at {banner['top']:.0f} px"
        assert "batch_sizes (set by you)" in banner["first_row"], banner["first_row"]
        assert any("batch_sizes" in text for text in banner["strong"])
        assert "-p batch_sizes '[64, 256]'" in banner["text"]
        figures = [img for img in banner["images"] if img["top"] < VIEWPORT[1]]
        assert figures, "no figure on the exploration's first screen"
        with urllib.request.urlopen(figures[0]["src"], timeout=10) as resp:
            svg = resp.read().decode("utf-8", errors="replace")
        assert "committed record" in svg, "the main figure does not draw the committed record"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_every_chapter_offers_its_notebook_to_run(html_dir):
    """Each page of a notebook links, from its download menu, to ``_notebooks/<name>.ipynb``, which the build wrote:
    the chapter as a notebook that runs with an installed initmem (initmem.book.portable)."""
    pages = sorted((html_dir / "book" / "generated").glob("*.html"))
    assert pages
    missing = {}
    for page in pages:
        target = html_dir / "_notebooks" / f"{page.stem}.ipynb"
        if f'href="../../_notebooks/{page.stem}.ipynb"' not in page.read_text(encoding="utf-8") or not target.is_file():
            missing[page.name] = target.is_file()
    assert not missing, f"pages without their notebook to run (whether the file exists): {missing}"


def test_the_book_offers_the_package_it_documents(html_dir):
    """The build holds the checkout's wheel in ``_dist/`` (initmem.book.dist), and the Reproduce page links it with
    the command that installs it."""
    from initmem.book.dist import wheel_name

    assert (html_dir / "_dist" / wheel_name()).is_file()
    reproduce = (html_dir / "book" / "reproduce.html").read_text(encoding="utf-8")
    assert f'href="../_dist/{wheel_name()}"' in reproduce
    assert f"pip install {wheel_name()}" in re.sub(r"<[^>]+>", "", reproduce)  # docutils wraps each word of code


def test_figure_text_is_legible(report, server, html_dir):
    """No figure is shrunk so far that its body text renders below MIN_FIGURE_TEXT_PX.

    A text of ``s`` points on a figure ``w`` inches wide, shown ``W`` CSS px wide, is ``s / 72 * W / w`` px high.
    ``w`` is the image's width over its resolution: for a PNG the dpi matplotlib records (so a high-dpi PNG is
    judged by its size in inches, not its pixels); for an SVG the browser's natural width is at 96 px per inch.
    With the figures' 10-point body text the rule is: shown at no less than 75 % of their size in inches.
    """
    from initmem.study.presentation.plots import style

    points = style.STYLE["font.size"]
    small, checked = {}, 0
    for page, info in report.items():
        for fig in info["figures"]:
            path = urllib.parse.unquote(urllib.parse.urlsplit(fig["src"]).path).lstrip("/")
            if path.endswith(".svg"):
                dpi = 96.0
            elif path.endswith(".png"):
                dpi = _png_dpi(html_dir / path)
                assert dpi, f"{path} (on {page}) records no resolution: its size in inches is unknown"
            else:
                continue
            checked += 1
            text_px = points / 72 * fig["width"] / (fig["natural_width"] / dpi)
            if text_px < MIN_FIGURE_TEXT_PX:
                small.setdefault(page, []).append(f"{Path(path).name}: {text_px:.1f} px")
    assert checked, "no figure found on any page"
    assert not small, (
        f"{points}-point figure text rendered below {MIN_FIGURE_TEXT_PX} px: {json.dumps(small, indent=1)}"
    )


def test_internal_links_resolve(report, server, html_dir):
    targets: dict[str, set[str]] = {}
    for page, info in report.items():
        for href in info["links"]:
            if not href.startswith(server + "/"):
                continue
            targets.setdefault(href, set()).add(page)
    assert targets
    broken, missing_ids, checked = {}, {}, {}
    for href, pages in sorted(targets.items()):
        base, _, fragment = href.partition("#")
        if base not in checked:
            try:
                with urllib.request.urlopen(base, timeout=10) as resp:
                    checked[base] = resp.status
            except urllib.error.HTTPError as exc:
                checked[base] = exc.code
        if checked[base] != 200:
            broken[href] = f"HTTP {checked[base]} (linked from {sorted(pages)[:3]})"
            continue
        path = urllib.parse.unquote(urllib.parse.urlsplit(base).path).lstrip("/")
        file = html_dir / path
        if file.is_dir():
            file = file / "index.html"
        if fragment and file.suffix == ".html" and file.is_file():
            if urllib.parse.unquote(fragment) not in _ids_of(file):
                missing_ids[href] = sorted(pages)[:3]
    assert not broken, json.dumps(broken, indent=1)
    assert not missing_ids, f"links to missing anchors: {json.dumps(missing_ids, indent=1)}"


def test_screenshots(report, server, driver):
    folder = Path(os.environ.get("INITMEM_ARTIFACTS", REPO / "artifacts")) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    wanted = ["book/intro.html", "book/theory.html"]
    wanted += [p for p in sorted(report) if p.startswith("book/generated/0")][:1]
    wanted += [p for p in sorted(report) if p.startswith("book/generated/T")][:1]
    for rel in wanted:
        if rel not in report:
            continue
        driver.get(f"{server}/{rel}")
        driver.execute_async_script(WAIT_JS)
        height = driver.execute_script("return Math.min(document.documentElement.scrollHeight, 6000)")
        driver.set_window_size(1280, height)
        time.sleep(0.3)  # let the layout settle at the new size
        target = folder / (rel.replace("/", "_").removesuffix(".html") + ".png")
        driver.save_screenshot(str(target))
        _set_viewport(driver, *VIEWPORT)
        assert target.stat().st_size > 10_000, f"suspiciously small screenshot {target}"


def test_search_lists_chapters_before_the_api(report, server, driver):
    """Typing "Muon" into the search page lists the chapters first: the chapter with Muon in its title leads, and
    every result on the API page (the objects and the page's own text) comes after every other page's
    (book/_static/search_scorer.js). Runs last: a search leaves its terms to highlight on the next pages visited."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(f"{server}/search.html")
    try:
        driver.find_element(By.CSS_SELECTOR, ".bd-search-container input[name='q']").send_keys("Muon", Keys.ENTER)
        WebDriverWait(driver, 30).until(lambda d: d.execute_script(SEARCH_DONE_JS))
        hits = driver.execute_script(SEARCH_HITS_JS)
    finally:
        driver.execute_script("localStorage.clear()")
    pages = [hit["page"] for hit in hits]
    api = [page.startswith("book/api") for page in pages]
    assert any(api) and any(hit["object"] for hit in hits), f"the API is no longer found: {pages}"
    first_api = api.index(True)
    assert pages[0] == "book/generated/T7_muon.html" and first_api >= 3, pages
    assert all(api[first_api:]), f"chapters listed after an API result: {pages}"

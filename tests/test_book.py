"""Build the book and read every page in headless Chromium, offline.

For every HTML page of ``_build/html`` (served on 127.0.0.1), the browser must report: no console
errors, no request to another host and no failed request, math typeset by the local MathJax (an
``mjx-container`` in every math element, no raw ``$$`` left), every image decoded, and every internal
link (and its fragment) resolving. Screenshots of a few pages go to ``$INITMEM_ARTIFACTS/screenshots``
(default ``artifacts/screenshots``).

The book is built once per session with :func:`initmem.book.build.build_book`. Set ``INITMEM_BOOK_SKIP_BUILD=1``
to check an existing ``_build/html`` instead (e.g. right after ``make book``).
"""

from __future__ import annotations

import functools
import html.parser
import json
import os
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytestmark = pytest.mark.book

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("INITMEM_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("INITMEM_CHROMEDRIVER", "/usr/bin/chromedriver")
HTML_DIR = REPO / "_build" / "html"
NOT_PAGES = ("_static", "_sources", "_images")

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
};
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


class _Ids(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("id", "name") and v:
                self.ids.add(v)


@functools.lru_cache(maxsize=None)
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
        driver.set_window_size(1280, 1000)
        assert target.stat().st_size > 10_000, f"suspiciously small screenshot {target}"

"""The documentation site, as a reader's browser shows it.

The site is built (``mkdocs build --strict``) into a temporary folder and served on 127.0.0.1;
every page is then loaded in headless Chromium
(Debian's ``chromium`` package, which ``.ci/browser-deps`` installs), driven through the
DevTools protocol over a pipe (``--remote-debugging-pipe``: no driver, no websocket, no
browser download). Any host other than 127.0.0.1 fails to resolve, as it would offline.

A page fails the test on

- an error on the console, an uncaught exception, a failed or refused request (a 404, a file
  that is not there, anything asked of the network);
- a formula left unrendered: an element of ``pymdownx.arithmatex`` that KaTeX did not render,
  or TeX (``\\frac``, ``$w$``...) in the visible text outside code;
- an internal link to a page or file that is not in the site, or to an anchor that is not on
  its page (the ids are read from the rendered pages, footnotes and headings included);
- an image that did not load;
- a signature of the API reference wider than its box (it must wrap).

The notebooks are not run for this build (``DOCS_EXECUTE_NOTEBOOKS=false``): running them
takes most of a published build's time (20 s of 25 s on a quiet 2-core machine, 50 s of 70 s on
a busy one), ``tests/test_notebooks.py`` runs them anyway, and their pages are checked like the
others, without outputs. The test is skipped, saying so, only when no Chromium is installed.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import itertools
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from test_docs import build_site

pytestmark = pytest.mark.slow  # builds the site and loads every page in Chromium

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: The names under which Debian and others install Chromium.
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

#: Seconds allowed to one page to load and settle, and to one DevTools command.
PAGE_TIMEOUT = 30.0

#: Files of the site that are not pages a reader navigates to (the host serves 404.html for
#: a missing page, from the site's root URL, which the test server does not reproduce).
NOT_PAGES = {"404.html"}

#: What a page reports once it has settled: its rendered ids, links, images and any TeX left.
INSPECT_PAGE = r"""
(async () => {
  await document.fonts.ready;
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 30)));
  const skip = "pre, code, script, style, textarea, .katex, .highlight, .jp-InputArea";
  const visible = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement && !node.parentElement.closest(skip)) visible.push(node.nodeValue);
  }
  const text = visible.join(" ");
  const tex = [
    /\\(?:frac|sum|mathbf|mathrm|operatorname|lambda|rho|sqrt|top|left|right|begin|cdot|le|ge)\b/,
    /\\[()[\]]/,
    /\$\$/,
    /\$[^$\s][^$\n]{0,80}\$/,
  ];
  const leftover = tex.map((re) => text.match(re)).filter((m) => m).map((m) => m[0]);
  return {
    ids: Array.from(document.querySelectorAll("[id], a[name]"), (e) => e.id || e.name),
    links: Array.from(document.querySelectorAll("a[href]"), (a) => a.href),
    missingImages: Array.from(document.images)
      .filter((img) => !img.complete || img.naturalWidth === 0)
      .map((img) => img.currentSrc || img.src || img.outerHTML.slice(0, 120)),
    unrendered: Array.from(document.querySelectorAll(".arithmatex"))
      .filter((e) => !e.querySelector(".katex"))
      .map((e) => e.textContent.slice(0, 80)),
    tex: leftover,
    overflowing: Array.from(document.querySelectorAll(".doc-signature pre > code"))
      .filter((e) => e.scrollWidth > e.clientWidth + 1)
      .map((e) => e.textContent.slice(0, 60)),
  };
})()
"""


def find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


class DevToolsError(RuntimeError):
    pass


class Browser:
    """Headless Chromium driven by the DevTools protocol over ``--remote-debugging-pipe``.

    Chromium reads JSON commands, each ended by a NUL byte, on its file descriptor 3 and writes
    the answers and events, the same way, on its descriptor 4.
    """

    def __init__(self, executable: str, profile: pathlib.Path):
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def move_pipes_to_3_and_4() -> None:
            # dup() first: a pipe may already sit on 3 or 4
            read, write = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(read, 3, inheritable=True)
            os.dup2(write, 4, inheritable=True)

        self.process = subprocess.Popen(
            [
                executable,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-dev-shm-usage",
                f"--user-data-dir={profile}",
                # every host but the test server fails at once, as offline
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # not pass_fds: the fds it keeps are closed after preexec_fn, 3 and 4 with them;
            # os.pipe's ends are not inheritable, so only 3 and 4 reach Chromium
            close_fds=False,
            preexec_fn=move_pipes_to_3_and_4,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._ids = itertools.count(1)
        self._buffer = b""
        self.events: list[dict] = []

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise DevToolsError("Chromium did not answer in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise DevToolsError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, session: str | None = None, **params) -> dict:
        """Send one command and return its result; events read meanwhile are kept."""
        command_id = next(self._ids)
        command: dict = {"id": command_id, "method": method, "params": params}
        if session:
            command["sessionId"] = session
        os.write(self._to_browser, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + PAGE_TIMEOUT
        while True:
            message = self._read_message(deadline)
            if message.get("id") == command_id:
                if "error" in message:
                    raise DevToolsError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method: str, session: str) -> None:
        deadline = time.monotonic() + PAGE_TIMEOUT
        while True:
            for event in self.events:
                if event.get("method") == method and event.get("sessionId") == session:
                    return
            self.events.append(self._read_message(deadline))

    def close(self) -> None:
        with contextlib.suppress(DevToolsError, OSError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


@dataclass
class PageReport:
    url: str
    problems: list[str] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    links: list[str] = field(default_factory=list)


def problems_in_events(events: list[dict], origin: str) -> list[str]:
    """Console errors, exceptions and failed or outside requests among DevTools events."""
    problems = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            description = details.get("exception", {}).get("description", details.get("text"))
            problems.append(f"uncaught exception: {description}")
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            values = [arg.get("value", arg.get("description", "")) for arg in params["args"]]
            problems.append(f"console.{params['type']}: {' '.join(map(str, values))}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            problems.append(f"console error: {entry['text']} {entry.get('url', '')}".strip())
        elif method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            if url.startswith(("http:", "https:", "ws:", "wss:")) and not url.startswith(origin):
                problems.append(f"request to the network: {url}")
        elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
            response = params["response"]
            problems.append(f"HTTP {response['status']} for {response['url']}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            problems.append(f"request failed: {params.get('errorText')}")
    return problems


def load_page(browser: Browser, session: str, url: str, origin: str) -> PageReport:
    browser.events.clear()
    browser.send("Page.navigate", session, url=url)
    browser.wait_for("Page.loadEventFired", session)
    result = browser.send(
        "Runtime.evaluate",
        session,
        expression=INSPECT_PAGE,
        awaitPromise=True,
        returnByValue=True,
    )
    if "exceptionDetails" in result:
        raise DevToolsError(f"{url}: the page inspection failed: {result['exceptionDetails']}")
    seen = result["result"]["value"]
    report = PageReport(url, ids=set(seen["ids"]), links=seen["links"])
    report.problems += problems_in_events(browser.events, origin)
    report.problems += [f"image not loaded: {src}" for src in seen["missingImages"]]
    report.problems += [f"formula not rendered: {tex!r}" for tex in seen["unrendered"]]
    report.problems += [f"raw TeX in the text: {tex!r}" for tex in seen["tex"]]
    report.problems += [f"signature runs past the edge: {sig!r}" for sig in seen["overflowing"]]
    return report


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@contextlib.contextmanager
def serve(folder: pathlib.Path) -> Iterator[str]:
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def dead_links(reports: dict[str, PageReport], site: pathlib.Path, origin: str) -> list[str]:
    """Internal links whose file is not in the site or whose anchor is not on its page."""
    dead = []
    for page, report in reports.items():
        for link in report.links:
            if not link.startswith(origin):
                continue
            parsed = urllib.parse.urlsplit(link)
            path = urllib.parse.unquote(parsed.path).lstrip("/")
            target = site / path
            if target.is_dir():
                target, path = target / "index.html", path + "index.html"
            if not target.is_file():
                dead.append(f"{page}: link to a missing file: {link}")
            elif parsed.fragment and target.suffix == ".html":
                fragment = urllib.parse.unquote(parsed.fragment)
                if path in reports and fragment not in reports[path].ids:
                    dead.append(f"{page}: link to a missing anchor: {link}")
    return dead


@pytest.fixture(scope="module")
def browser_executable() -> str:
    executable = find_browser()
    if executable is None:
        pytest.skip(
            "no Chromium installed (apt-get install chromium; .ci/browser-deps does it in CI)"
        )
    return executable


@pytest.fixture(scope="module")
def site_in_browser(browser_executable, tmp_path_factory):
    """Every page of the built site, loaded in Chromium: {page path: PageReport}."""
    site = tmp_path_factory.mktemp("site")
    build_site(site)
    pages = sorted(
        path.relative_to(site).as_posix()
        for path in site.rglob("*.html")
        if path.relative_to(site).as_posix() not in NOT_PAGES
    )
    reports: dict[str, PageReport] = {}
    with tempfile.TemporaryDirectory() as profile, serve(site) as origin:
        browser = Browser(browser_executable, pathlib.Path(profile))
        try:
            target = browser.send("Target.createTarget", url="about:blank")["targetId"]
            session = browser.send("Target.attachToTarget", targetId=target, flatten=True)[
                "sessionId"
            ]
            for domain in ("Page", "Runtime", "Log", "Network"):
                browser.send(f"{domain}.enable", session)
            for page in pages:
                reports[page] = load_page(browser, session, origin + page, origin)
        finally:
            browser.close()
    return site, origin, reports


def test_every_page_loads_without_errors_and_renders_its_formulas(site_in_browser):
    _, _, reports = site_in_browser
    assert len(reports) > 40  # the pages were found: guide, API, results, notebooks
    problems = [f"{page}: {problem}" for page, r in reports.items() for problem in r.problems]
    assert not problems, "\n".join(problems[:100])


def test_internal_links_and_anchors_lead_somewhere(site_in_browser):
    site, origin, reports = site_in_browser
    dead = dead_links(reports, site, origin)
    assert not dead, "\n".join(dead[:100])


def test_formulas_are_rendered_by_katex(site_in_browser):
    """The algorithms page has formulas, and they went through KaTeX (the checks above see
    pages with formulas, not pages without)."""
    site, _, reports = site_in_browser
    assert "algorithms/index.html" in reports
    html = (site / "algorithms" / "index.html").read_text("utf-8")
    assert html.count('class="arithmatex"') > 50
    for page in ("algorithms/index.html", "guide/weights/index.html", "notebooks/index.html"):
        assert page in reports, page


def test_the_checks_catch_a_dead_link_and_an_error():
    """The link and event checks find what they look for (on made-up pages and events)."""
    origin = "http://127.0.0.1:1/"
    with tempfile.TemporaryDirectory() as folder:
        site = pathlib.Path(folder)
        (site / "a").mkdir()
        (site / "a" / "index.html").write_text("<p id='here'></p>")
        reports = {
            "a/index.html": PageReport(
                origin + "a/index.html",
                ids={"here"},
                links=[origin + "a/#here", origin + "a/#gone", origin + "b/", "https://x.org/"],
            )
        }
        dead = dead_links(reports, site, origin)
    assert dead == [
        f"a/index.html: link to a missing anchor: {origin}a/#gone",
        f"a/index.html: link to a missing file: {origin}b/",
    ]
    console = "Runtime.consoleAPICalled"
    events = [
        {"method": console, "params": {"type": "error", "args": [{"value": "x"}]}},
        {"method": console, "params": {"type": "log", "args": [{"value": "y"}]}},
        {"method": "Network.requestWillBeSent", "params": {"request": {"url": "https://cdn/x"}}},
        {"method": "Network.requestWillBeSent", "params": {"request": {"url": origin + "x"}}},
    ]
    assert problems_in_events(events, origin) == [
        "console.error: x",
        "request to the network: https://cdn/x",
    ]

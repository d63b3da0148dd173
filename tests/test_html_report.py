"""`--html PATH`: the page from a real run against a server with known bugs and hostile stderr, read as
text and rendered by headless Chromium; the timeline's bounds and charts on synthetic event streams.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mcpfuzz.engine.config import RunConfig
from mcpfuzz.engine.events import (
    CheckpointSaved,
    Finding,
    FindingFound,
    ResourcesSampled,
    RunFinished,
    RunStarted,
    SliceDone,
    Stats,
)
from mcpfuzz.oracles.base import Severity
from mcpfuzz.oracles.memory import KIB, MIB
from mcpfuzz.report.files import ReportFiles, ReportPaths
from mcpfuzz.report.html_report import html_page
from mcpfuzz.report.json_report import report_json
from mcpfuzz.report.run_timeline import MAX_POINTS, MAX_PROCESSES, RunTimeline, Series
from tests.conftest import MCP_SERVER, run_cli

# The server prints markup on stderr, then crashes on a batch: its stderr tail lands in a finding's message.
HOSTILE_TEXT = '<script>console.error("pwned")</script></pre><img src=x onerror="alert(1)">'
BUGS = ["--bug", "crash-batch", "--bug", "silent-parse", "--bug", "method-not-found-code", "--bug", "id-coerce"]
RUN = ["run", "--timeout", "2", "--budget", "30", "--seed", "7", "--phases", "catalogue,coverage"]
WINDOW = (1200, 2000)
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Elements a browser fetches for, or that run code; attributes that load or run something.
FETCHING_TAGS = {"script", "link", "img", "iframe", "object", "embed", "audio", "video", "source", "image", "use",
                 "base", "meta", "form"}
FETCHING_ATTRIBUTES = {"src", "srcset", "href", "xlink:href", "action", "formaction", "poster", "background"}


class Resources(HTMLParser):
    """What a parsed page would fetch or run: tags, attributes (an `<a href>` is a link a reader clicks), styles."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.fetching: list[str] = []
        self.links: list[str] = []
        self.styles: list[str] = []
        self._in_style = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_style = tag == "style"
        if tag in FETCHING_TAGS and not (tag == "meta" and {name for name, _ in attrs} <= {"charset", "name",
                                                                                         "content"}):
            self.fetching.append(tag)
        for name, value in attrs:
            if name == "href" and tag == "a":
                self.links.append(value or "")
            elif name in FETCHING_ATTRIBUTES or name.startswith("on") or name == "style" and "url(" in (value or ""):
                self.fetching.append(f"{tag} {name}")

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)


@dataclass
class Page:
    """The page of one CLI run, with the JSON report written from the same data."""

    path: Path
    text: str
    report: dict
    console: str


@pytest.fixture(scope="module")
def bug_page(tmp_path_factory: pytest.TempPathFactory) -> Page:
    folder = tmp_path_factory.mktemp("html")
    script = f"echo '{HOSTILE_TEXT}' >&2; exec {sys.executable} {MCP_SERVER} {' '.join(BUGS)}"
    result = run_cli([*RUN, "--html", "out/report.html", "--json", "report.json", "--", "sh", "-c", script],
                     cwd=folder, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    path = folder / "out" / "report.html"
    return Page(path, path.read_text(encoding="utf-8"), json.loads((folder / "report.json").read_text()),
                result.stdout + result.stderr)


def test_the_page_holds_every_finding_with_its_reproduction(bug_page: Page) -> None:
    report, text = bug_page.report, bug_page.text
    assert {f["oracle"] for f in report["findings"]} >= {"no-crash", "parse-error", "method-not-found",
                                                         "id-preserved"}
    for finding in report["findings"]:
        assert html.escape(finding["message"]) in text, finding["oracle"]
        assert f"<code>{html.escape(finding['fingerprint'])}</code>" in text
        assert html.escape(finding["reproducer"]["shell"]) in text
        assert f"mcpfuzz replay {html.escape(finding['corpus_path'])}" in text
        for target in finding["also_on"]:
            assert f"<code>{html.escape(target)}</code>" in text
    # The header: server, protocol, seed, and the counts by severity the JSON report has.
    assert html.escape(report["server"]) in text and report["protocolVersion"] in text
    assert "<code>7</code>" in text and '<span class="verdict failed">failed</span>' in text
    for severity in ("critical", "high", "medium", "low"):
        count = sum(1 for f in report["findings"] if f["severity"] == severity)
        assert re.search(rf'class="badge sev-{severity}[^"]*">{count} {severity}<', text), severity
    assert f"HTML report: {Path('out') / 'report.html'}" in bug_page.console


def test_server_text_is_escaped_and_nothing_is_fetched(bug_page: Page) -> None:
    crash = next(f for f in bug_page.report["findings"] if f["oracle"] == "no-crash")
    assert HOSTILE_TEXT in crash["message"], crash["message"]  # the hostile text did reach the page's data
    assert HOSTILE_TEXT not in bug_page.text and html.escape(HOSTILE_TEXT) in bug_page.text
    found = Resources(bug_page.text)
    assert found.fetching == [] and found.links == []  # links only go to an SDK's upstream issue: none here
    assert found.styles and not any("@import" in style or "url(" in style for style in found.styles)
    assert re.findall(r"https?://", bug_page.text) == []


def test_the_page_charts_the_run_and_counts_per_target(bug_page: Page) -> None:
    text, report = bug_page.text, bug_page.report
    assert 'aria-label="Findings when first seen"' in text and 'aria-label="Cases per second"' in text
    # mcpfuzz started the server, so it sampled its memory.
    assert 'aria-label="Server memory (RSS of its process tree)"' in text
    assert "Not a soak, or no slice finished" in text  # an empty series is said, not drawn
    rows = dict(re.findall(r"<tr><td><code>([^<]+)</code></td><td>([\d,]+)</td>", text))
    assert {"tool/echo", "tool/add", "catalogue cases"} <= set(rows)
    assert sum(int(n.replace(",", "")) for n in rows.values()) == report["stats"]["cases"]


def test_an_unwritable_html_path_is_exit_status_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = run_cli(["run", "--timeout", "2", "--budget", "20", "--phases", "catalogue", "--html",
                      str(blocker / "r.html"), "--", sys.executable, str(MCP_SERVER)], cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"cannot write the HTML report to {blocker / 'r.html'}" in result.stderr
    assert "HTML report:" not in result.stdout


# -- headless Chromium ----------------------------------------------------------------------------


def chromium() -> str | None:
    """The first Chromium-like browser on PATH."""
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


def browse(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium on a local file, never reaching out (no proxy, no background services), console logged."""
    binary = chromium()
    assert binary is not None
    return subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-proxy-server",
                           "--no-first-run", "--disable-background-networking", "--disable-component-update",
                           "--disable-sync", "--disable-extensions", "--hide-scrollbars", f"--user-data-dir={profile}",
                           "--enable-logging=stderr", "--v=0", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def console_messages(stderr: str, page: Path) -> list[str]:
    """The page's console lines in Chromium's log (`INFO:CONSOLE:1] "Uncaught Error: ...", source: file:...`)."""
    return [line for line in stderr.splitlines()
            if ("CONSOLE" in line or "Uncaught" in line) and page.as_uri() in line]


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (the signature checked first)."""
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", data
    width, height = struct.unpack(">II", data[16:24])
    return width, height


needs_chromium = pytest.mark.skipif(chromium() is None, reason="no Chromium binary (chromium, chromium-browser, "
                                    "google-chrome) on PATH; .ci/run installs the distribution's package")


@needs_chromium
def test_chromium_renders_the_page_with_the_findings_and_no_console_error(bug_page: Page, tmp_path: Path) -> None:
    shot = tmp_path / "page.png"
    taken = browse(bug_page.path, tmp_path / "profile", f"--screenshot={shot}",
                   f"--window-size={WINDOW[0]},{WINDOW[1]}")
    assert shot.is_file(), taken.stderr[-3000:]
    assert png_size(shot) == WINDOW
    assert shot.stat().st_size > 20_000  # a drawn page, not a blank one (a white 1200x2000 PNG is ~10 KB)
    dumped = browse(bug_page.path, tmp_path / "profile", "--dump-dom")
    dom = dumped.stdout
    assert '<span class="verdict failed">failed</span>' in dom
    for finding in bug_page.report["findings"]:
        first_line = finding["message"].splitlines()[0]
        assert html.escape(first_line, quote=False) in dom, finding["oracle"]
    # The hostile stderr is text in the DOM: no element was made of it, no script ran.
    assert "&lt;script&gt;console.error(" in dom and "<script" not in dom and "<img" not in dom
    assert console_messages(taken.stderr + dumped.stderr, bug_page.path) == []


@needs_chromium
def test_the_console_check_sees_a_script_error(tmp_path: Path) -> None:
    """The check above can fail: a page whose script throws shows in Chromium's log."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><p>x</p><script>throw new Error('boom')</script></body></html>")
    dumped = browse(page, tmp_path / "profile", "--dump-dom")
    assert any("Uncaught Error: boom" in line for line in console_messages(dumped.stderr, page)), dumped.stderr


# -- the timeline, on synthetic streams -----------------------------------------------------------


CONFIG = RunConfig(command=["python", "server.py"], seed=5, oracles=("memory-growth",))
START = 1_700_000_000.0


def leak_events(pid: int = 4242, samples: int = 120, per_request: float = 100 * KIB) -> list:
    """A run whose server gains `per_request` bytes per request, sampled every second (50 requests apart)."""
    events: list = [RunStarted("python server.py", 5, ("memory-growth",), 60.0, 5.0, timestamp=START)]
    for i in range(samples):
        events.append(ResourcesSampled(pid, i * 50, int(40 * MIB + per_request * i * 50) // 4096 * 4096, 12,
                                       timestamp=START + i))
    return events


def finished_with(*findings: Finding) -> RunFinished:
    return RunFinished(Stats(cases=10, duration=120.0), findings, "2025-11-25", "legacy")


def test_the_memory_chart_draws_the_fitted_slope_of_a_leak() -> None:
    timeline = RunTimeline()
    for event in leak_events():
        timeline.handle(event)
    page = html_page(report_json(CONFIG, finished_with()), timeline)
    assert 'aria-label="Server memory against requests sent (pid 4242)"' in page
    assert "fitted slope: 100.0 KB per request over 4,750 requests after warm-up (a leak by the oracle" in page
    assert page.count('stroke-dasharray="6 4"') == 1  # the fit, dashed, over the samples' line
    fitted = re.search(r'<polyline points="([^"]+)"[^>]*stroke-dasharray', page)
    assert fitted is not None
    ends = [tuple(map(float, point.split(","))) for point in fitted.group(1).split()]
    heights = [b[1] - a[1] for a, b in zip(ends, ends[1:], strict=False)]
    assert max(heights) - min(heights) < 0.2  # a straight line: RSS against requests, as the oracle fits it
    flat = RunTimeline()
    for event in leak_events(per_request=0):
        flat.handle(event)
    assert "fitted slope: 0.0 KB per request over 4,750 requests after warm-up (not a leak by" in html_page(
        report_json(CONFIG, finished_with()), flat)


def test_every_series_stays_bounded_over_a_long_soak() -> None:
    series = Series()
    for i in range(100_000):
        series.add(float(i), float(i))
    points = series.all()
    assert len(points) <= MAX_POINTS + 1 and points[0] == (0.0, 0.0) and points[-1] == (99_999.0, 99_999.0)
    gaps = {b[0] - a[0] for a, b in zip(points[:-2], points[1:-1], strict=True)}
    assert len(gaps) == 1  # evenly thinned
    timeline = RunTimeline()
    timeline.handle(RunStarted("s", 1, (), 1.0, 1.0, timestamp=START))
    for i in range(50_000):  # a day of slices and samples of a server restarted after each crash
        timeline.handle(SliceDone(f"tool/t{i % 40}", 1.0, 100, i % 3, 0, timestamp=START + i))
        timeline.handle(ResourcesSampled(i // 100, i, 50 * MIB, timestamp=START + i))
    assert len(timeline.memory) == MAX_PROCESSES and 499 in timeline.memory  # the newest process is kept
    assert len(timeline.behaviours.points) <= MAX_POINTS and len(timeline.cases.counts) <= MAX_POINTS
    assert timeline.new_behaviours == sum(i % 3 for i in range(50_000))
    page = html_page(report_json(CONFIG, finished_with()), timeline)
    assert 'aria-label="New behaviours (soak)"' in page and "slices: a line that flattens" in page
    assert len(page) < 2_000_000


def test_empty_series_are_said_in_words() -> None:
    page = html_page(report_json(CONFIG, finished_with()), RunTimeline())
    assert "No finding was seen during the run." in page and "The server's memory was not sampled" in page
    assert "No case was run." in page and "<svg" not in page


def test_a_checkpoint_rewrites_the_page_and_findings_keep_their_marks(tmp_path: Path) -> None:
    """A soak's checkpoint writes the page so far; an SDK finding links upstream, a baselined one is marked."""
    from mcpfuzz.engine.events import Upstream

    finding = Finding("parse-error", Severity.LOW, "t", "no answer to <bad json>\x00\x1b[31m\ud800", "frames/json", "c",
                      "e",
                      (b"{",), (), "k", upstream=Upstream("the TypeScript SDK 1.0", "drops it",
                                                          "https://github.com/o/r/issues/1"), baselined=True)
    path = tmp_path / "soak.html"
    files = ReportFiles(CONFIG, ReportPaths(html=str(path)))
    files.handle(RunStarted("python server.py", 5, (), 60.0, 5.0, timestamp=START))
    files.handle(FindingFound(finding, timestamp=START + 3))
    files.handle(CheckpointSaved("cp.json", finished_with(finding), timestamp=START + 60))
    text = path.read_text(encoding="utf-8")
    assert "From the SDK the server is built on (1)" in text and "accepted in the baseline" in text
    found = Resources(text)
    assert set(found.links) == {"https://github.com/o/r/issues/1"} and found.fetching == []
    # NUL, ESC and a lone surrogate (which no UTF-8 file can hold) are spelled out.
    assert "no answer to &lt;bad json&gt;\\u0000\\u001b[31m\\ud800" in text and "first seen at 3s" in text
    assert files.problem == ""


def test_workers_slices_give_the_rate_and_behaviours_but_no_outcomes() -> None:
    """With --workers only slices arrive (no CaseDone), two workers' slightly out of time order."""
    timeline = RunTimeline()
    timeline.handle(RunStarted("s", 1, (), 60.0, 1.0, timestamp=START))
    for at, target in ((10.5, "tool/a"), (10.0, "tool/b"), (20.5, "tool/a"), (20.0, "tool/b")):
        timeline.handle(SliceDone(target, 10.0, 1000, 2, 0, timestamp=START + at))
    totals = timeline.behaviours.all()
    assert [total for _, total in totals] == [2, 4, 6, 8]
    assert all(a[0] <= b[0] for a, b in zip(totals, totals[1:], strict=False))  # never back in time
    assert sum(timeline.cases.counts) == pytest.approx(4000)
    assert [round(rate) for _, rate in timeline.cases.rates()[1:9]] == [200] * 8  # two workers, 100 cases/s each
    page = html_page(report_json(CONFIG, finished_with()), timeline)
    row = re.search(r"<tr><td><code>tool/a</code></td>(.*?)</tr>", page)
    assert row is not None
    assert re.findall(r"<td>([^<]*)</td>", row.group(1)) == ["2,000", "–", "–", "–", "–", "–", "2", "4", "0", ""]
    assert "Told by the workers' slices" in page

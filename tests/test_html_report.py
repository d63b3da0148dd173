"""`--html PATH`: the page from a real run against a server with known bugs and hostile stderr, read as
text and rendered by headless Chromium (triage table, folded cards, then charts with the phases marked and
one memory line per server); the timeline's bounds and charts on synthetic event streams.
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
    PhaseName,
    PhaseStarted,
    ResourcesSampled,
    RunFinished,
    RunStarted,
    SliceDone,
    Stats,
)
from mcpfuzz.oracles.base import Severity
from mcpfuzz.oracles.memory import KIB, MIB
from mcpfuzz.report.files import ReportFiles, ReportPaths
from mcpfuzz.report.html_report import html_page, phase_bands
from mcpfuzz.report.json_report import report_json
from mcpfuzz.report.run_timeline import MAX_POINTS, MAX_PROCESSES, RunTimeline, Series
from mcpfuzz.report.svg_charts import Band
from tests.conftest import MCP_SERVER, run_cli

pytestmark = pytest.mark.slow

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
    # Links go to the cards in the page, or to an SDK's upstream issue (none here).
    assert found.fetching == [] and found.links and all(re.fullmatch(r"#finding-\d+", link) for link in found.links)
    assert found.styles and not any("@import" in style or "url(" in style for style in found.styles)
    assert re.findall(r"https?://", bug_page.text) == []


def test_the_page_charts_the_run_and_counts_per_target(bug_page: Page) -> None:
    text, report = bug_page.text, bug_page.report
    assert 'aria-label="Findings when first seen"' in text and 'aria-label="Cases per second"' in text
    # mcpfuzz started the server, so it sampled its memory.
    assert 'aria-label="Server memory (RSS of its process tree)"' in text
    assert "New behaviours" not in text  # a plain run has no soak chart
    # Triage first (also where no browser is at hand): causes, the cards folded, then the charts.
    assert text.index('<table class="causes">') < text.index("<details") < text.index("<svg")
    assert re.search(r"<details[^>]*\sopen", text) is None
    # The plan says when each phase that ran began, in the order they ran, within the run.
    ran = [phase for phase in report["stats"]["plan"]["phases"] if phase["ran"]]
    starts = [phase["started_s"] for phase in ran]
    assert starts == sorted(starts) and starts[0] >= 0 and starts[-1] <= report["stats"]["duration_s"]
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
def test_chromium_shows_the_triage_table_then_folded_cards_then_charts_with_phases(bug_page: Page,
                                                                                  tmp_path: Path) -> None:
    dumped = browse(bug_page.path, tmp_path / "profile", "--dump-dom")
    dom = dumped.stdout
    assert dom.index('<table class="causes">') < dom.index('<details class="finding') < dom.index("<svg")
    # One row per root cause, linked to its card; every card folded.
    cards = re.findall(r'<details class="finding[^"]*"([^>]*)>', dom)
    assert len(cards) == len(bug_page.report["findings"]) and not any("open" in attrs for attrs in cards)
    numbers = re.findall(r'<td><a href="#finding-(\d+)">#\1</a></td>', dom)
    assert numbers == [str(n) for n in range(1, len(cards) + 1)]
    assert all(f'id="finding-{number}"' in dom for number in numbers)
    # Each time chart shades the phases that took a visible share of the run, named as the JSON report's plan
    # names them (a phase of a few milliseconds is left out: it would be a sliver).
    stats = bug_page.report["stats"]
    ran = {p["name"]: p["seconds"] for p in stats["plan"]["phases"] if p["ran"]}
    assert ran["catalogue"] > 0 and ran["coverage"] > 0
    charts = dict(re.findall(r'<svg[^>]*aria-label="([^"]+)"[^>]*>(.*?)</svg>', dom, re.S))
    timed = {label: body for label, body in charts.items() if "time since the run started" in body}
    assert set(timed) == {"Findings when first seen", "Server memory (RSS of its process tree)", "Cases per second"}
    for label, body in timed.items():
        shaded = set(re.findall(r'<rect class="phase phase-\d" data-phase="([^"]+)"', body))
        assert {"catalogue", "coverage"} <= shaded <= {name for name, seconds in ran.items() if seconds > 0}, label
        assert {name for name, seconds in ran.items() if seconds >= 0.02 * stats["duration_s"]} <= shaded, label
    # One memory line for the one server, however often it was restarted (a crash a batch away).
    assert bug_page.report["stats"]["restarts"] > 0
    memory = charts["Server memory (RSS of its process tree)"]
    assert memory.count("<polyline") == 1
    # The restarts the samples saw are ticked on the memory and the rate charts alike.
    assert charts["Cases per second"].count('class="moment"') == memory.count('class="moment"')
    assert console_messages(dumped.stderr, bug_page.path) == []


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
    # The server's own line keeps all its lives, thinned, and every restart.
    assert len(timeline.servers) == 1 and len(timeline.servers[0].points) <= MAX_POINTS
    assert len(timeline.restarts[0]) == 499
    assert len(timeline.behaviours.points) <= MAX_POINTS and len(timeline.cases.counts) <= MAX_POINTS
    assert timeline.new_behaviours == sum(i % 3 for i in range(50_000))
    page = html_page(report_json(CONFIG, finished_with()), timeline)
    assert 'aria-label="New behaviours (soak)"' in page and "slices: a line that flattens" in page
    assert len(page) < 2_000_000 and memory_chart(page).count("<polyline") == 1


def test_a_section_with_nothing_to_show_is_left_out() -> None:
    page = html_page(report_json(CONFIG, finished_with()), RunTimeline())
    assert "<svg" not in page and "<h2>" in page
    headings = [h.strip() for h in re.findall(r"<h2>([^<(]+)", page)]
    assert headings == ["The run", "Run it again"], headings  # no causes, findings, charts or targets
    timeline = RunTimeline()
    for event in leak_events(per_request=0)[:3]:
        timeline.handle(event)
    page = html_page(report_json(CONFIG, finished_with()), timeline)
    assert re.findall(r'aria-label="([^"]+)"', page) == ["Server memory (RSS of its process tree)"]


def samples(pid: int, seconds: range, server: int = 0) -> list[ResourcesSampled]:
    return [ResourcesSampled(pid, at * 10, (30 + pid % 7) * MIB, server=server, timestamp=START + at) for at in seconds]


def memory_chart(page: str) -> str:
    found = re.search(r'aria-label="Server memory \(RSS of its process tree\)".*?</svg>', page, re.S)
    assert found is not None
    return found.group()


def test_a_restarted_server_is_one_memory_line_with_its_restarts_ticked() -> None:
    timeline = RunTimeline()
    timeline.handle(RunStarted("s", 1, (), 60.0, 1.0, timestamp=START))
    for event in [*samples(100, range(0, 10)), *samples(101, range(10, 20)), *samples(102, range(20, 30))]:
        timeline.handle(event)
    chart = memory_chart(html_page(report_json(CONFIG, finished_with()), timeline))
    assert chart.count("<polyline") == 1 and chart.count('class="moment"') == 2
    assert "a new server process from 10s" in chart and "a new server process from 20s" in chart
    assert len(timeline.rss_by_server()[0]) == 30 and len(timeline.rss_by_process()) == 3


def test_each_workers_server_has_its_own_memory_line() -> None:
    timeline = RunTimeline()
    timeline.handle(RunStarted("s", 1, (), 60.0, 1.0, timestamp=START))
    for at in range(20):  # two workers' servers sampled side by side; worker 1's restarts at 10 s
        timeline.handle(samples(100, range(at, at + 1), server=0)[0])
        timeline.handle(samples(200 if at < 10 else 201, range(at, at + 1), server=1)[0])
    page = html_page(report_json(CONFIG, finished_with()), timeline)
    chart = memory_chart(page)
    assert chart.count("<polyline") == 2 and chart.count('class="moment"') == 1
    assert "worker 1: a new server process from 10s" in chart
    assert "worker 0&#x27;s server" in page and "worker 1&#x27;s server" in page


def test_the_workers_relay_tells_whose_server_a_memory_sample_is() -> None:
    from mcpfuzz.engine.workers import _Merger, _Message

    relayed: list = []
    merger = _Merger(2, relayed.append, [])
    merger.take(_Message(1, ResourcesSampled(200, 5, 30 * MIB, timestamp=START + 1)))  # waits for RunStarted
    merger.take(_Message(0, RunStarted("s", 1, (), 60.0, 1.0, timestamp=START)))
    merger.take(_Message(0, ResourcesSampled(100, 5, 30 * MIB, timestamp=START + 2)))
    assert [(e.pid, e.server) for e in relayed if isinstance(e, ResourcesSampled)] == [(200, 1), (100, 0)]


def test_phases_are_marked_from_the_plan_or_else_from_their_start_events() -> None:
    timeline = RunTimeline()
    timeline.handle(RunStarted("s", 1, (), 60.0, 1.0, timestamp=START))
    timeline.handle(PhaseStarted(PhaseName.CATALOGUE, 10, timestamp=START + 1))
    timeline.handle(PhaseStarted(PhaseName.FUZZ, None, timestamp=START + 20))
    timeline.handle(SliceDone("tool/a", 10.0, 100, 1, 0, timestamp=START + 40))
    report = report_json(CONFIG, finished_with())
    assert phase_bands(report, timeline, 40.0) == [Band("catalogue", 1.0, 20.0), Band("fuzz", 20.0, 40.0)]
    report["stats"]["plan"] = {"phases": [
        {"name": "probe", "ran": True, "started_s": 0.0, "seconds": 0.5, "share": 0.0},
        {"name": "plan", "ran": True, "started_s": 0.5, "seconds": 0.01, "share": 0.0},  # a sliver: not drawn
        {"name": "lifecycle", "ran": False, "skipped": "not in --phases", "seconds": 0.0, "share": 0.0},
        {"name": "catalogue", "ran": True, "started_s": 0.5, "seconds": 9.5, "share": 0.0},
        {"name": "verify", "ran": True, "started_s": 10.0, "seconds": 2.0, "share": 0.0},
        {"name": "fuzz", "ran": True, "started_s": 12.0, "seconds": 40.0, "share": 0.0}]}
    bands = phase_bands(report, timeline, 40.0)
    assert bands == [Band("probe", 0.0, 0.5), Band("catalogue", 0.5, 10.0), Band("verify", 10.0, 12.0),
                     Band("fuzz", 12.0, 40.0)]  # cut at the end of the charts' axis
    page = html_page(report, timeline)
    assert "<strong>verify</strong> 10.0s–12.0s" in page
    for label in ("Cases per second", "New behaviours (soak)"):
        chart = re.search(rf'aria-label="{re.escape(label)}".*?</svg>', page, re.S)
        assert chart is not None
        assert re.findall(r'data-phase="([^"]+)"', chart.group()) == ["probe", "catalogue", "verify", "fuzz"]


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
    assert set(found.links) == {"#finding-1", "https://github.com/o/r/issues/1"} and found.fetching == []
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

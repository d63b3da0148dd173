"""`--html PATH`: one self-contained page (inline CSS and SVG, no script, no URL to fetch) a person reads.

Triage first: the verdict, then one row per root cause (each linking to its card), the cards folded, the run's
facts, then the charts (the run's phases shaded on each time axis), the targets and how to run it again. A
section with nothing to show is left out. Built from the JSON report's data (so it holds what the JSON report
holds, redacted the same way) and from the `RunTimeline` gathered from the events (the charts). Every text from
the server is escaped: a hostile error message shows as text, never as markup.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from statistics import median

from mcpfuzz.oracles.base import Severity
from mcpfuzz.oracles.memory import KIB, MIB, measure_growth
from mcpfuzz.report.coverage_summary import coverage_html
from mcpfuzz.report.json_report import entry_fails, write_atomic
from mcpfuzz.report.run_timeline import RunTimeline
from mcpfuzz.report.svg_charts import Band, Line, Mark, Moment, clock, count_axis, instant, lane_chart, line_chart
from mcpfuzz.report.triage import causes_of_report

SEVERITIES = ("critical", "high", "medium", "low")
SEVERITY_COLOURS = {"critical": "#7b1fa2", "high": "#c62828", "medium": "#ef6c00", "low": "#1565c0"}
PALETTE = ("#1565c0", "#2e7d32", "#6a1b9a", "#00838f", "#ad1457", "#4e342e")
MAX_TEXT = 20_000  # characters of one message, frame or answer shown; the JSON report has all of it
MIN_PHASE_SHARE = 0.01  # of the time axis: a shorter phase would be a sliver too thin to see or name
MAX_OCCURRENCES_SHOWN = 20  # of a finding's occurrences (the lines of one statement) in the page
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")


def planned_said(planned: int) -> str:
    """mcpfuzz's own planned restarts after the server's, when there were any."""
    return f" ({planned:,} planned)" if planned else ""


def visible(value: object) -> str:
    """Text with control characters and lone surrogates spelled out (`\\x1b`), cut to MAX_TEXT, escaped."""
    text = _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(value))
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"… ({len(text) - MAX_TEXT:,} more characters in the JSON report)"
    return escape(text, quote=True)


@dataclass(frozen=True)
class RssPoint:
    """One memory sample as `measure_growth` reads it."""

    t: float
    requests: int
    rss: int


# A shared store keeps the machines' findings and totals, not their events: nothing to chart or count per target.
MERGED_NOTE = ("<section><h2>Over time, per target</h2><p class=\"empty\">A merged report of a shared store: it "
               "keeps each machine's findings and totals, not the events the charts and the per-target table are "
               "drawn from. Each machine's own <code>--html</code> has them.</p></section>")


def html_page(report: dict, timeline: RunTimeline | None) -> str:
    """The whole page; with no timeline (no events fed it: a shared store's merged report), no charts or targets."""
    title = f"mcpfuzz report: {report['server']}"
    if timeline is None:
        body = [_verdict(report), _causes(report), _findings(report), _facts(report, RunTimeline()), MERGED_NOTE,
                _rerun(report)]
    else:
        body = [_verdict(report), _causes(report), _findings(report), _facts(report, timeline),
                _charts(report, timeline), _targets(report, timeline), _rerun(report)]
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{visible(title)}</title><style>{CSS}</style></head>"
            f"<body><main>{''.join(body)}</main></body></html>\n")


def write_html(path: Path, report: dict, timeline: RunTimeline | None) -> None:
    """Write the page atomically (a soak rewrites it at each checkpoint; a reader never sees half of it)."""
    write_atomic(path, html_page(report, timeline))


# -- header --------------------------------------------------------------------------------------


def verdict(report: dict) -> str:
    """`failed`, `error`, `incomplete` or `passed`, as the exit status and the Markdown summary say it."""
    failing = any(entry_fails(f, report["failOn"]) for f in report["findings"])
    if failing or report.get("staleBaseline"):
        return "failed"
    if report["error"]:
        return "error"
    return "incomplete" if report["stopped"] else "passed"


def _verdict(report: dict) -> str:
    """The title with the verdict, and the findings counted by severity."""
    counts = Counter(f["severity"] for f in report["findings"])
    outcome = verdict(report)
    badges = "".join(f'<span class="badge sev-{name}{"" if counts.get(name) else " zero"}">{counts.get(name, 0)} '
                     f"{name}</span>" for name in SEVERITIES)
    found = len(report["findings"])
    return (f'<header><h1>mcpfuzz report <span class="verdict {outcome}">{outcome}</span></h1>'
            f'<p class="totals"><strong>{found} finding{"" if found == 1 else "s"}</strong> {badges}</p></header>')


def _facts(report: dict, timeline: RunTimeline) -> str:
    """What was run and how: server, protocol, seed, duration, why it stopped, the work done; an error if any."""
    stats = report["stats"]
    protocol = (f"{visible(report['protocolVersion'])} ({visible(report['era'])} era)" if report["protocolVersion"]
                else "none negotiated")
    facts = [("server", f"<code>{visible(report['server'])}</code>"
                        + (f" (serverInfo: {visible(timeline.server_name)})" if timeline.server_name else "")),
             ("protocol", protocol), ("seed", f"<code>{report['seed']}</code>"),
             ("duration", f"{stats['duration_s']:.1f} s" if stats["duration_s"] < 60 else
              f"{clock(stats['duration_s'])} ({stats['duration_s']:,.0f} s)"),
             ("stopped", visible(report["stopped"]) if report["stopped"] else
              "no: the run did all its work" if not report["error"] else "the server could not be tested"),
             ("work", f"{stats['cases']:,} cases · {stats['tool_calls']:,} tool calls · "
                      f"{stats['frames_sent']:,} frames · {stats['restarts']:,} restarts"
                      f"{planned_said(stats.get('planned_restarts', 0))}"),
             ("fails on", f"{visible(report['failOn'])} and above"), ("mcpfuzz", visible(report["mcpfuzz"]))]
    soak = stats.get("soak")
    if soak:
        facts.append(("soak", f"{soak.get('slices', 0):,} slices · {soak.get('new_behaviours', 0):,} new behaviours"
                              f" · {soak.get('workers', 1)} worker(s) · {soak.get('resumes', 0)} resume(s)"))
    rss = (stats.get("resources") or {}).get("server_rss_mb") or {}
    if rss.get("peak") is not None:
        facts.append(("server RSS", f"{rss['first']} MB first · {rss['last']} MB last · {rss['peak']} MB peak"))
    rows = "".join(f"<tr><th>{name}</th><td>{value}</td></tr>" for name, value in facts)
    parts = [f'<section class="run"><h2>The run</h2><table class="facts">{rows}</table></section>',
             coverage_html(stats.get("coverage"))]
    if report["error"]:
        parts.append(f'<section class="error"><h2>The server could not be tested</h2>'
                     f"<pre>{visible(report['error'])}</pre></section>")
    for entry in report.get("staleBaseline") or ():
        parts.append(f'<p class="error">stale baseline entry: {visible(entry)} no longer reproduces</p>')
    return "".join(parts)


# -- charts --------------------------------------------------------------------------------------


def _charts(report: dict, timeline: RunTimeline) -> str:
    """The charts that have data, after the findings; no section at all when none has."""
    x_high = max(timeline.latest, 1.0)
    bands = phase_bands(report, timeline, x_high)
    figures = [figure for figure in (_finding_marks(timeline, x_high, bands), _memory(report, timeline, x_high, bands),
                                     _rate(timeline, x_high, bands), _behaviours(timeline, x_high, bands)) if figure]
    if not figures:
        return ""
    return f"<section><h2>Over time</h2>{_phase_note(bands, x_high)}{''.join(figures)}</section>"


def phase_bands(report: dict, timeline: RunTimeline, x_high: float) -> list[Band]:
    """The phases that took a visible share of the run, in order: from the JSON report's plan (every phase timed,
    verification included), else from the phases' start events (each until the next one starts)."""
    plan = (report["stats"].get("plan") or {}).get("phases") or ()
    bands = [Band(str(phase["name"]), float(phase["started_s"]), float(phase["started_s"]) + float(phase["seconds"]))
             for phase in plan if phase.get("ran") and "started_s" in phase and phase.get("seconds")]
    if not bands:
        starts = timeline.phases
        ends = [mark.at for mark in starts[1:]] + [timeline.latest] * bool(starts)
        bands = [Band(mark.name, mark.at, end) for mark, end in zip(starts, ends, strict=True)]
    clipped = [Band(band.name, min(band.start, x_high), min(band.end, x_high)) for band in bands]
    shown = (band for band in clipped if band.end - band.start >= MIN_PHASE_SHARE * x_high)
    return sorted(shown, key=lambda band: band.start)


def _phase_note(bands: list[Band], x_high: float) -> str:
    """The phases by name with their start and end, above the charts (a band's name may not fit in it)."""
    if not bands:
        return ""
    spans = " · ".join(f"<span class=\"phase-span\"><strong>{visible(band.name)}</strong> "
                       f"{instant(band.start, x_high)}–{instant(band.end, x_high)}</span>" for band in bands)
    return f'<p class="phase-note">The run\'s phases, shaded in turn on each time axis: {spans}</p>'


def _figure(heading: str, chart: str, caption: str = "") -> str:
    note = f"<figcaption>{caption}</figcaption>" if caption else ""
    return f'<figure><h3>{heading}</h3>{chart}{note}</figure>'


def _finding_marks(timeline: RunTimeline, x_high: float, bands: list[Band]) -> str:
    heading = "Findings when first seen"
    if not timeline.findings:
        return ""
    marks = [Mark(mark.at, mark.severity, f"{mark.severity} · {mark.oracle} · {mark.target} "
                                          f"(first seen at {clock(mark.at)})") for mark in timeline.findings]
    lanes = [(name, SEVERITY_COLOURS[name]) for name in SEVERITIES]
    chart = lane_chart(marks, lanes, title=heading, x_high=x_high, bands=bands)
    return _figure(heading, chart, "One mark per finding, at the time it was first seen (hover for its oracle "
                                   "and target); the table at the top has each root cause once.")


def _memory(report: dict, timeline: RunTimeline, x_high: float, bands: list[Band]) -> str:
    heading = "Server memory (RSS of its process tree)"
    servers = {server: points for server, points in timeline.rss_by_server().items() if points}
    if not servers:
        return ""  # an HTTP server mcpfuzz did not launch is not its to read
    several = len(servers) > 1
    lines = [Line(f"worker {server}'s server" if several else "the server", [(t, rss / MIB) for t, rss in points],
                  PALETTE[index % len(PALETTE)]) for index, (server, points) in enumerate(servers.items())]
    moments = restart_moments(timeline)
    leaks = [f for f in report["findings"] if f["oracle"] == "memory-growth"]
    judged = (f'<strong>memory-growth</strong>: {visible(leaks[0]["message"])}' if leaks
              else "memory-growth found no leak.")
    restarts = (f" {len(moments):,} restart{'' if len(moments) == 1 else 's'} seen between samples, each ticked above "
                "the axis: the line goes on with the new process." if moments else "")
    over_time = _figure(heading, line_chart(lines, title=heading, x_high=x_high, y_label="MB", bands=bands,
                                            moments=moments),
                        f"{judged} One line per server: the RSS summed over the process mcpfuzz started and its "
                        f"children, sampled about once a second.{restarts}")
    processes = {pid: points for pid, points in timeline.rss_by_process().items() if points}
    return over_time + _memory_fit(sorted(processes.items(), key=lambda item: item[1][0][0]))


def _memory_fit(processes: list[tuple[int, list[tuple[float, int, int]]]]) -> str:
    """RSS against requests for the process that most looks like a leak, with the oracle's fitted slope."""
    fits = [(pid, points, growth) for pid, points in processes
            if (growth := measure_growth([RssPoint(*point) for point in points])) is not None]
    if not fits:
        return ""  # too few samples to judge: the oracle said nothing either
    pid, points, growth = max(fits, key=lambda fit: (fit[2].leaking(), fit[2].slope))
    window = [point for point in points if point[1] >= growth.first_requests]
    intercept = median(rss - growth.slope * requests for _, requests, rss in window)
    state = "a leak by the oracle's rules" if growth.leaking() else "not a leak by the oracle's rules"
    fitted = (f"fitted slope: {growth.slope / KIB:,.1f} KB per request over {growth.requests:,} requests "
              f"after warm-up ({state})")
    heading = f"Server memory against requests sent (pid {pid})"
    lines = [Line(f"pid {pid}", [(requests, rss / MIB) for _, requests, rss in points], PALETTE[0]),
             Line(fitted, [(requests, (intercept + growth.slope * requests) / MIB) for _, requests, _ in window],
                  "#333333", dashed=True)]
    chart = line_chart(lines, title=heading, x_high=max(requests for _, requests, _ in points) or 1.0,
                       y_label="MB", x_axis=count_axis("requests sent to this process"))
    return _figure(heading, chart, "What memory-growth judges: RSS against the requests sent, after a warm-up; the "
                                   "dashed line is the Theil-Sen fit (the median of the pairwise slopes), "
                                   "recomputed from the plotted samples.")


def restart_moments(timeline: RunTimeline) -> list[Moment]:
    """Each server's restarts as the memory samples saw them (a new root process since the last sample)."""
    several = len(timeline.servers) > 1
    return [Moment(at, f"{f'worker {server}: ' if several else ''}a new server process from {clock(at)}")
            for server, times in sorted(timeline.restarts.items()) for at in times]


def _rate(timeline: RunTimeline, x_high: float, bands: list[Band]) -> str:
    heading = "Cases per second"
    rates = timeline.cases.rates()
    if not rates:
        return ""
    width = timeline.cases.width
    moments = restart_moments(timeline)
    chart = line_chart([Line(f"cases per second (averaged over {clock(width)})", rates, PALETTE[0])],
                       title=heading, x_high=x_high, y_label="cases/s", bands=bands, moments=moments)
    source = "" if timeline.case_events else " Told by the workers' slices (their cases stay inside them)."
    restarts = " A tick above the axis is a server restart: starting a process costs time." if moments else ""
    return _figure(heading, chart, "Every frame or call mcpfuzz sent and judged, per second: the rate changes with "
                                   f"the phase.{restarts}{source}")


def _behaviours(timeline: RunTimeline, x_high: float, bands: list[Band]) -> str:
    heading = "New behaviours (soak)"
    if not timeline.slices:
        return ""  # not a soak, or no slice finished yet
    points = [(0.0, 0.0), *((t, float(total)) for t, total in timeline.behaviours.all())]
    chart = line_chart([Line("new behaviours so far", points, PALETTE[1])], title=heading, x_high=x_high,
                       y_label="behaviours", bands=bands)
    return _figure(heading, chart, f"{timeline.new_behaviours:,} new behaviours in {timeline.slices:,} slices: a "
                                   "line that flattens means the search has stopped finding new answers.")


# -- findings ------------------------------------------------------------------------------------


def _ordered(report: dict) -> tuple[list[dict], list[dict]]:
    """The findings as the report lists and numbers them: the server's own, then its SDK's, the worst first."""
    findings = sorted(report["findings"], key=lambda f: -Severity.parse(f["severity"]))
    return [f for f in findings if not f.get("upstream")], [f for f in findings if f.get("upstream")]


def _causes(report: dict) -> str:
    """The report's opening: one row per root cause, numbered and linked as its card below."""
    own, inherited = _ordered(report)
    if not own and not inherited:
        return ""
    rows = []
    for cause in causes_of_report([*own, *inherited]):
        fix = visible(cause.fix) + (f" ({_link(cause.link)})" if cause.link else "")
        others = cause.targets - 1
        where = (f"<code>{visible(cause.target)}</code>" + (f" and {others:,} more" if others else "")
                 + (f" ({cause.occurrences:,} occurrences)" if cause.occurrences > cause.targets else ""))
        rows.append(f'<tr><td><a href="#finding-{cause.number}">#{cause.number}</a></td>'
                    f'<td><span class="badge sev-{cause.severity}">{visible(cause.severity)}</span></td>'
                    f"<td><code>{visible(cause.oracle)}</code></td><td>{where}</td><td>{fix}</td>"
                    f'<td><a href="#finding-{cause.number}">{visible(cause.gist)}</a></td></tr>')
    head = "".join(f"<th>{name}</th>" for name in ("#", "severity", "oracle", "target", "fix belongs to", "what"))
    return (f'<section class="triage"><h2>Root causes ({len(rows)})</h2><table class="causes"><thead><tr>{head}'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table></section>")


def _findings(report: dict) -> str:
    """Each root cause's card, folded: its summary line opens to the evidence and the reproduction."""
    own, inherited = _ordered(report)
    if not own and not inherited:
        return ""
    parts = [f"<section><h2>Findings by root cause ({len(own) + len(inherited)})</h2>"]
    number = 0
    for heading, group, note in (
            ("This server's findings", own, ""),
            ("From the SDK the server is built on", inherited,
             "Known behaviours of the SDK: the fix belongs upstream (each has its link); they still count.")):
        if not group:
            continue
        parts.append(f"<h3>{heading} ({len(group)})</h3>" + (f"<p>{note}</p>" if note else ""))
        for finding in group:
            number += 1
            parts.append(_finding(number, finding))
    parts.append("</section>")
    return "".join(parts)


def _finding(number: int, finding: dict) -> str:
    severity = finding["severity"]
    tags = []
    if finding.get("baselined"):
        tags.append('<span class="tag">accepted in the baseline</span>')
    if finding.get("reproducible") is False:
        tags.append('<span class="tag">not reproducible</span>')
    if finding.get("new") is False:
        tags.append('<span class="tag">known (in the corpus before)</span>')
    first_line = (finding["message"] or "").splitlines()[0] if finding["message"] else ""
    summary = (f'<summary><span class="badge sev-{severity}">{visible(severity)}</span> '
               f"<strong>#{number} {visible(finding['oracle'])}</strong> on <code>{visible(finding['target'])}</code>"
               f" {''.join(tags)}<br><span class=\"gist\">{visible(first_line)}</span></summary>")
    rows = [("message", f"<pre>{visible(finding['message'])}</pre>")]
    if finding.get("exception"):
        rows.append(("exception", f"<code>{visible(finding['exception'])}</code>"))
    if finding.get("also_on"):
        rows.append(("also on", ", ".join(f"<code>{visible(t)}</code>" for t in finding["also_on"])))
    if finding.get("also_judged"):
        rows.append(("also judged by", ", ".join(f"<code>{visible(o)}</code>" for o in finding["also_judged"])))
    shapes = [sample for sample in finding.get("samples") or () if sample.get("evidence") != sample.get("target")]
    if shapes:  # a cause showing different things (a writer's lines): each kind once, counted
        left = max(int(finding.get("sample_count") or 0) - len(shapes), 0)
        rows.append((f"samples ({len(shapes) + left:,})", "".join(
            f"<pre>{int(sample.get('count') or 0):,} like {visible(str(sample.get('detail', '')))} "
            f"(first on {visible(str(sample.get('target', '')))})</pre>" for sample in shapes)
            + (f"<p>and {left:,} more kinds (in the JSON report's occurrences)</p>" if left else "")))
    shown = [o for o in finding.get("occurrences") or () if o.get("detail")][:MAX_OCCURRENCES_SHOWN]
    if shown:
        count = max(int(finding.get("occurrence_count") or 0), len(finding["occurrences"]))
        more = f"<p>and {count - len(shown):,} more (all in the JSON report)</p>" if count > len(shown) else ""
        rows.append((f"occurrences ({count:,})", "".join(f"<pre>{visible(o['target'])}: {visible(o['detail'])}</pre>"
                                                         for o in shown) + more))
    upstream = finding.get("upstream")
    if upstream:
        rows.append(("fix belongs to", f"{visible(upstream['sdk'])}: {visible(upstream['behaviour'])} "
                                       f"({_link(upstream['link'])})"))
    rows += [("case", visible(finding["case"])), ("expected", visible(finding["expected"])),
             ("sent", _frames(finding["reproducer"]["frames"])),
             ("came back", _blocks(finding["received"], "nothing"))]
    reproduce = finding["reproducer"]
    if reproduce["shell"]:
        rows.append(("reproduce", f"<pre class=\"command\">{visible(reproduce['shell'])}</pre>"))
    if finding.get("corpus_path"):
        rows.append(("replay", f"<pre class=\"command\">mcpfuzz replay "
                               f"{visible(shlex.quote(finding['corpus_path']))}</pre>"))
    if reproduce["notes"]:
        rows.append(("notes", "<ul>" + "".join(f"<li>{visible(n)}</li>" for n in reproduce["notes"]) + "</ul>"))
    rows.append(("fingerprint", f"<code>{visible(finding['fingerprint'])}</code>"))
    table = "".join(f"<tr><th>{name}</th><td>{value}</td></tr>" for name, value in rows)
    return (f'<details class="finding sev-{severity}" id="finding-{number}">'
            f"{summary}<table>{table}</table></details>")


def _frames(frames: list) -> str:
    """What was sent, frame by frame (a frame that is not UTF-8 as hex)."""
    shown = [frame if isinstance(frame, str) else f"hex: {frame.get('hex', '')}" for frame in frames]
    return _blocks(shown, "no frame (seen over many requests)")


def _blocks(texts: Sequence[str], none: str) -> str:
    if not texts:
        return f'<span class="empty">{none}</span>'
    return "".join(f"<pre>{visible(text)}</pre>" for text in texts)


def _link(url: str) -> str:
    """A link the reader may follow (mcpfuzz's own table of upstream issues); anything not https stays text."""
    if re.fullmatch(r"https://[^\s\"'<>]+", url):
        return f'<a href="{escape(url, quote=True)}" rel="noreferrer">{visible(url)}</a>'
    return visible(url)


# -- targets and re-running ----------------------------------------------------------------------


def _targets(report: dict, timeline: RunTimeline) -> str:
    found: Counter[str] = Counter()
    for finding in report["findings"]:
        found.update({finding["target"], *finding["also_on"]})
    labels = [*timeline.planned, *(key for key in timeline.targets if key not in timeline.planned),
              *(label for label in timeline.skipped if label not in timeline.targets)]
    if not labels:
        return ""  # no case was run
    soak = timeline.slices > 0
    heads = ["target", "cases", "results", "errors", "tool errors", "timed out", "crashes",
             *(("slices", "new behaviours") if soak else ()), "findings", "note"]
    rows = []
    for label in labels:
        counts = timeline.targets.get(label)
        cells = [f"<code>{visible(label)}</code>"]
        told = report["stats"].get("targets", {}).get(label) if not timeline.case_events else None
        if counts is None and isinstance(told, int):
            # `run --workers`: only the workers' summed counters tell a target's cases.
            cells += [f"{told:,}", *["–"] * 5, *(("0", "0") if soak else ())]
        elif counts is None:
            cells += ["0"] * (8 if soak else 6)
        else:
            outcomes = (counts.results, counts.errors, counts.tool_errors, counts.timed_out, counts.crashes)
            # Workers tell their slices, not their cases: what each case got back is not known here.
            cells += [f"{counts.cases:,}", *(f"{n:,}" if timeline.case_events else "–" for n in outcomes)]
            if soak:
                cells += [f"{counts.slices:,}", f"{counts.new_behaviours:,}"]
        # A group of one-off cases has no label of its own: their findings are listed by their case's target.
        cells.append("–" if label.endswith(" cases") and label not in found else str(found.get(label, 0)))
        cells.append(visible(f"skipped: {timeline.skipped[label]}") if label in timeline.skipped else "")
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    head = "".join(f"<th>{name}</th>" for name in heads)
    return (f"<section><h2>Targets ({len(labels)})</h2><p>Cases per call target and frame family (the catalogue's "
            "one-off cases grouped by phase), by what came back: a result, a JSON-RPC error, a result flagged "
            "<code>isError</code>, nothing in time, or a crash.</p>"
            f'<table class="targets"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></section>')


def _rerun(report: dict) -> str:
    again = f"mcpfuzz run --seed {report['seed']} -- {report['server']}"
    return (f"<section><h2>Run it again</h2><p>The same seed draws the same cases:</p>"
            f"<pre class=\"command\">{visible(again)}</pre></section>")


CSS = """
:root{--fg:#1d1d1f;--muted:#5f6368;--line:#d9dce1;--bg:#fff;--soft:#f5f6f8}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:var(--fg);background:var(--bg)}
main{max-width:1120px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 8px}h2{font-size:20px;margin:32px 0 12px;border-bottom:1px solid var(--line);
padding-bottom:4px}h3{font-size:16px;margin:20px 0 8px}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px 10px;margin:4px 0;
white-space:pre-wrap;overflow-wrap:anywhere;max-height:360px;overflow:auto}
pre.command{background:#1f2328;color:#f0f3f6;border-color:#1f2328}
table{border-collapse:collapse}th,td{text-align:left;vertical-align:top;padding:4px 10px 4px 0}
.facts th{color:var(--muted);font-weight:500;white-space:nowrap}
.targets{width:100%;font-size:14px}.targets th,.targets td{border-bottom:1px solid var(--line);padding:4px 8px}
.targets td:not(:first-child):not(:last-child){text-align:right}
.causes{width:100%;font-size:14px}.causes th,.causes td{border-bottom:1px solid var(--line);padding:4px 8px}
.badge{display:inline-block;border-radius:10px;padding:0 9px;margin:0 4px 0 0;color:#fff;font-size:13px}
.sev-critical.badge{background:#7b1fa2}.sev-high.badge{background:#c62828}
.sev-medium.badge{background:#ef6c00}.sev-low.badge{background:#1565c0}.sev-note.badge{background:#757575}
.badge.zero{opacity:.35}
.verdict{font-size:15px;vertical-align:middle;border-radius:4px;padding:2px 10px;color:#fff}
.verdict.passed{background:#2e7d32}.verdict.failed{background:#c62828}.verdict.error{background:#6d4c41}
.verdict.incomplete{background:#ef6c00}
.tag{display:inline-block;border:1px solid var(--line);border-radius:4px;padding:0 6px;font-size:12px;
color:var(--muted);margin-left:4px}
details.finding{border:1px solid var(--line);border-left:5px solid var(--muted);border-radius:6px;
margin:10px 0;padding:8px 12px}
details.finding.sev-critical{border-left-color:#7b1fa2}details.finding.sev-high{border-left-color:#c62828}
details.finding.sev-medium{border-left-color:#ef6c00}details.finding.sev-low{border-left-color:#1565c0}
details.finding table{width:100%;margin-top:8px;table-layout:fixed}
details.finding th{width:120px;color:var(--muted);font-weight:500}
summary{cursor:pointer}.gist{color:var(--muted);overflow-wrap:anywhere}
figure{margin:16px 0 24px}figcaption{color:var(--muted);font-size:14px;margin-top:4px}
.chart{width:100%;height:auto;display:block}
.chart text{font-size:12px;fill:#5f6368}.chart .axis{font-size:13px;fill:#1d1d1f}
.chart .grid{stroke:#eceef1}.chart .lane{stroke:#d9dce1;stroke-dasharray:2 4}.chart .axis-line{stroke:#9aa0a6}
.legend{font-size:13px;color:var(--muted)}.key{margin-right:16px;white-space:nowrap}
.swatch{display:inline-block;width:24px;border-top:3px solid;vertical-align:middle;margin-right:6px}
.swatch.dashed{border-top-style:dashed}
.chart .phase-0{fill:#eef2f8}.chart .phase-1{fill:#f8f9fb}.chart .phase-edge{stroke:#b8c2d0;stroke-dasharray:3 3}
.chart .phase-label{font-size:11px;fill:#44546a}.chart .moment{stroke:#5f6368;stroke-width:1.5}
.phase-note{color:var(--muted);font-size:14px}.phase-span{white-space:nowrap}
.causes a{color:inherit}.causes td:first-child a{font-weight:600}
.empty{color:var(--muted);font-style:italic}
section.error h2,p.error{color:#b71c1c}
"""

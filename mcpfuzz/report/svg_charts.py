"""Plain inline SVG charts for the HTML report: lines over time, marks in lanes. No script, no external resource.

Every text that reaches the SVG is escaped here; callers pass plain strings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 1080, 260
LEFT, RIGHT, TOP, BOTTOM = 72, 16, 14, 40  # room for the axes' labels
PHASE_ROW = 18  # a lane chart's row for the phases' names
LABEL_EM = 7  # pixels per character of a 12 px label, about: a phase's name shows where it fits
Format = Callable[[float], str]


@dataclass(frozen=True)
class Line:
    """One series of a line chart: (x, y) points, a name for the legend, a colour, dashed or not."""

    name: str
    points: Sequence[tuple[float, float]]
    colour: str
    dashed: bool = False


@dataclass(frozen=True)
class Mark:
    """A point in a lane chart: where on the x axis, which lane, what its tooltip says."""

    x: float
    lane: str
    tip: str


@dataclass(frozen=True)
class Band:
    """A stretch of the time axis with a name (a phase of the run), shaded behind a chart's lines."""

    name: str
    start: float
    end: float


@dataclass(frozen=True)
class Moment:
    """An instant on the time axis (a server restart), a tick above the axis with a tooltip."""

    x: float
    tip: str


@dataclass(frozen=True)
class Axis:
    """A horizontal axis: its label, the ticks that cover a highest value, how a tick reads."""

    label: str
    ticks: Callable[[float], list[float]]
    format: Format


@dataclass(frozen=True)
class Scale:
    """A linear map from a domain onto pixels."""

    low: float
    high: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        span = self.high - self.low or 1.0
        return self.start + (value - self.low) / span * (self.end - self.start)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round values (1, 2 or 5 times a power of ten) covering [low, high]."""
    if high <= low:
        high = low + 1.0
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks: list[float] = []
    value = first
    while value <= high + step * 1e-9 and len(ticks) < 50:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 10))
    return ticks


def time_ticks(high: float) -> list[float]:
    """Ticks on a time axis at whole seconds, minutes or hours."""
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400):
        if high / step <= 8:
            break
    return [step * i for i in range(int(high // step) + 2)]


def clock(seconds: float) -> str:
    """`45s`, `2m30s`, `1h05m`."""
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes and secs else f"{minutes}m" if minutes else f"{secs}s"


def instant(seconds: float, high: float) -> str:
    """A time on an axis reaching `high` seconds: tenths under two minutes (`12.5s`), else `clock`."""
    return f"{seconds:.1f}s" if high < 120 else clock(seconds)


def number(value: float) -> str:
    """A tick label without trailing zeros (`0.5`, `12`, `1,500`)."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.2f}".rstrip("0").rstrip(".") or "0"


TIME_AXIS = Axis("time since the run started", time_ticks, clock)


def count_axis(label: str) -> Axis:
    """An axis of counts from 0 (requests sent)."""
    return Axis(label, lambda high: nice_ticks(0.0, high), number)


def line_chart(lines: Sequence[Line], *, title: str, x_high: float, y_label: str, y_format: Format = number,
               x_axis: Axis | None = None, bands: Sequence[Band] = (), moments: Sequence[Moment] = ()) -> str:
    """Lines from x = 0 to `x_high` (seconds, unless another axis is given) and y from 0, with a grid and a legend;
    `bands` shaded behind them and `moments` ticked above the axis (both on a time axis)."""
    axis = x_axis or TIME_AXIS
    values = [y for line in lines for _, y in line.points]
    y_ticks = nice_ticks(min(0.0, *values), max(values) if values else 1.0)
    x_ticks = axis.ticks(x_high)
    x = Scale(0.0, x_ticks[-1], LEFT, WIDTH - RIGHT)
    y = Scale(y_ticks[0], y_ticks[-1], HEIGHT - BOTTOM, TOP)
    parts = [_open(title), *_bands(bands, x, HEIGHT - BOTTOM), *_grid(x, y, x_ticks, y_ticks, y_format, axis),
             _y_label(y_label), *_moments(moments, x, HEIGHT - BOTTOM)]
    for line in lines:
        path = " ".join(f"{x(px):.1f},{y(py):.1f}" for px, py in line.points)
        dash = ' stroke-dasharray="6 4"' if line.dashed else ""
        if len(line.points) == 1:
            px, py = line.points[0]
            parts.append(f'<circle cx="{x(px):.1f}" cy="{y(py):.1f}" r="3" fill="{line.colour}"/>')
        else:
            parts.append(f'<polyline points="{path}" fill="none" stroke="{line.colour}" stroke-width="2"'
                         f'{dash} stroke-linejoin="round"><title>{escape(line.name)}</title></polyline>')
    return "".join(parts) + "</svg>" + legend(lines)


def lane_chart(marks: Sequence[Mark], lanes: Sequence[tuple[str, str]], *, title: str, x_high: float,
               bands: Sequence[Band] = ()) -> str:
    """Marks over time in horizontal lanes (`lanes`: name and colour, top to bottom); each mark has a tooltip."""
    x_ticks = time_ticks(x_high)
    x = Scale(0.0, x_ticks[-1], LEFT, WIDTH - RIGHT)
    lane_height = 28
    height = TOP + PHASE_ROW * bool(bands) + lane_height * len(lanes) + BOTTOM
    parts = [_open(title, height), *_bands(bands, x, height - BOTTOM)]
    for tick in x_ticks:
        parts.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{TOP}" y2="{height - BOTTOM}" '
                     'class="grid"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{height - BOTTOM + 16}" text-anchor="middle">'
                     f"{escape(clock(tick))}</text>")
    # The phases' names take a row of their own above the lanes, so no mark covers them.
    rows = {name: TOP + PHASE_ROW * bool(bands) + lane_height * (index + 0.5) for index, (name, _) in enumerate(lanes)}
    colours = dict(lanes)
    for name, middle in rows.items():
        parts.append(f'<text x="{LEFT - 8}" y="{middle + 4:.1f}" text-anchor="end">{escape(name)}</text>')
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{middle:.1f}" y2="{middle:.1f}" class="lane"/>')
    for mark in marks:
        parts.append(f'<circle cx="{x(mark.x):.1f}" cy="{rows[mark.lane]:.1f}" r="6" fill="{colours[mark.lane]}" '
                     f'fill-opacity="0.8" stroke="#fff"><title>{escape(mark.tip)}</title></circle>')
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2:.0f}" y="{height - 4}" text-anchor="middle" class="axis">'
                 "time since the run started</text>")
    return "".join(parts) + "</svg>"


def _bands(bands: Sequence[Band], x: Scale, bottom: float) -> list[str]:
    """The phases shaded in turn across the plot, each named at its top left where its name fits."""
    if not bands:
        return []
    parts = ['<g class="phases">']
    for index, band in enumerate(bands):
        left, right = x(band.start), x(max(band.start, band.end))
        name = escape(band.name)
        parts.append(f'<rect class="phase phase-{index % 2}" data-phase="{name}" x="{left:.1f}" y="{TOP}" '
                     f'width="{max(right - left, 1.0):.1f}" height="{bottom - TOP:.1f}">'
                     f"<title>{name}: {instant(band.start, x.high)} to {instant(band.end, x.high)}</title></rect>")
        parts.append(f'<line class="phase-edge" x1="{left:.1f}" x2="{left:.1f}" y1="{TOP}" y2="{bottom:.1f}"/>')
        if right - left >= LABEL_EM * len(band.name) + 8:
            parts.append(f'<text class="phase-label" x="{left + 4:.1f}" y="{TOP + 12}">{name}</text>')
    parts.append("</g>")
    return parts


def _moments(moments: Sequence[Moment], x: Scale, bottom: float) -> list[str]:
    """A short tick above the axis at each moment, its tooltip saying what happened."""
    if not moments:
        return []
    ticks = "".join(f'<path class="moment" d="M{x(moment.x):.1f} {bottom:.1f}v-10"><title>{escape(moment.tip)}'
                    "</title></path>" for moment in moments)
    return [f'<g class="moments">{ticks}</g>']


def _open(title: str, height: int = HEIGHT) -> str:
    # Inline SVG in HTML needs no namespace declaration: the page holds no URL at all.
    return (f'<svg viewBox="0 0 {WIDTH} {height}" role="img" '
            f'aria-label="{escape(title)}" class="chart"><title>{escape(title)}</title>')


def _grid(x: Scale, y: Scale, x_ticks: list[float], y_ticks: list[float], y_format: Format,
          axis: Axis) -> list[str]:
    parts = []
    for tick in y_ticks:
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" class="grid"/>')
        parts.append(f'<text x="{LEFT - 8}" y="{y(tick) + 4:.1f}" text-anchor="end">{escape(y_format(tick))}</text>')
    for tick in x_ticks:
        parts.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" class="grid"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">'
                     f"{escape(axis.format(tick))}</text>")
    parts.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" class="axis-line"/>')
    parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{HEIGHT - BOTTOM}" y2="{HEIGHT - BOTTOM}" '
                 'class="axis-line"/>')
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2:.0f}" y="{HEIGHT - 4}" text-anchor="middle" class="axis">'
                 f"{escape(axis.label)}</text>")
    return parts


def _y_label(label: str) -> str:
    middle = (TOP + HEIGHT - BOTTOM) / 2
    return (f'<text x="14" y="{middle:.0f}" text-anchor="middle" transform="rotate(-90 14 {middle:.0f})" '
            f'class="axis">{escape(label)}</text>')


def legend(lines: Sequence[Line]) -> str:
    """The lines' names under the chart (HTML, so a long name wraps instead of covering the lines)."""
    items = "".join(f'<span class="key"><span class="swatch{" dashed" if line.dashed else ""}" '
                    f'style="border-color:{line.colour}"></span>{escape(line.name)}</span>' for line in lines)
    return f'<div class="legend">{items}</div>'

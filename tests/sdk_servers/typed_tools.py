"""The typed tools both SDK typed servers serve (mcp 1.x FastMCP and mcp 2.x MCPServer), defined once.

`Literal` enums, `Field` bounds, a list with `max_length`, optional arguments with defaults and a
nested pydantic model argument; results are a pydantic model, `dict[str, int]`, a `TypedDict` and a
bare `float` (wrapped as `{"result": ...}`). Everything is in memory and deterministic; no tool
touches the network or the file system. Only pydantic is needed, so either SDK's venv imports it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

# name -> tags; a fixed in-memory catalogue
CATALOG: dict[str, list[str]] = {
    "apple": ["fruit", "red"],
    "banana": ["fruit", "yellow"],
    "cherry": ["fruit", "red"],
    "carrot": ["vegetable", "orange"],
    "pepper": ["vegetable", "red"],
    "lemon": ["fruit", "yellow"],
}
UNITS: dict[str, float] = {"m": 1.0, "cm": 0.01, "mm": 0.001}

class SearchResult(BaseModel):
    results: list[str]
    count: int


class Point(BaseModel):
    x: Annotated[int, Field(ge=-1000, le=1000)]
    y: Annotated[int, Field(ge=-1000, le=1000)]


class Size(BaseModel):
    width: Annotated[int, Field(ge=0, le=1000)]
    height: Annotated[int, Field(ge=0, le=1000)]


class Box(BaseModel):
    origin: Point
    size: Size
    label: Annotated[str, Field(max_length=40)] = ""


class BoxInfo(TypedDict):
    area: int
    perimeter: int
    corners: list[list[int]]


def search_catalog(
    query: Annotated[str, Field(min_length=1, max_length=100)],
    limit: Annotated[int, Field(ge=1, le=10)] = 3,
    sort: Literal["relevance", "name"] = "relevance",
    tags: Annotated[list[Annotated[str, Field(max_length=20)]], Field(max_length=5)] | None = None,
) -> SearchResult:
    """Find catalogue entries whose name contains the query and that carry every given tag."""
    needle = query.casefold()
    hits = [name for name, labels in CATALOG.items() if needle in name and all(t in labels for t in tags or [])]
    if sort == "relevance":
        hits.sort(key=lambda name: (name.find(needle), name))
    else:
        hits.sort()
    return SearchResult(results=hits[:limit], count=len(hits[:limit]))


def word_counts(text: Annotated[str, Field(max_length=1000)]) -> dict[str, int]:
    """Count the words (split on whitespace, case-folded) of a text."""
    counts: dict[str, int] = {}
    for word in text.casefold().split():
        counts[word] = counts.get(word, 0) + 1
    return counts


def measure_box(box: Box) -> BoxInfo:
    """Area, perimeter and corners of an axis-aligned box."""
    x, y, w, h = box.origin.x, box.origin.y, box.size.width, box.size.height
    corners = [[x, y], [x + w, y], [x + w, y + h], [x, y + h]]
    return BoxInfo(area=w * h, perimeter=2 * (w + h), corners=corners)


def convert_length(
    value: Annotated[float, Field(ge=0, le=1_000_000)],
    unit: Literal["m", "cm", "mm"],
    to: Literal["m", "cm", "mm"] = "m",
) -> float:
    """Convert a length between metres, centimetres and millimetres."""
    return value * UNITS[unit] / UNITS[to]


TOOLS = (search_catalog, word_counts, measure_box, convert_length)


def register(app: Any) -> None:
    """Register every tool with a FastMCP (1.x) or MCPServer (2.x) app."""
    for tool in TOOLS:
        app.tool()(tool)

"""A server on the real `mcp` 2.x SDK (MCPServer) whose surface drifts with MCPFUZZ_DRIFT, for `mcpfuzz snapshot`.

Run with the venv that has mcp 2.x: .venv/bin/python tests/sdk_servers/sdk2_drift_server.py
MCPFUZZ_DRIFT picks the release: unset (the first one), `cosmetic` (only descriptions and titles changed),
`compatible` (a tool, an optional argument and a resource added, a type widened) or `breaking` (what a client that
cached the first release breaks on: a tool removed, a new required argument, a type narrowed, an enum value
removed, a read-only tool no longer read-only, an output field removed, a prompt and a prompt argument changed).
"""

from __future__ import annotations

import os
from typing import Literal, TypedDict

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

DRIFT = os.environ.get("MCPFUZZ_DRIFT", "")
COSMETIC, COMPATIBLE, BREAKING = DRIFT == "cosmetic", DRIFT == "compatible", DRIFT == "breaking"
NOTES = {"welcome": "Hello.", "readme": "Read me first."}

app = MCPServer("sdk2-drift-server", version={"cosmetic": "1.0.1", "compatible": "1.1.0",
                                                "breaking": "2.0.0"}.get(DRIFT, "1.0.0"))
READ_ONLY = ToolAnnotations(readOnlyHint=True)


class Hits(TypedDict):
    hits: list[str]
    total: int


class FewHits(TypedDict):
    hits: list[str]


if BREAKING:
    @app.tool(description="Search the notes.")
    def search(query: str, lang: str, mode: Literal["fast"] = "fast") -> FewHits:
        return {"hits": [key for key in NOTES if query in key]}
else:
    @app.tool(description="Search the notes for a word." if COSMETIC else "Search the notes.",
              annotations=READ_ONLY)
    def search(query: str, mode: Literal["fast", "full"] = "fast", limit: int = 10) -> Hits:
        hits = [key for key in NOTES if query in key][:limit]
        return {"hits": hits, "total": len(hits)}

    @app.tool(description="Delete a note.", annotations=ToolAnnotations(destructiveHint=True))
    def delete_note(key: str) -> str:
        return "deleted" if NOTES.pop(key, None) is not None else "no such note"

if BREAKING:
    @app.tool(description="Scale a number.")
    def scale(factor: int) -> str:
        return str(factor * 2)
elif COMPATIBLE:
    @app.tool(description="Scale a number.")
    def scale(factor: float | str, precision: int = 2) -> str:
        return str(round(float(factor) * 2, precision))
else:
    @app.tool(description="Scale a number by two." if COSMETIC else "Scale a number.")
    def scale(factor: float) -> str:
        return str(factor * 2)

if COMPATIBLE:
    @app.tool(description="Archive a note.", annotations=READ_ONLY)
    def archive_note(key: str) -> str:
        return f"archived {key}" if key in NOTES else "no such note"

    @app.resource("notes://static/readme", name="readme", mime_type="text/plain")
    def readme() -> str:
        return NOTES["readme"]


@app.resource("notes://static/welcome", name="welcome", mime_type="text/plain",
              description="The welcome note, as shown first." if COSMETIC else "The welcome note.")
def welcome() -> str:
    return NOTES["welcome"]


@app.resource("notes://by-title/{title}", name="note by title", mime_type="text/plain")
def by_title(title: str) -> str:
    return NOTES.get(title, "(no such note)")


if BREAKING:
    @app.prompt(description="Summarize the notes on a topic.")
    def summarize(topic: str, audience: str, style: str = "brief") -> str:
        return f"Summarize the notes on {topic} for {audience}, {style}."
else:
    @app.prompt(description="Summarize the notes on a topic.")
    def summarize(topic: str, style: str = "brief") -> str:
        return f"Summarize the notes on {topic}, {style}."

    @app.prompt(description="A greeting.")
    def greet() -> str:
        return "Hello!"


if __name__ == "__main__":
    app.run()

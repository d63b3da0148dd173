"""Resources, a resource template, prompts, a completion handler and two read-only tools, registered the same
way on both SDKs.

mcp 1.x FastMCP and mcp 2.x MCPServer share the decorators used here (`resource`, `prompt`,
`completion`); the handlers are plain and deterministic (an in-memory dict), so either SDK serves them
as written and every finding on them is the SDK's own behaviour.
"""

from __future__ import annotations

from typing import Any

from mcp.types import Completion, PromptReference, ResourceTemplateReference, ToolAnnotations

NOTES = {"welcome": "Hello.", "readme": "Read me first."}
STYLES = ["brief", "detailed", "bullet points"]


def register(app: Any) -> None:
    """Two static resources, the template notes://by-title/{title}, two prompts and completions for both, and
    two tools annotated read-only (called at once by the concurrency case)."""

    @app.tool(description="How many notes there are.", annotations=ToolAnnotations(readOnlyHint=True))
    def count_notes() -> str:
        return f"{len(NOTES)} notes"

    @app.tool(description="The notes whose key starts with a prefix.",
              annotations=ToolAnnotations(readOnlyHint=True))
    def find_notes(prefix: str) -> str:
        return ", ".join(key for key in NOTES if key.startswith(prefix)) or "no note"

    @app.resource("notes://static/welcome", name="welcome", mime_type="text/plain")
    def welcome() -> str:
        return NOTES["welcome"]

    @app.resource("notes://static/readme", name="readme", mime_type="text/plain")
    def readme() -> str:
        return NOTES["readme"]

    @app.resource("notes://by-title/{title}", name="note by title", mime_type="text/plain")
    def by_title(title: str) -> str:
        return NOTES.get(title, "(no such note)")

    @app.prompt(description="Summarize the notes on a topic.")
    def summarize(topic: str, style: str = "brief") -> str:
        return f"Summarize the notes on {topic}, {style}."

    @app.prompt(description="A greeting.")
    def greet() -> str:
        return "Hello!"

    @app.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> Completion | None:
        if isinstance(ref, PromptReference) and argument.name == "style":
            return Completion(values=[s for s in STYLES if s.startswith(argument.value)])
        if isinstance(ref, ResourceTemplateReference) and argument.name == "title":
            return Completion(values=[t for t in NOTES if t.startswith(argument.value)])
        return None

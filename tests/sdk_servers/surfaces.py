"""Resources, a resource template, prompts and a completion handler, registered the same way on both SDKs.

mcp 1.x FastMCP and mcp 2.x MCPServer share the decorators used here (`resource`, `prompt`,
`completion`); the handlers are plain and deterministic (an in-memory dict), so either SDK serves them
as written and every finding on them is the SDK's own behaviour.
"""

from __future__ import annotations

from typing import Any

from mcp.types import Completion, PromptReference, ResourceTemplateReference

NOTES = {"welcome": "Hello.", "readme": "Read me first."}
STYLES = ["brief", "detailed", "bullet points"]


def register(app: Any) -> None:
    """Two static resources, the template notes://by-title/{title}, two prompts and completions for both."""

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

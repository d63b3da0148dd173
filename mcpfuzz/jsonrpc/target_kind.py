"""Kinds of call target: the prefix of a target's name in reports, corpus file names and a soak's schedule."""

from __future__ import annotations

from enum import Enum


class TargetKind(str, Enum):
    """A kind of target; a case that calls one has the kind's value as its family and the target's name as id."""

    TOOL = "tool"  # tools/call of a listed tool
    RESOURCE = "resource"  # resources/read of a listed URI
    TEMPLATE = "template"  # resources/read of URIs expanded from a listed URI template
    PROMPT = "prompt"  # prompts/get of a listed prompt
    COMPLETION = "completion"  # completion/complete of one prompt argument or template variable
    METHOD = "method"  # a plain JSON-RPC 2.0 method declared by an OpenRPC document

    def label(self, name: str) -> str:
        """The target's name in reports: `tool/NAME`."""
        return f"{self.value}/{name}"
